package io.spindle.core.engine;

/** A clock that moves only when told to: virtual time for the simulator and for tests. */
public final class ManualClock implements Clock {

  private long now;

  public ManualClock(long startMillis) {
    this.now = startMillis;
  }

  @Override
  public long nowMillis() {
    return now;
  }

  public void advance(long millis) {
    if (millis < 0) {
      throw new IllegalArgumentException("time does not run backwards: " + millis);
    }
    now += millis;
  }

  public void set(long millis) {
    advance(millis - now);
  }
}
