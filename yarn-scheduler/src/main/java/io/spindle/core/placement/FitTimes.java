package io.spindle.core.placement;

import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * When draining nodes are expected to hold a gang, from when what runs on them is expected to end. A gang that needs
 * half of a node waits only for half of it to drain (the first ends that free the room), not for its last container:
 * the time the gang is due — its reservation's projected start, the bound for backfill on its nodes and the base of
 * its lifetime — is the earliest moment the containers expected to have ended by then leave room for every member
 * (as EASY backfilling's shadow time). Room is counted in memory, vcores and whole GPUs; for MIG instances and GPU
 * shares, whose room depends on which slices free up, only an empty node is certain, so they wait for the full drain.
 *
 * <p>One instance answers for one state of the cluster (a cycle's planning step); it remembers what it was told of
 * each node.
 */
final class FitTimes {

  /** Answered for nodes that hold the gang already. */
  static final long NOW = Long.MIN_VALUE;

  private final RunningWork work;
  private final Map<NodeState, List<RunningWork.Running>> running = new HashMap<>();

  FitTimes(RunningWork work) {
    this.work = work;
  }

  /**
   * When the last container on {@code nodes} is expected to end: {@link #NOW} when none runs, {@code Long.MAX_VALUE}
   * when one declared no end.
   */
  long drainedAt(List<NodeState> nodes) {
    long latest = NOW;
    for (NodeState n : nodes) {
      for (RunningWork.Running r : on(n)) {
        latest = Math.max(latest, r.expectedEndMillis());
      }
    }
    return latest;
  }

  /**
   * When {@code nodes} together are expected to have room for {@code members} containers of {@code shape}: {@link
   * #NOW} if they have already; the expected end of the container whose end completes the room (possibly past, if it
   * overran); {@code Long.MAX_VALUE} when a container that declared no end must end first.
   */
  long fitsAt(List<NodeState> nodes, Resources shape, int members) {
    if (shape.wantsMig() || shape.wantsShare()) {
      return drainedAt(nodes);
    }
    int[] room = new int[nodes.size()];
    long total = 0;
    List<Freed> ends = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      room[i] = nodes.get(i).capacityFor(shape, members);
      total += room[i];
      for (RunningWork.Running r : on(nodes.get(i))) {
        ends.add(new Freed(i, r));
      }
    }
    if (total >= members) {
      return NOW;
    }
    ends.sort(Comparator.comparingLong(f -> f.running.expectedEndMillis()));
    long[][] freed = new long[nodes.size()][3];
    for (Freed f : ends) {
      long end = f.running.expectedEndMillis();
      if (end == Long.MAX_VALUE) {
        return Long.MAX_VALUE;
      }
      long[] sum = freed[f.node];
      sum[0] += f.running.shape().memoryMb();
      sum[1] += f.running.shape().vcores();
      sum[2] += f.running.placement().wholeGpus();
      int now = nodes.get(f.node).capacityWithFreed(shape, members, sum[0], sum[1], sum[2]);
      total += now - room[f.node];
      room[f.node] = now;
      if (total >= members) {
        return end;
      }
    }
    // Counted room fell short (shared GPUs free whole only with their last share): once empty, the nodes hold it.
    return drainedAt(nodes);
  }

  private List<RunningWork.Running> on(NodeState n) {
    return running.computeIfAbsent(n, k -> work.on(k.id()));
  }

  private record Freed(int node, RunningWork.Running running) {}
}
