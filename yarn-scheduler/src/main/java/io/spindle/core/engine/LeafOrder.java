package io.spindle.core.engine;

import io.spindle.core.queue.AppOrdering;
import io.spindle.core.queue.OrderingRules;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The order of a leaf whose policy ranks applications by how long they run ({@link AppOrdering#ranked()}), at one
 * instant: higher priority first; then those that have waited the leaf's {@link OrderingRules#maxWaitMillis} (the
 * starvation bound), oldest first; then the lowest rank; then the oldest. Placement serves a leaf's waiting
 * applications in this order, and intra-queue preemption lets an application take from one of its leaf that ranks
 * strictly after it.
 *
 * <p>A rank is a function of the application's state at the instant, so the order is deterministic and replayable:
 * under {@code least-attained} the level of its attained GPU service; under {@code shortest-first} the run time it
 * has left, what it declared (or, declaring none, what its kind's finished runs took) less what it has run.
 */
final class LeafOrder {

  /** The rank of an application that has no run time, declared or learned: after every one that has. */
  static final long UNKNOWN = Long.MAX_VALUE;

  private final AppOrdering ordering;
  private final OrderingRules rules;
  private final RuntimeEstimates estimates;
  private final long now;

  LeafOrder(QueueState leaf, RuntimeEstimates estimates, long now) {
    this.ordering = leaf.config.ordering();
    this.rules = leaf.config.orderingRules();
    this.estimates = estimates;
    this.now = now;
  }

  /** Lower is served first; {@code 0} for every application under a policy that does not rank. */
  long rank(AppState app) {
    return switch (ordering) {
      case LEAST_ATTAINED -> rules.level(app.attained.gpuSeconds(now));
      case SHORTEST_FIRST -> remaining(app);
      default -> 0;
    };
  }

  private long remaining(AppState app) {
    long expected = app.declaredRuntimeMillis > 0 ? app.declaredRuntimeMillis : estimates.expectedMillis(app);
    return expected <= 0 ? UNKNOWN : Math.max(0, expected - app.attained.ranMillis(now));
  }

  /**
   * Its rank as a request that may preempt: {@link io.spindle.core.preemption.Need#AGED} for an application that has
   * waited the starvation bound (it may take back what was submitted after it and overtook it); otherwise
   * {@link #rank}.
   */
  long preemptionRank(AppState app) {
    return aged(app) ? io.spindle.core.preemption.Need.AGED : rank(app);
  }

  /** Whether it has waited the starvation bound: then it goes before all of its priority that have not. */
  boolean aged(AppState app) {
    return rules.maxWaitMillis() > 0 && app.waitedMillis(now) >= rules.maxWaitMillis();
  }

  /** Where this order puts {@code app}, for {@code why} and the status API. */
  String describe(AppState app) {
    String rank = switch (ordering) {
      case LEAST_ATTAINED -> String.format(java.util.Locale.ROOT,
          "least-attained: level %d of %d (%,.0f GPU-seconds attained; levels start at %s)", rank(app),
          rules.attainedThresholdsGpuSeconds().size() + 1, app.attained.gpuSeconds(now),
          rules.attainedThresholdsGpuSeconds());
      default -> {
        long left = remaining(app);
        yield "shortest-first: " + (left == UNKNOWN ? "no run time declared or learned, so after those that have one"
            : left / 1000 + " s of run time left, " + (app.declaredRuntimeMillis > 0 ? "declared" : "learned from "
                + "finished runs of its kind"));
      }
    };
    String bound = rules.maxWaitMillis() == 0 ? "no starvation bound"
        : aged(app) ? "it has waited its queue's bound of " + rules.maxWaitMillis() / 1000 + " s and goes first"
        : "it has waited " + app.waitedMillis(now) / 1000 + " s of its queue's bound of " + rules.maxWaitMillis() / 1000
            + " s";
    return "its queue orders " + rank + "; " + bound;
  }

  /** Sorts {@code apps} into this order; each rank is computed once. */
  void sort(List<AppState> apps) {
    Map<AppState, long[]> keys = new IdentityHashMap<>();
    for (AppState a : apps) {
      keys.put(a, key(a));
    }
    apps.sort(order(keys::get));
  }

  /** The first of {@code apps} in this order, {@code null} for none; each rank is computed once. */
  AppState first(Iterable<AppState> apps) {
    Map<AppState, long[]> keys = new IdentityHashMap<>();
    Comparator<AppState> order = order(a -> keys.computeIfAbsent(a, this::key));
    AppState first = null;
    for (AppState a : apps) {
      if (first == null || order.compare(a, first) < 0) {
        first = a;
      }
    }
    return first;
  }

  private long[] key(AppState a) {
    return new long[] {aged(a) ? 0 : 1, rank(a)};
  }

  private static Comparator<AppState> order(java.util.function.Function<AppState, long[]> key) {
    return Comparator.<AppState>comparingInt(a -> -a.priority)
        .thenComparingLong(a -> key.apply(a)[0])
        .thenComparingLong(a -> key.apply(a)[0] == 0 ? 0 : key.apply(a)[1])
        .thenComparing(AppState.ORDER);
  }
}
