package io.spindle.sim;

import io.spindle.sim.Stats.Distribution;
import java.util.List;
import java.util.Map;

/**
 * What one policy's replay measured. Times in seconds; GPU quantities in GPUs (GPU-equivalents where MIG
 * instances are involved); shares as fractions of the cluster.
 */
public record RunResult(String policy, String implementation, Jobs jobs, Distribution jct,
    Distribution queueDelay, double waitedFraction, double[] queueDelayPercentiles, double[] jctPercentiles,
    Utilisation utilisation, Fairness fairness, Gangs gangs, Mig mig, Bounds bounds, double workLostGpuHours,
    List<QueueResult> queues, TimeSeries series) {

  /** Counts: submitted (after filtering), finished, rejected by the engine, and never started or never ended. */
  public record Jobs(int submitted, int finished, int rejected, int unfinished, long engineCycles) {}

  /**
   * @param busy GPU-time of running jobs over capacity x makespan
   * @param held GPU-time of allocated containers (also those of jobs still waiting for the rest of their gang)
   * @param makespanSeconds first submission to last job end (or to the last event when some never end)
   */
  public record Utilisation(double busy, double held, double makespanSeconds, double busyGpuHours) {}

  /**
   * Per-queue dominant share of the cluster against the H-DRF fair share of the cluster's queue configuration (with
   * its borrowing), over the time some queue has demand.
   *
   * @param maxDeviation the largest |share - fair share| of any queue at any moment
   * @param meanDeviation time-average of the mean |share - fair share| over queues with demand
   * @param jainIndex time-average of Jain's index of share / fair share over queues with demand
   */
  public record Fairness(double maxDeviation, double meanDeviation, double jainIndex, double contendedSeconds) {}

  /** GPU-hours held by jobs that hold some, not all, of their containers; how many jobs ever were in that state. */
  public record Gangs(double partialGpuHours, int jobsEverPartial, int jobsPartialAtEnd) {}

  /**
   * @param slices memory slices of MIG-mode GPUs in the cluster (0: no MIG)
   * @param strandedSlicesMean time-average of unheld slices on busy MIG GPUs while a MIG request waits
   * @param heldSlicesMean time-average of held slices
   */
  public record Mig(long slices, double strandedSlicesMean, double heldSlicesMean, int repartitions) {}

  /**
   * @param meanDuration the JCT no policy can beat: every job starts on arrival
   * @param gpuTimeOverCapacitySeconds total GPU-time of the jobs over the cluster's GPUs: no schedule finishes the
   *     work in less
   * @param offeredLoad GPU-time over capacity x the span of submissions
   */
  public record Bounds(double meanDuration, double gpuTimeOverCapacitySeconds, double offeredLoad) {}

  public record QueueResult(String queue, int jobs, int finished, Distribution jct, Distribution queueDelay,
      double guaranteeShare, double meanShare, double meanFairShare, double meanAbsDeviation) {}

  /** Downsampled time series, one value per bucket of {@code bucketSeconds} starting at {@code startSeconds}. */
  public record TimeSeries(long startEpochSeconds, double bucketSeconds, double[] busyGpus, double[] heldGpus,
      double[] waitingJobs, Map<String, double[]> queueGpus, Map<String, double[]> queueFairGpus) {}
}
