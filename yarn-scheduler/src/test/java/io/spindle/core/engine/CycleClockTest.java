package io.spindle.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class CycleClockTest {

  @Test
  void showsTheTimeOfTheLastTickUntilTheNext() {
    AtomicLong wall = new AtomicLong(1_000);
    CycleClock clock = new CycleClock(wall::get);
    wall.set(1_250);
    assertThat(clock.nowMillis()).as("not moved yet").isEqualTo(1_000);
    assertThat(clock.tick()).isEqualTo(1_250);
    wall.set(1_400);
    assertThat(clock.nowMillis()).as("still the cycle's time").isEqualTo(1_250);
  }

  @Test
  void neverRunsBackwardsWhenItsSourceDoes() {
    AtomicLong wall = new AtomicLong(5_000);
    CycleClock clock = new CycleClock(wall::get);
    wall.set(4_000); // The wall clock stepped back.
    assertThat(clock.tick()).isEqualTo(5_000);
    wall.set(5_001);
    assertThat(clock.tick()).isEqualTo(5_001);
  }
}
