package io.spindle.core.queue;

/**
 * A queue's own preemption settings; {@code null} means "as the parent queue says", and at the top of the tree "as
 * the cluster setting says" (for {@code disabled}: not disabled).
 *
 * @param maxExtensions how many times one checkpoint notice to an application of this queue may be extended
 * @param maxExtensionMillis the longest one extension may be
 * @param disabled CapacityScheduler's {@code disable_preemption}: no container of the queue (or of a queue below
 *     it that does not say otherwise) is ever a preemption victim
 */
public record QueuePreemption(Integer maxExtensions, Long maxExtensionMillis, Boolean disabled) {

  public static final QueuePreemption INHERIT = new QueuePreemption(null, null, null);

  public QueuePreemption(Integer maxExtensions, Long maxExtensionMillis) {
    this(maxExtensions, maxExtensionMillis, null);
  }

  public QueuePreemption {
    if (maxExtensions != null && maxExtensions < 0) {
      throw new IllegalArgumentException("maxExtensions must not be negative: " + maxExtensions);
    }
    if (maxExtensionMillis != null && maxExtensionMillis < 0) {
      throw new IllegalArgumentException("maxExtensionMillis must not be negative: " + maxExtensionMillis);
    }
  }
}
