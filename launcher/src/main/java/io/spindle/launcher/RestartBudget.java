package io.spindle.launcher;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * How often and how soon a failed gang starts again: at most {@code maxRestarts} restarts, the n-th after
 * {@code base * 2^(n-1)}, never more than {@link #MAX_BACKOFF}. Each restart's reason is kept for the job's output,
 * its YARN diagnostics and its final status.
 */
public final class RestartBudget {

  /** A broken job (bad code, a missing file) should not hold a queue's place for long between tries. */
  public static final Duration MAX_BACKOFF = Duration.ofMinutes(5);

  private final int maxRestarts;
  private final Duration base;
  private final List<String> reasons = new ArrayList<>();

  public RestartBudget(int maxRestarts, Duration base) {
    if (maxRestarts < 0 || base.isNegative()) {
      throw new IllegalArgumentException("restarts and backoff must not be negative: " + maxRestarts + ", " + base);
    }
    this.maxRestarts = maxRestarts;
    this.base = base;
  }

  /** Whether another restart is allowed after the failures recorded so far. */
  public boolean allowsAnother() {
    return reasons.size() < maxRestarts;
  }

  /** Records a failure that leads to restart number {@link #restarts()}, and returns how long to wait before it. */
  public Duration restartAfter(String reason) {
    if (!allowsAnother()) {
      throw new IllegalStateException("no restart left after " + reasons.size() + ": " + reason);
    }
    reasons.add(reason);
    long factor = 1L << Math.min(reasons.size() - 1, 20);
    Duration wait = base.multipliedBy(factor);
    return wait.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : wait;
  }

  public int restarts() {
    return reasons.size();
  }

  public int maxRestarts() {
    return maxRestarts;
  }

  /** Why each restart happened, oldest first. */
  public List<String> reasons() {
    return List.copyOf(reasons);
  }
}
