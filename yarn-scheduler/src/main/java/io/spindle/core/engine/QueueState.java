package io.spindle.core.engine;

import io.spindle.core.model.ResourceVector;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueShare;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/** Usage, pending demand and (for leaves) waiting applications of one queue. Mutable; owned by {@link Engine}. */
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

  void addUsage(ResourceVector delta) {
    for (QueueState q = this; q != null; q = q.parent) {
      q.usage = q.usage.plus(delta);
    }
  }

  void addPending(ResourceVector delta) {
    for (QueueState q = this; q != null; q = q.parent) {
      q.pending = q.pending.plus(delta);
    }
  }
}
