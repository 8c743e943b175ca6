package io.spindle.core.engine;

import io.spindle.core.placement.MigSlices;
import java.util.Map;

/**
 * Figures about the engine as of the end of a cycle, for metrics adapters: plain values, so the core needs no
 * metrics library and a reader on another thread never touches the engine.
 *
 * @param pendingGangs gang requests with containers still to place
 * @param oldestPendingGangAgeMillis how long the application of the oldest such gang has been submitted (0: none)
 * @param reservations gangs holding nodes while they wait
 * @param totalGpus GPUs the cluster has (MIG-partitioned GPUs count whole)
 * @param freeWholeGpus unpartitioned GPUs with nothing on them
 * @param freeMigInstances free MIG instances by profile name
 * @param migSlices memory slices of MIG-mode GPUs: all, held, stranded
 * @param pendingContainers containers asked for and not yet placed
 * @param runningContainers containers the engine has allocated
 * @param gpuService GPUs out of service or degraded, and the failures seen
 */
public record EngineStats(int pendingGangs, long oldestPendingGangAgeMillis, int reservations, double totalGpus,
    int freeWholeGpus, Map<String, Integer> freeMigInstances, MigSlices migSlices, long pendingContainers, int runningContainers,
    long oldestReservationAgeMillis, GpuServiceCounts gpuService) {

  /**
   * @param out GPUs that take nothing new (failed, quarantined or cordoned)
   * @param degraded GPUs that take no new gang member
   * @param quarantined GPUs held out after repeated failures (counted in {@code out} too)
   * @param failures GPU failures counted (kept across failovers: what the checkpoint interval advice learns from)
   */
  public record GpuServiceCounts(int out, int degraded, int quarantined, long failures) {
    public static final GpuServiceCounts NONE = new GpuServiceCounts(0, 0, 0, 0);
  }

  public EngineStats {
    freeMigInstances = Map.copyOf(freeMigInstances);
    gpuService = gpuService == null ? GpuServiceCounts.NONE : gpuService;
  }

  /** Figures with no GPU out of service. */
  public EngineStats(int pendingGangs, long oldestPendingGangAgeMillis, int reservations, double totalGpus,
      int freeWholeGpus, Map<String, Integer> freeMigInstances, MigSlices migSlices, long pendingContainers,
      int runningContainers, long oldestReservationAgeMillis) {
    this(pendingGangs, oldestPendingGangAgeMillis, reservations, totalGpus, freeWholeGpus, freeMigInstances, migSlices,
        pendingContainers, runningContainers, oldestReservationAgeMillis, GpuServiceCounts.NONE);
  }

  EngineStats withGpuService(GpuServiceCounts counts) {
    return new EngineStats(pendingGangs, oldestPendingGangAgeMillis, reservations, totalGpus, freeWholeGpus,
        freeMigInstances, migSlices, pendingContainers, runningContainers, oldestReservationAgeMillis, counts);
  }

  public static final EngineStats EMPTY = new EngineStats(0, 0, 0, 0, 0, Map.of(), MigSlices.NONE, 0, 0, 0);
}
