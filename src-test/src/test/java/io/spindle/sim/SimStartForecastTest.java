package io.spindle.sim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The simulator's accounting of expected start times ({@code --expected-start}), on {@link SimTinyTraceTest}'s three
 * jobs: B (8 GPUs, arrives at 10 s) waits for A (declared 100 s); C backfills at once and waited for nothing.
 */
class SimStartForecastTest {

  private static RunResult run(String declared) {
    SimOptions options = SimOptions.defaults().withDeclaredRuntime(declared).withExpectedStart(true);
    return new Simulator(SimTinyTraceTest.TWO_NODES, Policies.parse("spindle", options).get(0), options)
        .run(SimTinyTraceTest.trace(), null);
  }

  @Test
  void withExactDeclaredRunTimesTheGangsPredictionIsExactAndRight() {
    RunResult.StartAccuracy e = run("exact").startAccuracy();
    assertThat(e.predicted()).isEqualTo(1); // B only: A and C started in their arrival cycles.
    assertThat(e.known()).isEqualTo(1);
    assertThat(e.exact()).isEqualTo(1);
    assertThat(e.medianAbsErrorSeconds()).isZero();
    assertThat(e.p90AbsErrorSeconds()).isZero();
    assertThat(e.medianWaitSeconds()).isEqualTo(90);
  }

  @Test
  void withNothingDeclaredOrLearnedThePredictionIsUnknownNotInvented() {
    // C may not backfill now (it declares nothing): it waits too, behind B's reservation, and neither is known.
    RunResult.StartAccuracy e = run("none").startAccuracy();
    assertThat(e.predicted()).isEqualTo(2);
    assertThat(e.unknown()).isEqualTo(2);
    assertThat(e.known()).isZero();
  }

  @Test
  void withoutTheFlagNothingIsMeasured() {
    SimOptions options = SimOptions.defaults();
    RunResult r = new Simulator(SimTinyTraceTest.TWO_NODES, Policies.parse("spindle", options).get(0), options)
        .run(SimTinyTraceTest.trace(), null);
    assertThat(r.startAccuracy()).isEqualTo(RunResult.StartAccuracy.NONE);
  }
}
