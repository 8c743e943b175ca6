package io.spindle.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class GpuResourceNamesTest {

  private final GpuModelCatalog catalog = GpuModelCatalog.builtIn();

  @Test
  void namesFollowYarnAndNvidiaConventions() {
    assertThat(GpuResourceNames.WHOLE_GPU).isEqualTo("yarn.io/gpu");
    assertThat(GpuResourceNames.mig("3g.40gb")).isEqualTo("nvidia.com/mig-3g.40gb");
    assertThat(catalog.require("m", "H100-80GB").profile("3g.40gb").orElseThrow().resourceName())
        .isEqualTo(GpuResourceNames.mig("3g.40gb"));
    assertThat(GpuResourceNames.migProfile("nvidia.com/mig-1g.5gb", catalog)).isEqualTo("1g.5gb");
    assertThat(GpuResourceNames.isGpuResource("yarn.io/gpu")).isTrue();
    assertThat(GpuResourceNames.isWholeGpu("nvidia.com/gpu")).isTrue();
    assertThat(GpuResourceNames.isWholeGpu("nvidia.com/mig-1g.10gb")).isFalse();
    assertThat(GpuResourceNames.isGpuResource("memory-mb")).isFalse();
  }

  @Test
  void unknownProfilesAreRefusedWithTheResourceName() {
    assertThatThrownBy(() -> GpuResourceNames.migProfile("nvidia.com/mig-5g.50gb", catalog))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("nvidia.com/mig-5g.50gb").hasMessageContaining("unknown MIG profile");
    assertThatThrownBy(() -> GpuResourceNames.migProfile("nvidia.com/mig-", catalog))
        .isInstanceOf(InvalidInputException.class);
  }
}
