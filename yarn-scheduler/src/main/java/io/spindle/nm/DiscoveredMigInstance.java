package io.spindle.nm;

import io.spindle.core.model.MigPlacement;

/**
 * One MIG GPU instance found on a GPU.
 *
 * @param gpuIndex the index of the GPU it lives on
 * @param uuid the MIG device UUID a container is given ({@code MIG-...}), or {@code null} for a GPU instance
 *     without a compute instance: it still occupies its memory slices but cannot run anything
 * @param computeInstanceId -1 when the GPU instance has no compute instance
 * @param busy a process runs on it now
 */
public record DiscoveredMigInstance(
    int gpuIndex, String uuid, MigPlacement placement, int gpuInstanceId, int computeInstanceId, boolean busy) {

  /** Whether a container can be given this instance: it has a compute instance and so a device UUID. */
  public boolean usable() {
    return uuid != null;
  }

  public String profileName() {
    return placement.profile().name();
  }
}
