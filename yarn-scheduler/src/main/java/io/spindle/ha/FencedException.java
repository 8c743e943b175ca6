package io.spindle.ha;

/**
 * A write of scheduler state was refused because another scheduler has taken the lead since this one was elected:
 * the epoch znode's version is no longer the one this scheduler set. The writer must stop scheduling.
 */
public final class FencedException extends Exception {

  public FencedException(String message) {
    super(message);
  }
}
