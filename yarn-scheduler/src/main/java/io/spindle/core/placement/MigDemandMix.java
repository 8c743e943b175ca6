package io.spindle.core.placement;

import java.util.ArrayDeque;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

/**
 * The MIG instances asked for most recently, by profile name: the last {@code window} instances requests asked for,
 * whatever became of them. Deterministic (a count of arrivals, not a clock), so the same events give the same
 * layouts.
 */
public final class MigDemandMix {

  /** About a few hundred containers: enough to see a mix, short enough to follow it when it shifts. */
  public static final int DEFAULT_WINDOW = 1_000;

  private static final class Run {
    final String profile;
    long instances;

    Run(String profile, long instances) {
      this.profile = profile;
      this.instances = instances;
    }
  }

  private final long window;
  private final ArrayDeque<Run> runs = new ArrayDeque<>();
  private final Map<String, Long> counts = new HashMap<>();
  private long total;

  public MigDemandMix(long window) {
    if (window <= 0) {
      throw new IllegalArgumentException("window must be positive: " + window);
    }
    this.window = window;
  }

  /** {@code instances} more instances of the profile were asked for. */
  public void record(String profile, long instances) {
    if (instances <= 0) {
      return;
    }
    runs.addLast(new Run(profile, instances));
    counts.merge(profile, instances, Long::sum);
    total += instances;
    while (total > window) {
      Run oldest = runs.peekFirst();
      long drop = Math.min(oldest.instances, total - window);
      oldest.instances -= drop;
      total -= drop;
      counts.computeIfPresent(oldest.profile, (k, v) -> v == drop ? null : v - drop);
      if (oldest.instances == 0) {
        runs.pollFirst();
      }
    }
  }

  /** Instances asked for in the window, by profile name. */
  public Map<String, Long> instancesByProfile() {
    return Collections.unmodifiableMap(counts);
  }
}
