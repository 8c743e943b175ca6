package io.spindle.client;

import java.io.IOException;

/**
 * ZooKeeper refused a write because this client is not authenticated as the application whose znode it wrote:
 * its secret is not that application's AMRMToken password (or a token the scheduler no longer accepts).
 */
public final class CheckpointAuthException extends IOException {

  private static final long serialVersionUID = 1L;

  public CheckpointAuthException(String message, Throwable cause) {
    super(message, cause);
  }
}
