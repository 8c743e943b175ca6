package io.spindle.core.engine;

import io.spindle.core.model.ResourceVector;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueShare;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Usage, pending demand and (for leaves) waiting applications of one queue. Mutable; owned by {@link Engine}.
 *
 * <p>Partitions (node labels) are accounted apart, as CapacityScheduler does: {@link #usage}, {@link #pending},
 * {@link #userUsage} and {@link #share} are the default partition's — what fair share, limits, preemption and the
 * views of a cluster without labels see —, each labelled partition's are in {@link #labelled}. A container counts in
 * the partition of its request.
 */
final class QueueState {

  final QueueConfig config;
  final QueueState parent;
  final List<QueueState> children = new ArrayList<>();
  ResourceVector usage = ResourceVector.ZERO;
  ResourceVector pending = ResourceVector.ZERO;
  /** Leaves only: usage per user, for the user limit. */
  final Map<String, ResourceVector> userUsage = new HashMap<>();
  /** Leaves only: applications with outstanding demand, in scheduling order. */
  final TreeSet<AppState> waitingApps = new TreeSet<>(AppState.ORDER);

  /** This cycle's share. */
  QueueShare share;
  /** The labelled partitions' figures, by label; made when first charged or shared. */
  private final Map<String, PartitionUse> labelled = new TreeMap<>();
  /** This cycle: leaves below (or this leaf) that may still place something. */
  int activeLeaves;

  QueueState(QueueConfig config, QueueState parent) {
    this.config = config;
    this.parent = parent;
  }

  boolean isLeaf() {
    return children.isEmpty();
  }

  String path() {
    return config.path();
  }

  /**
   * Whether this leaf orders by a rank ({@code shortest-first}, {@code least-attained}): then what its applications
   * have run, when they were submitted and what they declared are kept for a failover.
   */
  boolean ranked() {
    return config.ordering().ranked();
  }

  /** CapacityScheduler's {@code disable_preemption}, inherited down the tree: no container here is a victim. */
  boolean preemptionDisabled() {
    for (QueueState q = this; q != null; q = q.parent) {
      Boolean disabled = q.config.preemption().disabled();
      if (disabled != null) {
        return disabled;
      }
    }
    return false;
  }

  /**
   * {@code spindle.preemption.min-runtime-seconds}, inherited down the tree: work of this queue younger than this
   * (since it last started) is taken by no preemption. None unless a queue on the path sets it.
   */
  long preemptionMinRuntimeMillis() {
    for (QueueState q = this; q != null; q = q.parent) {
      Long millis = q.config.preemption().minRuntimeMillis();
      if (millis != null) {
        return millis;
      }
    }
    return 0;
  }

  /**
   * {@code spindle.preemption.delay-seconds}, inherited down the tree: how long a request of this queue waits for
   * capacity to free by itself before anything is preempted for it; {@code clusterMillis} (the cluster's
   * {@code starvation-seconds}) unless a queue on the path sets it.
   */
  long preemptionDelayMillis(long clusterMillis) {
    for (QueueState q = this; q != null; q = q.parent) {
      Long millis = q.config.preemption().delayMillis();
      if (millis != null) {
        return millis;
      }
    }
    return clusterMillis;
  }

  /** Charges {@code delta} in {@code partition} to this queue and every queue above it. */
  void addUsage(String partition, ResourceVector delta) {
    for (QueueState q = this; q != null; q = q.parent) {
      if (partition.isEmpty()) {
        q.usage = q.usage.plus(delta);
      } else {
        PartitionUse p = q.use(partition);
        p.usage = p.usage.plus(delta);
      }
    }
  }

  void addPending(String partition, ResourceVector delta) {
    for (QueueState q = this; q != null; q = q.parent) {
      if (partition.isEmpty()) {
        q.pending = q.pending.plus(delta);
      } else {
        PartitionUse p = q.use(partition);
        p.pending = p.pending.plus(delta);
      }
    }
  }

  ResourceVector usage(String partition) {
    return partition.isEmpty() ? usage : use(partition).usage;
  }

  ResourceVector pending(String partition) {
    return partition.isEmpty() ? pending : use(partition).pending;
  }

  /** Leaves: what each user holds in {@code partition}. */
  Map<String, ResourceVector> userUsage(String partition) {
    return partition.isEmpty() ? userUsage : use(partition).userUsage;
  }

  /** This cycle's share in {@code partition}; {@code null} before the cycle computed it. */
  QueueShare share(String partition) {
    return partition.isEmpty() ? share : use(partition).share;
  }

  void share(String partition, QueueShare s) {
    if (partition.isEmpty()) {
      share = s;
    } else {
      use(partition).share = s;
    }
  }

  private PartitionUse use(String partition) {
    return labelled.computeIfAbsent(partition, k -> new PartitionUse());
  }

  /** One labelled partition's figures of this queue. */
  private static final class PartitionUse {
    ResourceVector usage = ResourceVector.ZERO;
    ResourceVector pending = ResourceVector.ZERO;
    final Map<String, ResourceVector> userUsage = new HashMap<>();
    QueueShare share;
  }
}
