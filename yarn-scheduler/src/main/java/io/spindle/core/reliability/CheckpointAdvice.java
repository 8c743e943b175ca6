package io.spindle.core.reliability;

import java.util.Locale;

/**
 * How often an application should checkpoint, and on what evidence: Daly's interval ({@link CheckpointInterval}) for
 * the mean time between failures of the GPUs it runs on, at the failure rate the cluster has seen
 * ({@link FailureRate} over {@link FailureObservations}), and the time its checkpoints take to write.
 *
 * @param intervalMillis compute time between the end of one checkpoint write and the start of the next
 * @param mtbfMillis the mean time between failures of a job on {@code gpus} GPUs
 * @param failuresPerGpuHour the posterior failure rate
 * @param gpus the GPUs the advice is for (whole-GPU equivalents, rounded up)
 * @param writeMillis how long a checkpoint takes to write
 * @param evidence where the figures came from, for {@link #basis}
 */
public record CheckpointAdvice(long intervalMillis, double mtbfMillis, double failuresPerGpuHour, int gpus,
    long writeMillis, Evidence evidence) {

  /**
   * @param failuresSeen GPU failures the cluster counted
   * @param gpuHoursSeen GPU-hours the cluster's GPUs were in service
   * @param prior what was assumed before
   * @param writeReported whether {@code writeMillis} is the application's own report (else the configured default)
   * @param gpusHeld whether {@code gpus} are held by running containers (else asked for by waiting requests)
   */
  public record Evidence(long failuresSeen, double gpuHoursSeen, FailureRate prior, boolean writeReported,
      boolean gpusHeld) {}

  /** The figures and where they came from, in one sentence for people. */
  public String basis() {
    return String.format(Locale.ROOT, "Daly's optimum for the %d GPU(s) it %s: %.3g failures per GPU-hour (prior %.3g"
        + " worth %.0f GPU-hours, with %d GPU failure(s) in %.0f GPU-hours seen here) give a mean time between"
        + " failures of %.1f h; a checkpoint write takes %d s (%s)", gpus, evidence.gpusHeld() ? "holds" : "asks for",
        failuresPerGpuHour, evidence.prior().priorPerGpuHour(), evidence.prior().priorGpuHours(),
        evidence.failuresSeen(), evidence.gpuHoursSeen(), mtbfMillis / 3_600_000.0, Math.round(writeMillis / 1000.0),
        evidence.writeReported() ? "as the application reported" : "the default: the application reported none");
  }
}
