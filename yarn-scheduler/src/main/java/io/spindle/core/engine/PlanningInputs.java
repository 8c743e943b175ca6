package io.spindle.core.engine;

import io.spindle.core.model.NodeId;
import io.spindle.core.model.RequestRef;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.queue.QueueShare;
import java.util.List;

/**
 * Everything preemption planning reads, reduced to what can change its outcome. Planning walks every running gang;
 * in a cluster that stays oversubscribed the same starved requests would be planned for in vain every cycle, so a
 * cycle whose inputs equal those of the last planning that found nothing skips it.
 *
 * @param changes starts, releases and checkpoint reports so far
 * @param period the starvation period now falls in: work lost grows with time, which can reorder victims, so
 *     planning runs again at least once per period
 * @param queues each queue's usage and share, parents first
 */
record PlanningInputs(long changes, long period, ResourceVector capacity, ResourceVector rootPending,
    List<QueueFigures> queues, List<Held> reservations, List<Reclaim> reclaims, List<Starved> starved) {

  PlanningInputs {
    queues = List.copyOf(queues);
    reservations = List.copyOf(reservations);
    reclaims = List.copyOf(reclaims);
    starved = List.copyOf(starved);
  }

  record QueueFigures(ResourceVector usage, QueueShare share) {}

  record Held(RequestRef owner, List<NodeId> nodeIds) {
    Held {
      nodeIds = List.copyOf(nodeIds);
    }
  }

  record Reclaim(long planId, boolean withdrawn) {}

  /** A starved request, and whether its queue has starved long enough to take from other queues. */
  record Starved(RequestRef owner, int outstanding, boolean crossQueue) {}
}
