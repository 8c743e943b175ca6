package io.spindle.core.queue;

/**
 * A queue's own preemption settings; {@code null} means "as the parent queue says", and at the top of the tree "as
 * the cluster setting says" (for {@code disabled}: not disabled; for {@code minRuntimeMillis}: none).
 *
 * @param maxExtensions how many times one checkpoint notice to an application of this queue may be extended
 * @param maxExtensionMillis the longest one extension may be
 * @param disabled CapacityScheduler's {@code disable_preemption}: no container of the queue (or of a queue below
 *     it that does not say otherwise) is ever a preemption victim
 * @param minRuntimeMillis how long work of the queue must have run since it last started before any preemption may
 *     take it: the guard against thrash (a job killed minutes after it started loses its start-up for nothing)
 * @param delayMillis how long a request of the queue waits for capacity to free by itself before anything is
 *     preempted for it (and, to take from other queues, how long its queue must have been below its fair share)
 */
public record QueuePreemption(Integer maxExtensions, Long maxExtensionMillis, Boolean disabled, Long minRuntimeMillis,
    Long delayMillis) {

  public static final QueuePreemption INHERIT = new QueuePreemption(null, null, null, null, null);

  public QueuePreemption(Integer maxExtensions, Long maxExtensionMillis) {
    this(maxExtensions, maxExtensionMillis, null, null, null);
  }

  public QueuePreemption(Integer maxExtensions, Long maxExtensionMillis, Boolean disabled) {
    this(maxExtensions, maxExtensionMillis, disabled, null, null);
  }

  public QueuePreemption {
    if (maxExtensions != null && maxExtensions < 0) {
      throw new IllegalArgumentException("maxExtensions must not be negative: " + maxExtensions);
    }
    for (Long millis : new Long[] {maxExtensionMillis, minRuntimeMillis, delayMillis}) {
      if (millis != null && millis < 0) {
        throw new IllegalArgumentException("durations must not be negative: " + millis);
      }
    }
  }
}
