package io.spindle.core.model;

/** One MIG instance on a GPU: a profile at a memory-slice start, as NVML's {@code start:size} placement. */
public record MigPlacement(MigProfile profile, int start) {

  public int sliceMask() {
    return profile.sliceMask(start);
  }

  @Override
  public String toString() {
    return profile.name() + "@" + start;
  }
}
