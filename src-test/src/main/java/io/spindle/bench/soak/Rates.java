package io.spindle.bench.soak;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Events counted per second of the run (submissions, containers received), for sustained and peak rates. */
final class Rates {

  private final long originNanos;
  private final Map<Long, LongAdder> perSecond = new ConcurrentHashMap<>();
  private final LongAdder total = new LongAdder();

  Rates(long originNanos) {
    this.originNanos = originNanos;
  }

  void add(long nanos, int n) {
    perSecond.computeIfAbsent((nanos - originNanos) / 1_000_000_000L, s -> new LongAdder()).add(n);
    total.add(n);
  }

  long total() {
    return total.sum();
  }

  /** The most events in any {@code seconds} consecutive seconds, per second. */
  double peak(int seconds) {
    long last = perSecond.keySet().stream().mapToLong(Long::longValue).max().orElse(-1);
    long best = 0;
    for (long start = 0; start <= last; start++) {
      long sum = 0;
      for (long s = start; s < start + seconds; s++) {
        LongAdder a = perSecond.get(s);
        sum += a == null ? 0 : a.sum();
      }
      best = Math.max(best, sum);
    }
    return best / (double) seconds;
  }
}
