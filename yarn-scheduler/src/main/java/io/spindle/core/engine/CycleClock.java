package io.spindle.core.engine;

import java.util.function.LongSupplier;

/**
 * A clock that stands still during a scheduling cycle: the driver moves it once, before each cycle, to the time the
 * cycle runs at. The engine reads the clock many times in one cycle (submit times, deadlines, reservation ages,
 * starvation); a clock that moved in between would make a cycle depend on how long its own work took. With one time
 * per cycle, a cycle is a function of the engine's state, its events and that time, which is what the decision
 * journal records and a replay on a {@link ManualClock} gives back.
 *
 * <p>It never runs backwards, whatever its source does (a wall clock stepped back by NTP), so the times a journal
 * records can be replayed on a {@link ManualClock}. Drivers move it on the thread that runs cycles.
 */
public final class CycleClock implements Clock {

  private final LongSupplier source;
  private volatile long now;

  public CycleClock(LongSupplier source) {
    this.source = source;
    this.now = source.getAsLong();
  }

  /** Moves the clock to its source's time (or keeps it, if the source went back) and returns the time it shows. */
  public long tick() {
    now = Math.max(now, source.getAsLong());
    return now;
  }

  @Override
  public long nowMillis() {
    return now;
  }
}
