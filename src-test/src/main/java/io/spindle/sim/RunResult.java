package io.spindle.sim;

import io.spindle.sim.Stats.Distribution;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one policy's replay measured. Times in seconds; GPU quantities in GPUs (GPU-equivalents where MIG
 * instances are involved); shares as fractions of the cluster.
 */
public record RunResult(String policy, String implementation, Jobs jobs, Distribution jct,
    Distribution queueDelay, double waitedFraction, double[] queueDelayPercentiles, double[] jctPercentiles,
    Utilisation utilisation, Fairness fairness, Gangs gangs, Mig mig, Bounds bounds, Preemption preemption,
    List<QueueResult> queues, TimeSeries series, StartAccuracy startAccuracy) {

  /**
   * How close the expected start times shown while jobs waited came to when they started ({@code --expected-start};
   * all zero without it). Each job counts once, with the first prediction made after its arrival cycle.
   *
   * @param predicted jobs that still waited after their arrival cycle
   * @param known of those, jobs with a known prediction that have started
   * @param unknown jobs whose prediction was unknown
   * @param exact of the known, those predicted from declared run times alone
   * @param medianAbsErrorSeconds median |actual start - predicted start| over the known
   * @param p90AbsErrorSeconds its 90th percentile
   * @param medianWaitSeconds median queueing delay (start - submit) of the same jobs, to compare the error with
   */
  public record StartAccuracy(int predicted, int known, int unknown, int exact, double medianAbsErrorSeconds,
      double p90AbsErrorSeconds, double medianWaitSeconds) {
    public static final StartAccuracy NONE = new StartAccuracy(0, 0, 0, 0, 0, 0, 0);
  }

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

  /**
   * Preemption under this policy and what it cost; zeros (and model {@code none}) under a policy that never preempts.
   *
   * @param model how the policy preempts and how the applications answer a notice, for people
   * @param notices victims noticed (a gang counts once)
   * @param withdrawn notices withdrawn before the kill (the request they were for started otherwise)
   * @param preemptions victims killed (a gang counts once)
   * @param preemptionsForUrgent of those, victims killed for an urgent job (the others for the trace's own queues)
   * @param jobsPreempted jobs killed at least once
   * @param workLostGpuHours GPU-time of the victims' progress since their last checkpoint, which they do again
   * @param checkpointGpuHours GPU-time victims spent writing a checkpoint on notice, making no progress
   * @param urgentWait queueing delay (first start - submit) of the injected urgent jobs; count 0 without them
   * @param urgentWaitByGpus the same by the jobs' GPU count, smallest first
   * @param urgentServedByPreemption urgent jobs for which the engine noticed victims
   * @param resizes times an elastic job grew or shrank while it ran (a shrink also counts as a notice, not as a
   *     preemption: the job runs on)
   * @param resizingGpuHours GPU-time elastic jobs spent re-forming at a new size (a checkpoint written to grow) or
   *     redoing work after a shrink that came at a deadline
   */
  public record Preemption(String model, long notices, long withdrawn, long preemptions, long preemptionsForUrgent,
      int jobsPreempted, double workLostGpuHours, double checkpointGpuHours, Stats.Tail urgentWait,
      Map<Integer, Stats.Tail> urgentWaitByGpus, int urgentServedByPreemption, long resizes,
      double resizingGpuHours) {

    public Preemption {
      urgentWaitByGpus = Collections.unmodifiableMap(new TreeMap<>(urgentWaitByGpus));
    }

    /** Work lost plus checkpoint writing: all the GPU-time preemption cost the victims. */
    public double wastedGpuHours() {
      return workLostGpuHours + checkpointGpuHours;
    }
  }

  public record QueueResult(String queue, int jobs, int finished, Distribution jct, Distribution queueDelay,
      double guaranteeShare, double meanShare, double meanFairShare, double meanAbsDeviation) {}

  /** Downsampled time series, one value per bucket of {@code bucketSeconds} starting at {@code startSeconds}. */
  public record TimeSeries(long startEpochSeconds, double bucketSeconds, double[] busyGpus, double[] heldGpus,
      double[] waitingJobs, Map<String, double[]> queueGpus, Map<String, double[]> queueFairGpus) {}
}
