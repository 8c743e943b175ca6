package io.spindle.core.queue;

import java.util.List;

/**
 * One queue as configured.
 *
 * @param path full dotted path ({@code root.eng.train})
 * @param children child names in configuration order; empty for a leaf
 * @param userLimitFactor how many times its guarantee one user may take; {@code -1} for no per-user limit
 * @param weight share of idle capacity this queue borrows relative to its siblings (Spindle key)
 * @param preemption this queue's bounds on checkpoint extensions, each {@code null} where it inherits (Spindle keys)
 * @param ordering how a leaf orders its applications ({@code ordering-policy})
 * @param minimumUserLimitPercent CapacityScheduler's {@code minimum-user-limit-percent}: with N users asking, each may
 *     hold at most the larger of 1/N of the queue and this percent of it; 100 (the default) bounds nobody
 * @param labels its node labels (partitions) and its capacities in them
 * @param orderingRules a leaf's starvation bound, attained-service levels and intra-queue preemption (Spindle keys)
 * @param hotSparesPerRack for a leaf: whole idle nodes kept back in every rack for its gangs that restart after losing
 *     hardware ({@code spindle.hot-spares-per-rack}, not inherited); 0 for none and for every parent
 */
public record QueueConfig(
    String path,
    List<String> children,
    Capacity capacity,
    Capacity maximumCapacity,
    double userLimitFactor,
    double weight,
    QueuePreemption preemption,
    AppOrdering ordering,
    double minimumUserLimitPercent,
    QueueLabels labels,
    OrderingRules orderingRules,
    int hotSparesPerRack) {

  public QueueConfig {
    if (hotSparesPerRack < 0) {
      throw new IllegalArgumentException("hot spares must not be negative: " + hotSparesPerRack);
    }
    labels = labels == null ? QueueLabels.INHERIT : labels;
    children = List.copyOf(children);
    preemption = preemption == null ? QueuePreemption.INHERIT : preemption;
    ordering = ordering == null ? AppOrdering.FIFO : ordering;
    orderingRules = orderingRules == null ? OrderingRules.DEFAULTS : orderingRules;
  }

  /** A queue that inherits every preemption bound and orders FIFO. */
  public QueueConfig(String path, List<String> children, Capacity capacity, Capacity maximumCapacity,
      double userLimitFactor, double weight) {
    this(path, children, capacity, maximumCapacity, userLimitFactor, weight, QueuePreemption.INHERIT,
        AppOrdering.FIFO, 100, QueueLabels.INHERIT, OrderingRules.DEFAULTS, 0);
  }

  /** This queue with {@code c} as its capacity. */
  public QueueConfig withCapacity(Capacity c) {
    return new QueueConfig(path, children, c, maximumCapacity, userLimitFactor, weight, preemption, ordering,
        minimumUserLimitPercent, labels, orderingRules, hotSparesPerRack);
  }

  public boolean isLeaf() {
    return children.isEmpty();
  }

  public String name() {
    return path.substring(path.lastIndexOf('.') + 1);
  }

  public String parentPath() {
    int dot = path.lastIndexOf('.');
    return dot < 0 ? null : path.substring(0, dot);
  }
}
