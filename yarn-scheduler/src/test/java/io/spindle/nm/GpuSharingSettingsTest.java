package io.spindle.nm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.model.GpuSharing;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GpuSharingSettingsTest {

  private static final String NODE = "yarn.nodemanager.spindle.gpu.sharing";
  private static final String PER_GPU = "yarn.nodemanager.spindle.gpu.sharing.per-gpu";

  @Test
  void nodeModeWithPerGpuOverrides() {
    GpuSharingSettings s = GpuSharingSettings.parse(NODE, "exclusive", PER_GPU, " 0:mps , 1:time-slice,2:MPS");

    assertThat(s.perGpu()).isEqualTo(Map.of(0, GpuSharing.MPS, 1, GpuSharing.TIME_SLICE, 2, GpuSharing.MPS));
    assertThat(s.modeOf(1)).isEqualTo(GpuSharing.TIME_SLICE);
    assertThat(s.modeOf(7)).isEqualTo(GpuSharing.EXCLUSIVE);
    assertThat(GpuSharingSettings.parse(NODE, "", PER_GPU, "")).isEqualTo(GpuSharingSettings.exclusive());
    assertThat(GpuSharingSettings.parse(NODE, "time-slice", PER_GPU, null).modeOf(0))
        .isEqualTo(GpuSharing.TIME_SLICE);
  }

  @Test
  void badValuesNameTheKeyAndTheValue() {
    assertThatThrownBy(() -> GpuSharingSettings.parse(NODE, "fractional", PER_GPU, ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(NODE + "=fractional").hasMessageContaining("use exclusive, time-slice or mps");
    assertThatThrownBy(() -> GpuSharingSettings.parse(NODE, "mps", PER_GPU, "0:mps,1:shared"))
        .hasMessageContaining(PER_GPU + " (GPU 1)=shared");
    assertThatThrownBy(() -> GpuSharingSettings.parse(NODE, "mps", PER_GPU, "gpu0:mps"))
        .hasMessageContaining(PER_GPU + "=gpu0:mps").hasMessageContaining("'gpu0' is not a GPU index");
    assertThatThrownBy(() -> GpuSharingSettings.parse(NODE, "mps", PER_GPU, "0=mps"))
        .hasMessageContaining(PER_GPU + "=0=mps").hasMessageContaining("is not <gpu index>:<mode>");
    assertThatThrownBy(() -> GpuSharingSettings.parse(NODE, "mps", PER_GPU, "-1:mps"))
        .hasMessageContaining("'-1' is not a GPU index");
    assertThatThrownBy(() -> GpuSharingSettings.parse(NODE, "mps", PER_GPU, "0:mps,0:time-slice"))
        .hasMessageContaining("GPU 0 is named twice");
  }
}
