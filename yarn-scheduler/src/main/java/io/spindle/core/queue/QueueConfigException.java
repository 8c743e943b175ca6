package io.spindle.core.queue;

/**
 * A queue configuration that Spindle refuses. It names the configuration key and says why, so that an admin who
 * runs {@code yarn rmadmin -refreshQueues} learns exactly which line to fix; the previous configuration stays.
 */
public final class QueueConfigException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String key;

  public QueueConfigException(String key, String reason) {
    super(key + ": " + reason);
    this.key = key;
  }

  public String key() {
    return key;
  }
}
