package io.spindle.core.reliability;

/**
 * How often a job should checkpoint to lose the least time to failures, given how long a checkpoint takes to write
 * ({@code delta}) and the mean time between failures of the hardware it runs on ({@code M}).
 *
 * <p>Checkpointing too often wastes the writes; too rarely, the work since the last checkpoint is redone after each
 * failure. Young (CACM 17(9), 1974) gave the first-order optimum {@code sqrt(2 delta M)}. Daly (Future Generation
 * Computer Systems 22(3), 2006, "A higher order estimate of the optimum checkpoint interval for restart dumps") gave
 * the higher-order one used here, which stays accurate when writes are not small against {@code M}:
 * {@code sqrt(2 delta M) * (1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9) - delta} for {@code delta < 2M}, else
 * {@code M}. His paper's worked cases (M = 24 h, 6 h, 15 min; delta = 5 min: 117, 57 and 9.1 min) are this class's
 * tests. Both assume failures arrive as a Poisson process, which is how hardware faults of many independent GPUs add
 * up; the interval counts compute time between the ends of two writes.
 */
public final class CheckpointInterval {

  private CheckpointInterval() {}

  /** Daly's higher-order optimum, in milliseconds; at least 1. */
  public static long dalyMillis(long writeMillis, double mtbfMillis) {
    check(writeMillis, mtbfMillis);
    double delta = Math.max(writeMillis, 0);
    double m = mtbfMillis;
    if (delta >= 2 * m) {
      return Math.max(1, Math.round(m));
    }
    double x = delta / (2 * m);
    double tau = Math.sqrt(2 * delta * m) * (1 + Math.sqrt(x) / 3 + x / 9) - delta;
    return Math.max(1, Math.round(tau));
  }

  /** Young's first-order optimum, in milliseconds; at least 1. */
  public static long youngMillis(long writeMillis, double mtbfMillis) {
    check(writeMillis, mtbfMillis);
    return Math.max(1, Math.round(Math.sqrt(2.0 * Math.max(writeMillis, 0) * mtbfMillis)));
  }

  /**
   * The fraction of wall time lost at {@code intervalMillis} (first-order model: writes, plus on average half an
   * interval and a write redone per failure), for comparing an application's own interval with the advice.
   */
  public static double wasteFraction(long intervalMillis, long writeMillis, double mtbfMillis) {
    check(writeMillis, mtbfMillis);
    if (intervalMillis <= 0) {
      throw new IllegalArgumentException("checkpoint interval must be positive: " + intervalMillis);
    }
    double tau = intervalMillis;
    double delta = writeMillis;
    return Math.min(1.0, delta / (tau + delta) + (tau + delta) / (2 * mtbfMillis));
  }

  private static void check(long writeMillis, double mtbfMillis) {
    if (writeMillis < 0) {
      throw new IllegalArgumentException("checkpoint write time must not be negative: " + writeMillis);
    }
    if (!(mtbfMillis > 0) || Double.isInfinite(mtbfMillis)) {
      throw new IllegalArgumentException("mean time between failures must be positive and finite: " + mtbfMillis);
    }
  }
}
