package io.spindle.ha;

/**
 * A write of scheduler state was refused because this very scheduler has claimed a later epoch since the term the
 * write was decided in, with nobody else leading in between (it was re-elected after a ZooKeeper outage). The state
 * still stands: the writer writes it again under the newer term. Not a {@link FencedException}, which means another
 * scheduler leads.
 */
public final class StaleTermException extends Exception {

  public StaleTermException(String message) {
    super(message);
  }
}
