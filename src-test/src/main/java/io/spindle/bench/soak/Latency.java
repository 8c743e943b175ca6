package io.spindle.bench.soak;

import java.util.Arrays;

/** Percentiles of a set of durations, in milliseconds (nearest rank). */
public record Latency(int count, double p50Ms, double p95Ms, double p99Ms, double maxMs) {

  public static final Latency NONE = new Latency(0, 0, 0, 0, 0);

  public static Latency ofNanos(long[] nanos) {
    return of(nanos, 1e6);
  }

  public static Latency ofMillis(long[] millis) {
    return of(millis, 1);
  }

  private static Latency of(long[] values, double perMs) {
    if (values.length == 0) {
      return NONE;
    }
    long[] sorted = values.clone();
    Arrays.sort(sorted);
    return new Latency(sorted.length, rank(sorted, 0.50) / perMs, rank(sorted, 0.95) / perMs,
        rank(sorted, 0.99) / perMs, sorted[sorted.length - 1] / perMs);
  }

  private static long rank(long[] sorted, double q) {
    int i = (int) Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
  }
}
