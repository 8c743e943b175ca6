package io.spindle.launcher;

/** A {@code spindle-run} command line that cannot be submitted: the message says which option and why. */
public final class UsageException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public UsageException(String message) {
    super(message);
  }
}
