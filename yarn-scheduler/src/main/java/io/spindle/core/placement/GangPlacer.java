package io.spindle.core.placement;

import io.spindle.core.model.NodeId;
import io.spindle.core.model.RequestRef;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Places a gang — {@code members} containers of one shape that start together or not at all — in the lowest
 * topology subtree that holds it whole, and reserves the best subtree for it when none does yet.
 *
 * <p>Search order: one node (best fit: the fewest free GPUs that still hold every member, from the free-capacity
 * index; inside it the members' GPUs are chosen as one block, so they share an NVLink island when one is free),
 * then each topology level from the bottom (rack) up to the top, then the whole cluster — never above the gang's
 * required level. At a level, a subtree whose free-capacity sums cannot hold the gang is skipped without looking at
 * its nodes; among the subtrees that can, the best fit (least free GPU capacity left over) wins. Members are spread
 * over as few nodes as possible: the nodes with room for the most members first, and the last members on the
 * smallest node that holds them all.
 */
public final class GangPlacer {

  private final ClusterState cluster;
  /** {@link #whyNever} answers depend only on which nodes exist; kept until a node joins or leaves. */
  private final Map<NeverKey, String> neverCache = new HashMap<>();
  private long neverCacheVersion = -1;

  private record NeverKey(Resources shape, int members, int requiredDepth) {}

  public GangPlacer(ClusterState cluster) {
    this.cluster = cluster;
  }

  /**
   * One placement per member, or {@code null} when the gang does not fit now. Nodes reserved for other gangs are
   * not used; nodes of {@code own} are tried first.
   *
   * @param requiredDepth the highest level the gang may span (see {@link ClusterState#depthOf})
   */
  public List<Placement> place(Resources shape, int members, int requiredDepth, Reservation own) {
    if (own != null) {
      List<Placement> onReserved = distribute(own.nodes(), shape, members);
      if (onReserved != null) {
        return onReserved;
      }
    }
    int nodeDepth = cluster.topology().levels().size();
    List<Placement> single = onOneNode(shape, members);
    if (single != null) {
      return single;
    }
    if (requiredDepth >= nodeDepth) {
      return null;
    }
    for (int depth = nodeDepth - 1; depth >= Math.max(0, requiredDepth); depth--) {
      Subtree best = null;
      long bestLeftover = Long.MAX_VALUE;
      for (Subtree sub : cluster.subtreesAt(depth)) {
        if (!mayHold(sub, shape, members)) {
          continue;
        }
        if (capacity(sub.nodes, shape, members, own) >= members) {
          long leftover = leftover(sub, shape, members);
          if (leftover < bestLeftover) {
            best = sub;
            bestLeftover = leftover;
          }
        }
      }
      if (best != null) {
        return distribute(eligible(best.nodes, own), shape, members);
      }
    }
    if (requiredDepth < 0 && capacity(cluster.nodeStates(), shape, members, own) >= members) {
      return distribute(eligible(cluster.nodeStates(), own), shape, members);
    }
    return null;
  }

  /**
   * One placement per member for {@code members} more members of a running gang, as close to it as they fit: on the
   * gang's own nodes, else within the smallest subtree that holds one of them (the node's rack before the next level
   * up), else anywhere the gang may span; {@code null} when they do not fit now. Nodes reserved for gangs are not used.
   *
   * @param near the nodes the gang runs on
   * @param requiredDepth the highest level the gang may span; the new members stay within the same subtree there
   */
  public List<Placement> placeNear(Resources shape, int members, int requiredDepth, Collection<NodeId> near) {
    List<NodeState> own = new ArrayList<>();
    for (NodeId id : new LinkedHashSet<>(near)) {
      NodeState n = cluster.node(id);
      if (n != null) {
        own.add(n);
      }
    }
    if (own.isEmpty()) {
      return requiredDepth < 0 ? place(shape, members, -1, null) : null;
    }
    if (capacity(own, shape, members, null) >= members) {
      List<Placement> onOwn = distribute(eligible(own, null), shape, members);
      if (onOwn != null) {
        return onOwn;
      }
    }
    int nodeDepth = cluster.topology().levels().size();
    for (int depth = nodeDepth - 1; depth >= Math.max(0, requiredDepth); depth--) {
      Set<Subtree> tried = new HashSet<>();
      for (NodeState n : own) {
        Subtree sub = n.ancestors.get(depth);
        if (tried.add(sub) && mayHold(sub, shape, members) && capacity(sub.nodes, shape, members, null) >= members) {
          List<Placement> there = distribute(eligible(sub.nodes, null), shape, members);
          if (there != null) {
            return there;
          }
        }
      }
    }
    return requiredDepth < 0 ? place(shape, members, -1, null) : null;
  }

  /** The best single node from the free-capacity index, or {@code null}. */
  private List<Placement> onOneNode(Resources shape, int members) {
    if (!shape.wantsMig() && !shape.wantsShare()) {
      Resources block = Resources.of(shape.memoryMb() * members, shape.vcores() * members)
          .withGpus(shape.gpus() * members).withModels(shape.models()).withPartition(shape.partition());
      Placement p = cluster.find(block);
      return p == null ? null : placeOnNode(cluster.node(p.nodeId()), shape, members);
    }
    for (NodeState state : cluster.nodeStates()) {
      if (state.reservation == null && state.capacityFor(shape, members) >= members) {
        return placeOnNode(state, shape, members);
      }
    }
    return null;
  }

  /**
   * Reserves nodes for a gang that does not fit now: at the lowest level where a subtree's nodes, once drained,
   * hold the gang, the subtree (and within it the nodes) with the most room already free, so the wait is short.
   * {@code null} when no unreserved set of nodes could ever hold it.
   */
  public Reservation reserve(RequestRef owner, Resources shape, int members, int requiredDepth, long nowMillis) {
    int nodeDepth = cluster.topology().levels().size();
    List<Reservation> candidates = new ArrayList<>();
    NodeState bestNode = null;
    for (NodeState state : cluster.nodeStates()) {
      if (state.reservation == null && state.emptyCapacityFor(shape, members) >= members
          && (bestNode == null || state.capacityFor(shape, members) > bestNode.capacityFor(shape, members))) {
        bestNode = state;
      }
    }
    if (bestNode != null) {
      candidates.add(new Reservation(owner, bestNode.id().value(), List.of(bestNode), nowMillis));
    }
    for (int depth = nodeDepth - 1; candidates.isEmpty() && depth >= Math.max(0, requiredDepth); depth--) {
      Reservation best = null;
      long bestFree = -1;
      for (Subtree sub : cluster.subtreesAt(depth)) {
        List<NodeState> chosen = drainSet(sub.nodes, shape, members);
        if (chosen != null) {
          long free = chosen.stream().mapToLong(n -> n.capacityFor(shape, members)).sum();
          if (free > bestFree) {
            best = new Reservation(owner, sub.path, chosen, nowMillis);
            bestFree = free;
          }
        }
      }
      if (best != null) {
        candidates.add(best);
      }
    }
    if (candidates.isEmpty() && requiredDepth < 0) {
      List<NodeState> chosen = drainSet(cluster.nodeStates(), shape, members);
      if (chosen != null) {
        candidates.add(new Reservation(owner, "/", chosen, nowMillis));
      }
    }
    if (candidates.isEmpty()) {
      return null;
    }
    Reservation r = candidates.get(0);
    cluster.reserve(r);
    return r;
  }

  /** Unreserved nodes, most free room first, until their empty capacity holds the gang; {@code null} if never. */
  private static List<NodeState> drainSet(Collection<NodeState> nodes, Resources shape, int members) {
    List<NodeState> free = new ArrayList<>();
    for (NodeState n : nodes) {
      if (n.reservation == null && n.emptyCapacityFor(shape, members) > 0) {
        free.add(n);
      }
    }
    free.sort(Comparator.comparingInt((NodeState n) -> -n.capacityFor(shape, members)).thenComparingInt(n -> n.seq));
    List<NodeState> chosen = new ArrayList<>();
    int total = 0;
    for (NodeState n : free) {
      chosen.add(n);
      total += n.emptyCapacityFor(shape, members);
      if (total >= members) {
        return chosen;
      }
    }
    return null;
  }

  /**
   * Why the gang could never be placed as asked even on an empty cluster, or {@code null}: more members than the
   * cluster (or than any subtree of the required level) could ever hold.
   */
  public String whyNever(Resources shape, int members, int requiredDepth) {
    if (cluster.nodeCount() == 0) {
      return null;
    }
    if (neverCacheVersion != cluster.nodeSetVersion() || neverCache.size() > 4_096) {
      neverCache.clear();
      neverCacheVersion = cluster.nodeSetVersion();
    }
    NeverKey key = new NeverKey(shape, members, requiredDepth);
    if (neverCache.containsKey(key)) {
      return neverCache.get(key);
    }
    String why = computeWhyNever(shape, members, requiredDepth);
    neverCache.put(key, why);
    return why;
  }

  private String computeWhyNever(Resources shape, int members, int requiredDepth) {
    int nodeDepth = cluster.topology().levels().size();
    long whole = 0;
    for (NodeState n : cluster.nodeStates()) {
      whole += n.emptyCapacityFor(shape, members);
    }
    if (whole < members) {
      return "gang of " + members + " x " + shape + " is larger than the cluster: at most " + whole
          + " such containers fit on all nodes together";
    }
    if (requiredDepth < 0) {
      return null;
    }
    long most = 0;
    String where = "";
    if (requiredDepth >= nodeDepth) {
      for (NodeState n : cluster.nodeStates()) {
        most = Math.max(most, n.emptyCapacityFor(shape, members));
      }
      where = "node";
    } else {
      for (Subtree sub : cluster.subtreesAt(requiredDepth)) {
        long sum = 0;
        for (NodeState n : sub.nodes) {
          sum += n.emptyCapacityFor(shape, members);
        }
        most = Math.max(most, sum);
      }
      where = cluster.topology().levels().get(requiredDepth);
    }
    return most >= members ? null : "gang of " + members + " x " + shape + " must stay within one " + where
        + ", but no " + where + " can ever hold more than " + most + " of its members";
  }

  private static boolean mayHold(Subtree sub, Resources shape, int members) {
    return sub.freeWholeGpus >= (long) shape.gpus() * members
        && sub.freeMemoryMb >= shape.memoryMb() * members
        && sub.freeVcores >= (long) shape.vcores() * members;
  }

  private static long leftover(Subtree sub, Resources shape, int members) {
    return shape.gpus() > 0 ? sub.freeWholeGpus - (long) shape.gpus() * members
        : sub.freeMemoryMb - shape.memoryMb() * members;
  }

  private static long capacity(Collection<NodeState> nodes, Resources shape, int members, Reservation own) {
    long total = 0;
    for (NodeState n : nodes) {
      if (n.reservation == null || n.reservation == own) {
        total += n.capacityFor(shape, members);
        if (total >= members) {
          return total;
        }
      }
    }
    return total;
  }

  private static List<NodeState> eligible(Collection<NodeState> nodes, Reservation own) {
    List<NodeState> out = new ArrayList<>();
    for (NodeState n : nodes) {
      if (n.reservation == null || n.reservation == own) {
        out.add(n);
      }
    }
    return out;
  }

  /** Spreads the members over as few of the nodes as possible; {@code null} if they do not hold them all. */
  private static List<Placement> distribute(List<NodeState> nodes, Resources shape, int members) {
    // Capacities are computed once: sorting calls the comparator O(n log n) times.
    List<long[]> withRoom = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      int cap = nodes.get(i).capacityFor(shape, members);
      if (cap > 0) {
        withRoom.add(new long[] {cap, nodes.get(i).seq, i});
      }
    }
    withRoom.sort((a, b) -> a[0] != b[0] ? Long.compare(b[0], a[0]) : Long.compare(a[1], b[1]));
    List<Placement> out = new ArrayList<>(members);
    int remaining = members;
    for (int i = 0; i < withRoom.size() && remaining > 0; i++) {
      // The last members go to the smallest remaining node that holds them all (best fit).
      int fit = -1;
      for (int j = i; j < withRoom.size() && withRoom.get(j)[0] >= remaining; j++) {
        fit = j;
      }
      long[] chosen = withRoom.get(fit >= 0 ? fit : i);
      int here = (int) Math.min(remaining, chosen[0]);
      List<Placement> placed = placeOnNode(nodes.get((int) chosen[2]), shape, here);
      if (placed == null) {
        return null;
      }
      out.addAll(placed);
      remaining -= here;
      if (fit >= 0) {
        break;
      }
    }
    return remaining == 0 ? out : null;
  }

  /** {@code count} members on one node, their GPUs chosen as one block so they share NVLink islands. */
  static List<Placement> placeOnNode(NodeState node, Resources shape, int count) {
    List<GpuSlot> block;
    int per;
    if (shape.wantsShare()) {
      per = 1;
      block = node.chooseShares(shape, count);
    } else if (shape.wantsMig()) {
      per = shape.migInstances();
      block = node.chooseMigInstances(shape.migProfile(), per * count);
    } else {
      per = shape.gpus();
      block = per == 0 ? List.of() : node.chooseWholeGpus(per * count);
    }
    if (block == null) {
      return null;
    }
    List<Placement> out = new ArrayList<>(count);
    for (int m = 0; m < count; m++) {
      List<GpuSlot> mine = per == 0 ? List.of() : block.subList(m * per, (m + 1) * per);
      long units = 0;
      for (GpuSlot s : mine) {
        units += s.share() ? shape.shareUnits(node.node.gpuModel())
            : s.mig() == null ? ResourceVector.GPU_UNITS : s.mig().profile().gpuUnits();
      }
      out.add(new Placement(node.id(), mine, new ResourceVector(shape.memoryMb(), shape.vcores(), units)));
    }
    return out;
  }
}
