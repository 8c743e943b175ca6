package io.spindle.core.queue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a leaf's {@link AppOrdering} from Spindle's {@code spindle.ordering} and its {@link OrderingRules} from the
 * keys under it. Every one of them is inherited: a leaf takes the value set on it, else the nearest ancestor's, else
 * the default. A bad value is refused with the key that holds it.
 */
final class OrderingRulesParser {

  /** The per-queue keys this parser owns. */
  static final Set<String> KEYS = Set.of(AppOrdering.SPINDLE_KEY, OrderingRules.THRESHOLDS_KEY,
      OrderingRules.MAX_WAIT_KEY, OrderingRules.PREEMPT_KEY, OrderingRules.MIN_RUNTIME_KEY);

  /** Bound on the duration keys: a year. */
  private static final long MAX_SECONDS = 366L * 86_400;

  private OrderingRulesParser() {}

  /**
   * A leaf's ordering: {@code spindle.ordering} where it (or an ancestor) sets one other than {@code fifo}; else
   * CapacityScheduler's {@code ordering-policy} of the leaf.
   */
  static AppOrdering ordering(Map<String, String> c, String leaf) {
    Inherited v = inherited(c, leaf, AppOrdering.SPINDLE_KEY);
    AppOrdering standard = AppOrdering.of(c.get(QueueConfigParser.key(leaf, AppOrdering.KEY)),
        c.get(QueueConfigParser.key(leaf, AppOrdering.SIZE_BASED_WEIGHT)));
    if (v == null) {
      return standard;
    }
    return switch (v.value()) {
      case "fifo" -> standard;
      case "shortest-first" -> AppOrdering.SHORTEST_FIRST;
      case "least-attained" -> AppOrdering.LEAST_ATTAINED;
      default -> throw new QueueConfigException(v.key(),
          "is fifo, shortest-first or least-attained; was '" + v.value() + "'");
    };
  }

  static OrderingRules rules(Map<String, String> c, String leaf) {
    List<Long> thresholds = OrderingRules.DEFAULT_THRESHOLDS_GPU_SECONDS;
    Inherited t = inherited(c, leaf, OrderingRules.THRESHOLDS_KEY);
    if (t != null) {
      thresholds = new ArrayList<>();
      for (String part : t.value().split(",")) {
        long s = seconds(t.key(), part.strip());
        if (s <= 0 || (!thresholds.isEmpty() && s <= thresholds.get(thresholds.size() - 1))) {
          throw new QueueConfigException(t.key(), "is GPU-seconds above 0, ascending, comma-separated; was '"
              + t.value() + "'");
        }
        thresholds.add(s);
      }
    }
    Inherited w = inherited(c, leaf, OrderingRules.MAX_WAIT_KEY);
    long maxWait = w == null ? OrderingRules.DEFAULT_MAX_WAIT_SECONDS : seconds(w.key(), w.value());
    Inherited p = inherited(c, leaf, OrderingRules.PREEMPT_KEY);
    boolean preempt = false;
    if (p != null) {
      if (!p.value().equalsIgnoreCase("true") && !p.value().equalsIgnoreCase("false")) {
        throw new QueueConfigException(p.key(), "is true or false; was '" + p.value() + "'");
      }
      preempt = p.value().equalsIgnoreCase("true");
    }
    Inherited m = inherited(c, leaf, OrderingRules.MIN_RUNTIME_KEY);
    long minRuntime = m == null ? OrderingRules.DEFAULT_MIN_RUNTIME_SECONDS : seconds(m.key(), m.value());
    return new OrderingRules(thresholds, maxWait * 1000, preempt, minRuntime * 1000);
  }

  /** A key's value as the leaf sees it, with the key that set it. */
  private record Inherited(String key, String value) {}

  private static Inherited inherited(Map<String, String> c, String leaf, String suffix) {
    for (String p = leaf; p != null; p = p.contains(".") ? p.substring(0, p.lastIndexOf('.')) : null) {
      String key = QueueConfigParser.key(p, suffix);
      String v = c.get(key);
      if (v != null) {
        return new Inherited(key, v.strip());
      }
    }
    return null;
  }

  private static long seconds(String key, String v) {
    try {
      long s = Long.parseLong(v);
      if (s < 0 || s > MAX_SECONDS) {
        throw new QueueConfigException(key, "is whole seconds from 0 to " + MAX_SECONDS + "; was '" + v + "'");
      }
      return s;
    } catch (NumberFormatException e) {
      throw new QueueConfigException(key, "is whole seconds from 0 to " + MAX_SECONDS + "; was '" + v + "'");
    }
  }
}
