package io.spindle.nm;

import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
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
 */
public record DiscoveredGpu(int index, String uuid, GpuModel model, boolean migEnabled, int nvlinkIsland,
    int minorNumber, String busId, boolean busy, List<DiscoveredMigInstance> migInstances) {

  public DiscoveredGpu {
    migInstances = List.copyOf(migInstances);
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
    return new Gpu(index, model, nvlinkIsland, migEnabled);
  }

  /** Placements as {@code profile@start}, for log lines. */
  public List<MigPlacement> placements() {
    return migInstances.stream().map(DiscoveredMigInstance::placement).toList();
  }
}
