package io.spindle.nm;

import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import java.util.List;
import java.util.Optional;

/**
 * One GPU as discovery found it. A MIG-mode GPU's instances always form a legal {@link MigLayout}: discovery drops
 * a GPU whose reported layout is not.
 *
 * @param index the device index ({@code nvidia-smi -i <index>}, {@code GPU n} in {@code nvidia-smi -L})
 * @param nvlinkIsland GPUs with the same number are joined by NVLink
 * @param minorNumber the {@code /dev/nvidia<minor>} device number, -1 when unknown
 * @param busy a process runs on the GPU (or on any of its MIG instances) now
 * @param memoryMb the GPU's memory as nvidia-smi reports it (MiB), 0 when it does not
 * @param sharing how the admin configured the GPU to be shared; always exclusive in MIG mode
 */
public record DiscoveredGpu(int index, String uuid, GpuModel model, boolean migEnabled, int nvlinkIsland,
    int minorNumber, String busId, boolean busy, List<DiscoveredMigInstance> migInstances, long memoryMb,
    GpuSharing sharing) {

  public DiscoveredGpu {
    migInstances = List.copyOf(migInstances);
    sharing = sharing == null || migEnabled ? GpuSharing.EXCLUSIVE : sharing;
  }

  /** An exclusive GPU of unknown memory. */
  public DiscoveredGpu(int index, String uuid, GpuModel model, boolean migEnabled, int nvlinkIsland,
      int minorNumber, String busId, boolean busy, List<DiscoveredMigInstance> migInstances) {
    this(index, uuid, model, migEnabled, nvlinkIsland, minorNumber, busId, busy, migInstances, 0,
        GpuSharing.EXCLUSIVE);
  }

  /** This GPU in another NVLink island (discovery renumbers islands when the topology is unknown). */
  public DiscoveredGpu inIsland(int island) {
    return new DiscoveredGpu(index, uuid, model, migEnabled, island, minorNumber, busId, busy, migInstances,
        memoryMb, sharing);
  }

  /** Whether containers may take shares of it: outside MIG mode and configured time-slice or mps. */
  public boolean shared() {
    return !migEnabled && sharing.shares();
  }

  /**
   * The memory a share's amount is measured against: what the scheduler's catalog says (so both sides count the
   * same GPU), or what nvidia-smi reports when the catalog has no figure.
   */
  public long shareableMemoryMb() {
    return model.memoryMb() > 0 ? model.memoryMb() : memoryMb;
  }

  /** The GPU's MIG instances as a core layout; {@code null} for a GPU without MIG mode, which has no layout. */
  public MigLayout layout() {
    if (!migEnabled) {
      return null;
    }
    return MigLayout.of(model, migInstances.stream().map(DiscoveredMigInstance::placement).toList());
  }

  /** The instance whose memory slices start at {@code start}, if any. */
  public Optional<DiscoveredMigInstance> instanceAt(int start) {
    return migInstances.stream().filter(i -> i.placement().start() == start).findFirst();
  }

  /** This GPU as the scheduler's core model sees it. */
  public Gpu toGpu() {
    return migEnabled ? new Gpu(index, model, nvlinkIsland, true) : Gpu.shared(index, model, nvlinkIsland, sharing);
  }

  /** Placements as {@code profile@start}, for log lines. */
  public List<MigPlacement> placements() {
    return migInstances.stream().map(DiscoveredMigInstance::placement).toList();
  }
}
