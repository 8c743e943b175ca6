package io.spindle.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class CheckpointIntervalTest {

  private static final long MIN = 60_000;
  private static final double HOUR = 3_600_000.0;

  @Test
  void dalysWorkedCasesComeOutAsInHisPaper() {
    // Daly 2006, Figs. 3-5: delta = 5 min; M = 24 h, 6 h, 15 min give 117, 57 and 9.1 min.
    assertThat(CheckpointInterval.dalyMillis(5 * MIN, 24 * HOUR) / (double) MIN).isCloseTo(117, within(0.5));
    assertThat(CheckpointInterval.dalyMillis(5 * MIN, 6 * HOUR) / (double) MIN).isCloseTo(57, within(0.5));
    assertThat(CheckpointInterval.dalyMillis(5 * MIN, 15 * MIN) / (double) MIN).isCloseTo(9.1, within(0.05));
  }

  @Test
  void youngIsTheFirstOrderTermAndDalyCorrectsItForLargeWrites() {
    assertThat(CheckpointInterval.youngMillis(5 * MIN, 24 * HOUR)).isEqualTo(120 * MIN);
    // Small writes: the two agree within the write time.
    assertThat(Math.abs(CheckpointInterval.dalyMillis(MIN, 100 * HOUR)
        - CheckpointInterval.youngMillis(MIN, 100 * HOUR))).isLessThan(MIN);
    // A write as long as half the MTBF or more: checkpoint once per MTBF.
    assertThat(CheckpointInterval.dalyMillis(40 * MIN, 15 * MIN)).isEqualTo(15 * MIN);
  }

  @Test
  void theAdvisedIntervalWastesLessThanMuchShorterOrLongerOnes() {
    long write = 2 * MIN;
    double mtbf = 3 * HOUR;
    long best = CheckpointInterval.dalyMillis(write, mtbf);
    double atBest = CheckpointInterval.wasteFraction(best, write, mtbf);
    assertThat(atBest).isLessThan(CheckpointInterval.wasteFraction(best / 4, write, mtbf))
        .isLessThan(CheckpointInterval.wasteFraction(best * 4, write, mtbf));
  }

  @Test
  void badInputIsRefusedWithTheReason() {
    assertThatThrownBy(() -> CheckpointInterval.dalyMillis(-1, HOUR)).hasMessageContaining("write time");
    assertThatThrownBy(() -> CheckpointInterval.dalyMillis(MIN, 0)).hasMessageContaining("between failures");
    assertThatThrownBy(() -> CheckpointInterval.dalyMillis(MIN, Double.NaN)).hasMessageContaining("between failures");
    assertThatThrownBy(() -> CheckpointInterval.wasteFraction(0, MIN, HOUR)).hasMessageContaining("interval");
  }

  @Test
  void theFailureRateStartsAtThePriorAndFollowsWhatIsObserved() {
    FailureRate rate = FailureRate.defaults();
    assertThat(rate.perGpuHour(0, 0)).isEqualTo(FailureRate.LLAMA3_PER_GPU_HOUR);
    // Meta's 16,384-GPU job: a failure about every 3.1 hours.
    assertThat(FailureRate.mtbfMillis(FailureRate.LLAMA3_PER_GPU_HOUR, 16_384) / HOUR).isCloseTo(3.09, within(0.01));
    // A cluster that saw ten times the prior rate over ten times the prior's weight is believed, nearly.
    double seen = 10 * FailureRate.LLAMA3_PER_GPU_HOUR;
    double exposure = 10 * FailureRate.DEFAULT_PRIOR_GPU_HOURS;
    long failures = Math.round(seen * exposure);
    assertThat(rate.perGpuHour(failures, exposure) / seen).isCloseTo(0.92, within(0.01));
    assertThatThrownBy(() -> rate.perGpuHour(-1, 1)).hasMessageContaining("negative");
    assertThatThrownBy(() -> FailureRate.mtbfMillis(1e-5, 0)).hasMessageContaining("at least one GPU");
  }
}
