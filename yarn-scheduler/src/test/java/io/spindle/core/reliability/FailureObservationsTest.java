package io.spindle.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class FailureObservationsTest {

  private static final long HOUR = 3_600_000;

  @Test
  void exposureIsTheGpuCountIntegratedOverTheClock() {
    FailureObservations seen = new FailureObservations();
    seen.capacity(10 * HOUR, 16);
    assertThat(seen.exposureGpuHours(10 * HOUR)).isZero();
    assertThat(seen.exposureGpuHours(12 * HOUR)).as("read between changes").isEqualTo(32.0);
    seen.capacity(12 * HOUR, 24); // a node of 8 joins
    seen.capacity(13 * HOUR, 8); // two nodes of 8 leave
    assertThat(seen.exposureGpuHours(15 * HOUR)).isEqualTo(32 + 24 + 16, within(1e-9));
    assertThat(seen.exposureGpuHours(15 * HOUR)).as("reading changes nothing")
        .isEqualTo(seen.exposureGpuHours(15 * HOUR));
  }

  @Test
  void whatAFailoverCarriesMovesOnlyWithTheCountOrAFailure() {
    FailureObservations seen = new FailureObservations();
    seen.capacity(0, 8);
    long changes = seen.changes();
    FailureObservations.Saved before = seen.saved();
    seen.capacity(5 * HOUR, 8);
    seen.exposureGpuHours(9 * HOUR);
    assertThat(seen.changes()).as("time passing is no change to save").isEqualTo(changes);
    assertThat(seen.saved()).isEqualTo(before);

    seen.gpuFailed(2 * HOUR);
    assertThat(seen.changes()).isGreaterThan(changes);
    assertThat(seen.saved()).isEqualTo(new FailureObservations.Saved(16 * HOUR, 2 * HOUR, 8, 1));
    assertThat(seen.failures()).isEqualTo(1);
  }

  @Test
  void aNewLeaderCountsTheTimeSinceTheSaveAtTheOldLeadersGpusThenItsOwn() {
    FailureObservations old = new FailureObservations();
    old.capacity(0, 16);
    old.gpuFailed(HOUR);
    FailureObservations.Saved saved = old.saved();

    FailureObservations standby = new FailureObservations();
    standby.capacity(3 * HOUR, 8); // only half the nodes have re-registered when it takes over
    standby.restore(saved, 3 * HOUR);

    assertThat(standby.failures()).isEqualTo(1);
    assertThat(standby.exposureGpuHours(3 * HOUR)).as("16 GPUs from the save to the take-over").isEqualTo(48.0);
    assertThat(standby.exposureGpuHours(4 * HOUR)).as("then the 8 it has").isEqualTo(56.0);
    assertThat(old.exposureGpuHours(3 * HOUR)).isEqualTo(48.0);
  }

  @Test
  void withTheSameGpusTheNewLeaderSavesWhatTheOldOneWould() {
    FailureObservations old = new FailureObservations();
    old.capacity(0, 16);
    old.gpuFailed(HOUR);
    FailureObservations standby = new FailureObservations();
    standby.capacity(2 * HOUR, 16);
    standby.restore(old.saved(), 2 * HOUR);
    assertThat(standby.saved()).isEqualTo(old.saved());
    old.capacity(5 * HOUR, 24);
    standby.capacity(5 * HOUR, 24);
    assertThat(standby.saved()).isEqualTo(old.saved());
  }

  @Test
  void aClockBehindTheSaveCountsNothingBackwards() {
    FailureObservations seen = new FailureObservations();
    seen.capacity(9 * HOUR, 4);
    seen.restore(new FailureObservations.Saved(HOUR, 10 * HOUR, 4, 0), 9 * HOUR);
    assertThat(seen.exposureGpuHours(9 * HOUR)).isEqualTo(1.0);
    assertThat(seen.exposureGpuHours(11 * HOUR)).isEqualTo(5.0);
  }

  @Test
  void negativeFiguresAreRefused() {
    assertThatThrownBy(() -> new FailureObservations.Saved(-1, 0, 0, 0)).hasMessageContaining("negative");
    assertThatThrownBy(() -> new FailureObservations().capacity(0, -1)).hasMessageContaining("negative");
  }

  @Test
  void adviceIsDalysIntervalAtThePosteriorRate() {
    FailureObservations seen = new FailureObservations();
    seen.capacity(0, 1_000);
    for (int i = 0; i < 4; i++) {
      seen.gpuFailed(100 * HOUR);
    }
    CheckpointAdvisor advisor = new CheckpointAdvisor(new FailureRate(2e-5, 100_000), 60_000);
    CheckpointAdvice a = advisor.advise(seen, 200 * HOUR, 64, true, java.util.OptionalLong.of(30_000));

    double rate = (2e-5 * 100_000 + 4) / (100_000 + 200_000);
    assertThat(a.failuresPerGpuHour()).isCloseTo(rate, within(1e-12));
    assertThat(a.mtbfMillis()).isCloseTo(HOUR / (rate * 64), within(1e-3));
    assertThat(a.intervalMillis()).isEqualTo(CheckpointInterval.dalyMillis(30_000, a.mtbfMillis()));
    assertThat(a.gpus()).isEqualTo(64);
    assertThat(a.writeMillis()).isEqualTo(30_000);
    assertThat(a.basis()).contains("64 GPU(s) it holds", "4 GPU failure(s) in 200000 GPU-hours",
        "30 s (as the application reported)");

    CheckpointAdvice unreported = advisor.advise(seen, 200 * HOUR, 64, false, java.util.OptionalLong.empty());
    assertThat(unreported.writeMillis()).isEqualTo(60_000);
    assertThat(unreported.basis()).contains("asks for", "the default: the application reported none");
  }
}
