package io.spindle.core.placement;

import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * When waiting requests are expected to start, by replaying the drain of what runs: the running containers end at
 * their expected ends, in time order, and the requests of one queue are served in the queue's order, each at the
 * first moment its members fit on nodes it may use (unreserved ones, and its own reservation's), holding what it
 * takes until its own expected end. It answers status views ({@code why}, the status API); the engine never decides
 * anything from it.
 *
 * <p>What it leaves out, on purpose, so that it stays a cheap sweep (one pass over the ends, one pass over the nodes
 * per request): work not yet submitted; the other queues' waiting requests (each queue is forecast as if its requests
 * were the next to be served, which is optimistic where queues compete for the same nodes); fair share, queue and
 * user limits; topology levels a gang requires (room is summed over nodes, as {@link FitTimes} does); backfill of a
 * later, smaller request ahead of the queue's order (a request starts no earlier than those ahead of it, unless one
 * ahead can never be placed on what is known). A reservation's nodes are its gang's until the forecast starts that
 * gang, anyone's after. MIG instances and GPU shares, whose room depends on which slices free, are forecast only when
 * they fit now.
 *
 * <p>One instance answers for one state of the cluster; {@link #startTimes} may be called once per queue.
 */
public final class DrainForecast {

  /**
   * A running container and when it is expected to end.
   *
   * @param endMillis {@code Long.MAX_VALUE} when nothing is known (it never frees room in the forecast)
   */
  public record Ending(Resources shape, Placement placement, long endMillis) {}

  /**
   * A waiting request, as the forecast serves it.
   *
   * @param members containers it waits to start together (all its outstanding ones)
   * @param runMillis how long each runs once started; {@code Long.MAX_VALUE} when unknown (it never frees room)
   * @param own its reservation, whose nodes it may use besides unreserved ones; {@code null} if none
   */
  public record Ask(Resources shape, int members, long runMillis, Reservation own) {}

  private final List<NodeState> nodes;
  private final Map<NodeId, Integer> index = new HashMap<>();
  /** The running containers' finite ends, soonest first. */
  private final List<Freed> ends = new ArrayList<>();
  /** Reservations whose gang the forecast has started, in this call of {@link #startTimes}. */
  private final Set<Reservation> released = Collections.newSetFromMap(new IdentityHashMap<>());

  /** {@code running}: every running container by node, as the engine knows them. */
  public DrainForecast(ClusterState cluster, Map<NodeId, List<Ending>> running) {
    this.nodes = new ArrayList<>(cluster.nodeStates());
    for (int i = 0; i < nodes.size(); i++) {
      index.put(nodes.get(i).id(), i);
    }
    running.forEach((node, list) -> {
      Integer i = index.get(node);
      if (i == null) {
        return;
      }
      for (Ending e : list) {
        if (e.endMillis() != Long.MAX_VALUE) {
          ends.add(new Freed(e.endMillis(), i, e.shape().memoryMb(), e.shape().vcores(), e.placement().wholeGpus()));
        }
      }
    });
    ends.sort(Comparator.comparingLong(Freed::atMillis).thenComparingInt(Freed::node));
  }

  /**
   * When each of {@code asks}, served in this order from {@code nowMillis}, is expected to start: {@code nowMillis}
   * when it fits now, {@code Long.MAX_VALUE} when the known ends never leave room for it.
   */
  public long[] startTimes(List<Ask> asks, long nowMillis) {
    released.clear();
    long[][] freed = new long[nodes.size()][3];
    PriorityQueue<Freed> added = new PriorityQueue<>(Comparator.comparingLong(Freed::atMillis));
    int next = 0;
    long t = nowMillis;
    long[] out = new long[asks.size()];
    for (int a = 0; a < asks.size(); a++) {
      Ask ask = asks.get(a);
      if (ask.shape().wantsMig() || ask.shape().wantsShare()) {
        out[a] = fitsNow(ask) ? t : Long.MAX_VALUE;
        continue;
      }
      long total = 0;
      for (int i = 0; i < nodes.size(); i++) {
        total += room(i, ask, freed);
      }
      // Ends are consumed only while this request waits for them; one that never fits consumes nothing, so the
      // requests behind it are forecast from the same moment (the engine, too, serves them while it waits).
      int nextBefore = next;
      List<Freed> taken = new ArrayList<>();
      long at = t;
      while (total < ask.members()) {
        Freed f = pick(next, added);
        if (f == null) {
          break;
        }
        if (f.added()) {
          added.poll();
        } else {
          next++;
        }
        taken.add(f);
        long before = room(f.node(), ask, freed);
        apply(freed[f.node()], f, 1);
        total += room(f.node(), ask, freed) - before;
        at = Math.max(at, f.atMillis());
      }
      if (total < ask.members()) {
        for (Freed f : taken) { // Undone: the ends stay for the requests behind it.
          apply(freed[f.node()], f, -1);
          if (f.added()) {
            added.add(f);
          }
        }
        next = nextBefore;
        out[a] = Long.MAX_VALUE;
        continue;
      }
      t = at;
      out[a] = t;
      place(ask, t, freed, added);
      if (ask.own() != null) {
        released.add(ask.own()); // Its gang started: from then on its nodes are anyone's.
      }
    }
    return out;
  }

  private Freed pick(int next, PriorityQueue<Freed> added) {
    Freed base = next < ends.size() ? ends.get(next) : null;
    Freed extra = added.peek();
    if (base == null) {
      return extra;
    }
    return extra == null || base.atMillis() <= extra.atMillis() ? base : extra;
  }

  /** Takes the ask's room from the nodes it may use, in node order, and frees it again at its expected end. */
  private void place(Ask ask, long start, long[][] freed, PriorityQueue<Freed> added) {
    int left = ask.members();
    Resources s = ask.shape();
    for (int i = 0; i < nodes.size() && left > 0; i++) {
      int take = Math.min(left, room(i, ask, freed));
      if (take <= 0) {
        continue;
      }
      left -= take;
      Freed held = new Freed(start, i, take * s.memoryMb(), take * s.vcores(), (long) take * s.gpus(), true);
      apply(freed[i], held, -1);
      if (ask.runMillis() != Long.MAX_VALUE) {
        added.add(new Freed(saturatedAdd(start, ask.runMillis()), i, held.memoryMb(), held.vcores(), held.gpus(),
            true));
      }
    }
  }

  private int room(int i, Ask ask, long[][] freed) {
    NodeState n = nodes.get(i);
    if (n.reservation != null && n.reservation != ask.own() && !released.contains(n.reservation)) {
      return 0; // Held for another gang: only backfill that ends in time goes there, which is not forecast.
    }
    long[] f = freed[i];
    return n.capacityWithFreed(ask.shape(), ask.members(), f[0], f[1], f[2]);
  }

  private boolean fitsNow(Ask ask) {
    int total = 0;
    for (NodeState n : nodes) {
      if (n.reservation == null || n.reservation == ask.own()) {
        total += n.capacityFor(ask.shape(), ask.members());
        if (total >= ask.members()) {
          return true;
        }
      }
    }
    return false;
  }

  private static void apply(long[] sum, Freed f, int sign) {
    sum[0] += sign * f.memoryMb();
    sum[1] += sign * f.vcores();
    sum[2] += sign * f.gpus();
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }

  /** Room freed on node {@code node} at {@code atMillis}; {@code added} for ends of requests the forecast placed. */
  private record Freed(long atMillis, int node, long memoryMb, long vcores, long gpus, boolean added) {
    Freed(long atMillis, int node, long memoryMb, long vcores, long gpus) {
      this(atMillis, node, memoryMb, vcores, gpus, false);
    }
  }
}
