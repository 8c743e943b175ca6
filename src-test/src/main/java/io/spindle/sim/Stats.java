package io.spindle.sim;

import java.util.Arrays;

/** Distribution summaries and fairness indexes, computed the same way for every policy. */
public final class Stats {

  private Stats() {}

  /** Mean, median, p99 and maximum, in the unit of the values; nearest-rank percentiles. All 0 when empty. */
  public record Distribution(long count, double mean, double p50, double p99, double max) {

    public static Distribution of(double[] values) {
      if (values.length == 0) {
        return new Distribution(0, 0, 0, 0, 0);
      }
      double[] v = values.clone();
      Arrays.sort(v);
      double sum = 0;
      for (double x : v) {
        sum += x;
      }
      return new Distribution(v.length, sum / v.length, percentile(v, 50), percentile(v, 99), v[v.length - 1]);
    }
  }

  /** Mean, median, p95 and maximum (for waits where the tail matters and p99 of a few hundred is one job). */
  public record Tail(long count, double mean, double p50, double p95, double max) {

    public static Tail of(double[] values) {
      if (values.length == 0) {
        return new Tail(0, 0, 0, 0, 0);
      }
      double[] v = values.clone();
      Arrays.sort(v);
      double sum = 0;
      for (double x : v) {
        sum += x;
      }
      return new Tail(v.length, sum / v.length, percentile(v, 50), percentile(v, 95), v[v.length - 1]);
    }
  }

  /** Nearest-rank percentile of sorted values: the smallest value with at least p% of the values at or below it. */
  public static double percentile(double[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }

  /** The values at percentiles 0, 1, ..., 100 (for CDF charts). */
  public static double[] percentiles(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    double[] out = new double[101];
    for (int p = 0; p <= 100; p++) {
      out[p] = v.length == 0 ? 0 : p == 0 ? v[0] : percentile(v, p);
    }
    return out;
  }

  /**
   * Jain's fairness index (sum x)^2 / (n sum x^2) of non-negative values: 1 when all are equal, 1/n when one has
   * everything. 1 for no values or all zero (nobody is treated worse than anybody else).
   */
  public static double jain(double[] x) {
    double sum = 0;
    double squares = 0;
    for (double v : x) {
      sum += v;
      squares += v * v;
    }
    return squares == 0 ? 1 : sum * sum / (x.length * squares);
  }

  /**
   * Time-weighted means of a step function (value {@code values[i]} from {@code times[i]} until the next time) over
   * {@code buckets} equal slices of [from, to].
   */
  public static double[] downsample(long[] times, double[] values, int n, long from, long to, int buckets) {
    double[] out = new double[buckets];
    if (to <= from || n == 0) {
      return out;
    }
    double width = (double) (to - from) / buckets;
    int k = 0;
    for (int b = 0; b < buckets; b++) {
      double lo = from + b * width;
      double hi = b == buckets - 1 ? to : from + (b + 1) * width;
      while (k + 1 < n && times[k + 1] <= lo) {
        k++;
      }
      double acc = 0;
      double t = lo;
      while (t < hi) {
        boolean hasNext = k + 1 < n;
        double segmentEnd = hasNext ? Math.min(hi, times[k + 1]) : hi;
        acc += (times[k] <= t ? values[k] : 0) * (segmentEnd - t);
        t = segmentEnd;
        if (hasNext && times[k + 1] <= t) {
          k++;
        }
      }
      out[b] = acc / (hi - lo);
    }
    return out;
  }
}
