package io.spindle.core.queue;

/**
 * A queue's own bounds on checkpoint extensions for its applications when they are preemption victims; {@code null}
 * means "as the parent queue says", and at the top of the tree "as the cluster setting says".
 *
 * @param maxExtensions how many times one checkpoint notice to an application of this queue may be extended
 * @param maxExtensionMillis the longest one extension may be
 */
public record QueuePreemption(Integer maxExtensions, Long maxExtensionMillis) {

  public static final QueuePreemption INHERIT = new QueuePreemption(null, null);

  public QueuePreemption {
    if (maxExtensions != null && maxExtensions < 0) {
      throw new IllegalArgumentException("maxExtensions must not be negative: " + maxExtensions);
    }
    if (maxExtensionMillis != null && maxExtensionMillis < 0) {
      throw new IllegalArgumentException("maxExtensionMillis must not be negative: " + maxExtensionMillis);
    }
  }
}
