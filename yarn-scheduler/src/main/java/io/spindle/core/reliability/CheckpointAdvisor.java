package io.spindle.core.reliability;

import java.util.OptionalLong;

/**
 * Computes {@link CheckpointAdvice} from the cluster's observations, with the prior and the write time assumed for
 * applications that report none.
 *
 * @param prior the failure rate assumed before the cluster has seen enough itself
 *     ({@code yarn.scheduler.spindle.reliability.prior-failures-per-gpu-hour}, {@code ...prior-gpu-hours})
 * @param defaultWriteMillis the checkpoint write time of an application that reported none
 *     ({@code yarn.scheduler.spindle.checkpoint.default-write-seconds})
 */
public record CheckpointAdvisor(FailureRate prior, long defaultWriteMillis) {

  /**
   * A minute: a large model's sharded checkpoint to a parallel file system or object store takes tens of seconds to
   * minutes; guessing long errs on the side of checkpointing less often, which costs less than writing too often when
   * the guess is wrong by the same factor (the waste grows with the square root of the write time).
   */
  public static final long DEFAULT_WRITE_MILLIS = 60_000;

  public CheckpointAdvisor {
    if (prior == null) {
      throw new IllegalArgumentException("prior must be given");
    }
    if (defaultWriteMillis < 0) {
      throw new IllegalArgumentException("default write time must not be negative: " + defaultWriteMillis);
    }
  }

  public static CheckpointAdvisor defaults() {
    return new CheckpointAdvisor(FailureRate.defaults(), DEFAULT_WRITE_MILLIS);
  }

  /**
   * The advice for a job on {@code gpus} GPUs ({@code held}: by its running containers, else asked for) whose
   * checkpoints take {@code writeMillis} to write, if it said, as of {@code nowMillis}.
   */
  public CheckpointAdvice advise(FailureObservations seen, long nowMillis, int gpus, boolean held,
      OptionalLong writeMillis) {
    double gpuHours = seen.exposureGpuHours(nowMillis);
    double rate = prior.perGpuHour(seen.failures(), gpuHours);
    double mtbf = FailureRate.mtbfMillis(rate, gpus);
    long write = writeMillis.orElse(defaultWriteMillis);
    return new CheckpointAdvice(CheckpointInterval.dalyMillis(write, mtbf), mtbf, rate, gpus, write,
        new CheckpointAdvice.Evidence(seen.failures(), gpuHours, prior, writeMillis.isPresent(), held));
  }
}
