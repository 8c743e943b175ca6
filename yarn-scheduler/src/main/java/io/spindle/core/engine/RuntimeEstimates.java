package io.spindle.core.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Run times learned from finished applications, for {@code shortest-first} to order those that declare none.
 *
 * <p><b>How it learns.</b> When an application whose run the engine keeps ({@link EngineState#keepsHistory}: one of a
 * ranked leaf, {@code shortest-first} or {@code least-attained}, or any when reservations plan with learned run times)
 * ends after running, the wall time it spent holding containers is added to two keys: its user with its kind (the
 * application's name and tags, as the driver words them), and its user alone. A run cut by a failover that kept
 * nothing of it is not learned from. An application's estimate is the median of its user-and-kind key's samples, or, with none there, of its
 * user's; none at all means unknown (ordered after every known one). A median, not a mean: one run that hung for a
 * week does not make its kind look long for the next fifteen.
 *
 * <p><b>How it is bounded.</b> Each key keeps its last {@link #SAMPLES} run times; at most {@link #MAX_KEYS} keys are
 * kept, the one least recently learned from dropped first. Memory is bounded whatever the workload.
 *
 * <p><b>How it survives a failover.</b> The samples are part of {@link DurableState} ({@link #export},
 * {@link #restore}); a new leader orders exactly as the old one would have.
 */
final class RuntimeEstimates {

  static final int SAMPLES = 16;
  static final int MAX_KEYS = 10_000;

  /** One key's samples, oldest first. */
  record Learned(String user, String kind, List<Long> runMillis) {
    Learned {
      runMillis = List.copyOf(runMillis);
    }
  }

  private record Key(String user, String kind) {}

  /** In the order keys were last learned from: reading an estimate changes nothing, so a save is a pure function. */
  private final Map<Key, long[]> samples = new LinkedHashMap<>() {
    @Override
    protected boolean removeEldestEntry(Map.Entry<Key, long[]> eldest) {
      return size() > MAX_KEYS;
    }
  };
  private long changes;

  /** An application ended having run {@code ranMillis} (holding containers); nothing is learned from 0. */
  void finished(AppState app, long ranMillis) {
    if (ranMillis <= 0) {
      return;
    }
    if (app.kind != null) {
      add(new Key(app.user, app.kind), ranMillis);
    }
    add(new Key(app.user, null), ranMillis);
    changes++;
  }

  /** The expected run time of {@code app}, or {@code 0} when nothing is known of its kind or user. */
  long expectedMillis(AppState app) {
    long[] s = app.kind == null ? null : samples.get(new Key(app.user, app.kind));
    if (s == null) {
      s = samples.get(new Key(app.user, null));
    }
    return s == null ? 0 : median(s);
  }

  private void add(Key key, long millis) {
    long[] s = appended(samples.remove(key), millis, SAMPLES); // Re-inserted last: the most recently learned from.
    samples.put(key, s);
  }

  /** {@code old} (may be {@code null}) with {@code millis} added last, the oldest dropped beyond {@code max}. */
  static long[] appended(long[] old, long millis, int max) {
    if (old == null) {
      return new long[] {millis};
    }
    if (old.length < max) {
      long[] s = Arrays.copyOf(old, old.length + 1);
      s[old.length] = millis;
      return s;
    }
    long[] s = Arrays.copyOfRange(old, old.length - max + 1, old.length + 1);
    s[max - 1] = millis;
    return s;
  }

  private static long median(long[] s) {
    long[] sorted = s.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  /** Counts what was learned: a durable change each. */
  long changes() {
    return changes;
  }

  /** Every key's samples, least recently learned from first (the order {@link #restore} rebuilds). */
  List<Learned> export() {
    List<Learned> out = new ArrayList<>();
    for (Map.Entry<Key, long[]> e : samples.entrySet()) {
      out.add(new Learned(e.getKey().user(), e.getKey().kind(), Arrays.stream(e.getValue()).boxed().toList()));
    }
    return out;
  }

  void restore(List<Learned> learned) {
    samples.clear();
    for (Learned l : learned) {
      List<Long> runs = l.runMillis().subList(Math.max(0, l.runMillis().size() - SAMPLES), l.runMillis().size());
      samples.put(new Key(l.user(), l.kind()), runs.stream().mapToLong(Long::longValue).toArray());
    }
  }
}
