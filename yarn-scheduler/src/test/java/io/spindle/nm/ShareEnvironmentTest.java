package io.spindle.nm;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.GpuSharing;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ShareEnvironmentTest {

  @Test
  void mpsPercentageRoundsUpAndIsNeverZero() {
    assertThat(ShareEnvironment.percentage(1)).isEqualTo(1);
    assertThat(ShareEnvironment.percentage(10)).isEqualTo(1);
    assertThat(ShareEnvironment.percentage(11)).isEqualTo(2);
    assertThat(ShareEnvironment.percentage(125)).isEqualTo(13);
    assertThat(ShareEnvironment.percentage(250)).isEqualTo(25);
    assertThat(ShareEnvironment.percentage(1000)).isEqualTo(100);
  }

  @Test
  void memoryFromTheComputeFractionRoundsDown() {
    assertThat(ShareEnvironment.memoryFraction(250, 81_559)).isEqualTo(20_389);
    assertThat(ShareEnvironment.memoryFraction(1, 500)).isEqualTo(1);
    assertThat(ShareEnvironment.memoryFraction(250, 0)).isZero();
  }

  @Test
  void mpsWithAndWithoutAMemoryAmount() {
    assertThat(ShareEnvironment.of(GpuSharing.MPS, 250, 10_240, 81_559, "", "")).containsExactly(
        Map.entry("SPINDLE_GPU_SHARING", "mps"), Map.entry("SPINDLE_GPU_MILLI", "250"),
        Map.entry("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "25"),
        Map.entry("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=10240M"),
        Map.entry("SPINDLE_GPU_MEMORY_MB", "10240"));
    assertThat(ShareEnvironment.of(GpuSharing.MPS, 500, 0, 81_559, "/run/mps", "/var/log/mps"))
        .containsEntry("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=40779M")
        .containsEntry("CUDA_MPS_PIPE_DIRECTORY", "/run/mps")
        .containsEntry("CUDA_MPS_LOG_DIRECTORY", "/var/log/mps");
    assertThat(ShareEnvironment.of(GpuSharing.MPS, 500, 0, 0, "", ""))
        .doesNotContainKey("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT").containsEntry("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
            "50");
  }

  @Test
  void timeSliceSetsNoLimits() {
    assertThat(ShareEnvironment.of(GpuSharing.TIME_SLICE, 300, 10_240, 81_559, "/run/mps", "")).containsExactly(
        Map.entry("SPINDLE_GPU_SHARING", "time-slice"), Map.entry("SPINDLE_GPU_MILLI", "300"));
  }
}
