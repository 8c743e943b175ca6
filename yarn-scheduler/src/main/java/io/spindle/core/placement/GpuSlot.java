package io.spindle.core.placement;

import io.spindle.core.model.MigPlacement;

/**
 * One device a container gets: a whole GPU, a MIG instance on it ({@code mig != null}), or a share of it
 * ({@code share}; how much is the container's shape).
 *
 * @param gpuIndex the GPU's index on its node
 */
public record GpuSlot(int gpuIndex, MigPlacement mig, boolean share) {

  public GpuSlot {
    if (share && mig != null) {
      throw new IllegalArgumentException("a slot is a MIG instance or a share, not both");
    }
  }

  public GpuSlot(int gpuIndex, MigPlacement mig) {
    this(gpuIndex, mig, false);
  }

  public static GpuSlot whole(int gpuIndex) {
    return new GpuSlot(gpuIndex, null, false);
  }

  public static GpuSlot shareOf(int gpuIndex) {
    return new GpuSlot(gpuIndex, null, true);
  }

  public boolean wholeGpu() {
    return mig == null && !share;
  }

  @Override
  public String toString() {
    return share ? "gpu" + gpuIndex + ":share" : mig == null ? "gpu" + gpuIndex : "gpu" + gpuIndex + ":" + mig;
  }
}
