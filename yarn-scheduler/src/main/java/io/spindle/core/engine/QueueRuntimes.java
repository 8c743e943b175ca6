package io.spindle.core.engine;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Run times learned per leaf queue (and per queue and kind) from every application that finished after running, for
 * the expected start times status views show ({@link StartEstimates}); nothing the engine decides reads them.
 * {@link RuntimeEstimates} learns only where the engine orders or plans with run times (ranked leaves, or learned
 * reservations), so a FIFO queue would otherwise have nothing to forecast undeclared work with.
 *
 * <p><b>How an estimate is read.</b> The median of the samples longer than what the application has already run:
 * a job that has outlived its queue's median is expected to end at the median of the runs that lasted as long, not
 * "any moment now". None longer means unknown: the forecast says so rather than invents an end.
 *
 * <p><b>How it is bounded.</b> The last {@link #SAMPLES} run times per key, at most {@link #MAX_KEYS} keys, the one
 * least recently learned from dropped first. <b>Failover:</b> not kept in {@code DurableState}; a new leader learns
 * again from the applications that finish under it, and forecasts undeclared work as unknown until then (status only:
 * no decision changes).
 */
final class QueueRuntimes {

  static final int SAMPLES = 64;
  static final int MAX_KEYS = 10_000;

  private record Key(String queue, String kind) {}

  private final Map<Key, long[]> samples = new LinkedHashMap<>() {
    @Override
    protected boolean removeEldestEntry(Map.Entry<Key, long[]> eldest) {
      return size() > MAX_KEYS;
    }
  };

  /** An application of {@code queue} ended having run {@code ranMillis} holding containers (0 teaches nothing). */
  void finished(String queue, String kind, long ranMillis) {
    if (ranMillis <= 0) {
      return;
    }
    if (kind != null) {
      add(new Key(queue, kind), ranMillis);
    }
    add(new Key(queue, null), ranMillis);
  }

  /**
   * The expected whole run time of an application of {@code queue} and {@code kind} that has run {@code ranMillis}:
   * the median of the samples of its kind (else of its queue) longer than that; {@code 0} when none is.
   */
  long expectedMillis(String queue, String kind, long ranMillis) {
    long expected = kind == null ? 0 : medianAbove(samples.get(new Key(queue, kind)), ranMillis);
    return expected > 0 ? expected : medianAbove(samples.get(new Key(queue, null)), ranMillis);
  }

  private void add(Key key, long millis) {
    // Re-inserted last: the most recently learned from.
    samples.put(key, RuntimeEstimates.appended(samples.remove(key), millis, SAMPLES));
  }

  private static long medianAbove(long[] s, long floor) {
    if (s == null) {
      return 0;
    }
    long[] above = Arrays.stream(s).filter(x -> x > floor).sorted().toArray();
    int n = above.length;
    return n == 0 ? 0 : n % 2 == 1 ? above[n / 2] : (above[n / 2 - 1] + above[n / 2]) / 2;
  }
}
