package io.spindle.core.placement;

import io.spindle.core.model.MigPlacement;

/**
 * One device a container gets: a whole GPU ({@code mig == null}) or a MIG instance on it.
 *
 * @param gpuIndex the GPU's index on its node
 */
public record GpuSlot(int gpuIndex, MigPlacement mig) {

  public static GpuSlot whole(int gpuIndex) {
    return new GpuSlot(gpuIndex, null);
  }

  @Override
  public String toString() {
    return mig == null ? "gpu" + gpuIndex : "gpu" + gpuIndex + ":" + mig;
  }
}
