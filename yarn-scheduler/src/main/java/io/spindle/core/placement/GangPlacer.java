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

  /** {@link #placeNear(Resources, int, int, Collection, Collection)} with no hot spares. */
  public List<Placement> placeNear(Resources shape, int members, int requiredDepth, Collection<NodeId> near) {
    return placeNear(shape, members, requiredDepth, near, List.of());
  }

  /**
   * One placement per member of a gang restarting near the nodes it ran on ({@code near}), {@code null} when it does
   * not fit now. In this order: all on those nodes, if they hold it; else those nodes keep what they hold and the rest
   * go within the smallest subtree around them (the rack before the next level up), on usable reserved nodes there
   * first (its queue's hot spares), then on free nodes; else, where the gang may span the cluster, whole inside one
   * subtree wherever one holds it (as a new gang that prefers one goes); else its nodes, then any usable reserved
   * node (those in its racks first), then any free node.
   *
   * <p>Keeping the survivors' nodes matters most for a gang over many racks: no subtree below the cluster holds it,
   * and placing it afresh would move members that never failed.
   *
   * @param requiredDepth the highest level the gang may span; every member stays within the same subtree there
   * @param usable reservations whose nodes it may take: its own, and the hot spares of its queue ({@link SparePool#of})
   */
  public List<Placement> placeNear(Resources shape, int members, int requiredDepth, Collection<NodeId> near,
      Collection<Reservation> usable) {
    Set<Reservation> mayUse = new HashSet<>();
    List<NodeState> spareNodes = new ArrayList<>();
    for (Reservation r : usable) {
      if (cluster.reservation(r.owner()) == r && mayUse.add(r)) {
        spareNodes.addAll(r.nodes());
      }
    }
    List<NodeState> own = new ArrayList<>();
    for (NodeId id : new LinkedHashSet<>(near)) {
      NodeState n = cluster.node(id);
      if (n != null && (n.reservation == null || mayUse.contains(n.reservation))) {
        own.add(n);
      }
    }
    if (!own.isEmpty() && capacity(own, shape, members, null) >= members) {
      List<Placement> onOwn = distribute(own, shape, members);
      if (onOwn != null) {
        return onOwn;
      }
    }
    int nodeDepth = cluster.topology().levels().size();
    for (int depth = nodeDepth - 1; depth >= Math.max(0, requiredDepth); depth--) {
      Set<Subtree> tried = new HashSet<>();
      for (NodeState n : own) {
        Subtree sub = n.ancestors.get(depth);
        if (tried.add(sub) && mayHold(sub, shape, members)) {
          List<Placement> there = fill(within(own, sub), within(spareNodes, sub), sub.nodes, mayUse, shape, members);
          if (there != null) {
            return there;
          }
        }
      }
    }
    if (requiredDepth >= 0 && !own.isEmpty()) {
      return null;
    }
    List<Placement> whole = nodeDepth > 0 ? place(shape, members, Math.max(0, requiredDepth), null)
        : onOneNode(shape, members);
    if (whole != null || requiredDepth >= 0) {
      return whole;
    }
    // Spares in the gang's own racks before those elsewhere.
    Set<Subtree> racks = new HashSet<>();
    for (NodeState n : own) {
      racks.addAll(n.ancestors);
    }
    List<NodeState> sparesNear = new ArrayList<>();
    List<NodeState> sparesFar = new ArrayList<>();
    for (NodeState n : spareNodes) {
      (n.ancestors.isEmpty() || racks.contains(n.ancestors.get(n.ancestors.size() - 1)) ? sparesNear : sparesFar)
          .add(n);
    }
    sparesNear.addAll(sparesFar);
    return fill(own, sparesNear, cluster.nodeStates(), mayUse, shape, members);
  }

  private static List<NodeState> within(List<NodeState> nodes, Subtree sub) {
    List<NodeState> out = new ArrayList<>();
    for (NodeState n : nodes) {
      if (sub.nodes.contains(n)) {
        out.add(n);
      }
    }
    return out;
  }

  /**
   * Members on {@code own} then {@code spares}, in order, each node holding what it can, the rest spread over the
   * nodes of {@code others} that are unreserved or reserved by {@code mayUse}, as {@link #distribute} does; {@code null} if they do not hold
   * them all.
   */
  private static List<Placement> fill(List<NodeState> own, List<NodeState> spares, Collection<NodeState> others,
      Set<Reservation> mayUse, Resources shape, int members) {
    List<Placement> out = new ArrayList<>(members);
    int remaining = members;
    Set<NodeState> used = new HashSet<>();
    for (List<NodeState> group : List.of(own, spares)) {
      for (NodeState n : group) {
        int here = remaining == 0 || !used.add(n) ? 0 : n.gangCapacityFor(shape, remaining);
        if (here > 0) {
          List<Placement> placed = placeOnNode(n, shape, here);
          if (placed == null) {
            return null;
          }
          out.addAll(placed);
          remaining -= here;
        }
      }
    }
    if (remaining == 0) {
      return out;
    }
    List<NodeState> rest = new ArrayList<>();
    long room = 0;
    for (NodeState n : others) {
      if ((n.reservation == null || mayUse.contains(n.reservation)) && !used.contains(n)) {
        int cap = n.gangCapacityFor(shape, remaining);
        if (cap > 0) {
          rest.add(n);
          room += cap;
        }
      }
    }
    List<Placement> more = room < remaining ? null : distribute(rest, shape, remaining);
    if (more == null) {
      return null;
    }
    out.addAll(more);
    return out;
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
      if (state.reservation == null && state.gangCapacityFor(shape, members) >= members) {
        return placeOnNode(state, shape, members);
      }
    }
    return null;
  }

  /**
   * Reserves nodes for a gang that does not fit now, as {@code plan} chooses them; {@code null} when no unreserved
   * set of nodes could ever hold it.
   *
   * @param createdMillis when the gang first reserved (its lifetime counts from then)
   */
  public Reservation reserve(RequestRef owner, Resources shape, int members, int requiredDepth, long createdMillis,
      RunningWork work) {
    Reservation r = plan(owner, shape, members, requiredDepth, createdMillis, new FitTimes(work), null);
    if (r != null) {
      cluster.reserve(r);
    }
    return r;
  }

  /**
   * Moves {@code current} to other nodes if they are expected to hold the gang at least {@code minGainMillis}
   * sooner: the estimate changed since it was made (work ended early elsewhere, or later than expected on its own
   * nodes). The moved reservation keeps its creation time, so its lifetime runs on. Returns the reservation now held
   * (the same one when nothing better exists).
   */
  public Reservation replan(Reservation current, Resources shape, int members, int requiredDepth, RunningWork work,
      long minGainMillis) {
    FitTimes fits = new FitTimes(work);
    Reservation better = plan(current.owner(), shape, members, requiredDepth, current.createdMillis(), fits, current);
    if (better == null || better.nodeIds().equals(current.nodeIds()) || !soonerBy(
        fits.fitsAt(better.nodes(), shape, members), fits.fitsAt(current.nodes(), shape, members), minGainMillis)) {
      return current; // Untouched: where nothing changed, re-planning changes nothing, not even the order.
    }
    cluster.releaseReservation(current);
    cluster.reserve(better);
    return better;
  }

  /**
   * When the reserved nodes are expected to hold the gang (see {@link FitTimes}): {@code Long.MIN_VALUE} if they do
   * already, {@code Long.MAX_VALUE} if a container that declared no end must end first.
   */
  public long fitsAtMillis(Reservation r, Resources shape, int members, RunningWork work) {
    return new FitTimes(work).fitsAt(r.nodes(), shape, members);
  }

  /**
   * Whether a candidate is worth a move. One that holds the gang already is not: the gang is placed in this cycle
   * wherever it fits best, as without a reservation.
   */
  private static boolean soonerBy(long candidate, long current, long minGainMillis) {
    if (candidate == Long.MAX_VALUE || candidate == FitTimes.NOW) {
      return false;
    }
    return current == Long.MAX_VALUE || candidate <= current - minGainMillis;
  }

  /**
   * The nodes to reserve for a gang that does not fit now, not yet held: at the lowest level where a subtree's nodes,
   * once drained, hold the gang, those expected to hold it soonest (what runs there ends by then), then those with the
   * most room already free. Where nothing is known of when work ends this is the most free room, so the wait is
   * short. {@code null} when no unreserved set of nodes could ever hold it. The nodes of {@code own} (the gang's
   * reservation being re-planned, or {@code null}) count as unreserved.
   */
  private Reservation plan(RequestRef owner, Resources shape, int members, int requiredDepth, long createdMillis,
      FitTimes fits, Reservation own) {
    NodeState bestNode = null;
    long bestFit = Long.MAX_VALUE;
    for (NodeState state : cluster.nodeStates()) {
      if (mayReserve(state, own) && state.emptyCapacityFor(shape, members) >= members) {
        long fit = fits.fitsAt(List.of(state), shape, members);
        if (bestNode == null || fit < bestFit
            || (fit == bestFit && state.gangCapacityFor(shape, members) > bestNode.gangCapacityFor(shape, members))) {
          bestNode = state;
          bestFit = fit;
        }
      }
    }
    if (bestNode != null) {
      return new Reservation(owner, bestNode.id().value(), List.of(bestNode), createdMillis);
    }
    for (int depth = cluster.topology().levels().size() - 1; depth >= Math.max(0, requiredDepth); depth--) {
      Reservation best = null;
      long bestFree = -1;
      bestFit = Long.MAX_VALUE;
      for (Subtree sub : cluster.subtreesAt(depth)) {
        List<NodeState> chosen = drainSet(sub.nodes, shape, members, fits, own);
        if (chosen != null) {
          long fit = fits.fitsAt(chosen, shape, members);
          long free = chosen.stream().mapToLong(n -> n.gangCapacityFor(shape, members)).sum();
          if (best == null || fit < bestFit || (fit == bestFit && free > bestFree)) {
            best = new Reservation(owner, sub.path, chosen, createdMillis);
            bestFree = free;
            bestFit = fit;
          }
        }
      }
      if (best != null) {
        return best;
      }
    }
    if (requiredDepth < 0) {
      List<NodeState> chosen = drainSet(cluster.nodeStates(), shape, members, fits, own);
      if (chosen != null) {
        return new Reservation(owner, "/", chosen, createdMillis);
      }
    }
    return null;
  }

  /**
   * Places one container on nodes reserved for gangs, if it declares that it ends ({@code endsAtMillis}) before the
   * reservation's projected start, so backfill never delays the gang. {@code null} when none has room.
   */
  public Placement findBackfill(Resources shape, long endsAtMillis) {
    List<Placement> one = findBackfill(shape, 1, endsAtMillis);
    return one == null ? null : one.get(0);
  }

  /**
   * Places {@code members} containers together on one node reserved for a gang, if they declare that they end
   * ({@code endsAtMillis}) before the reservation's projected start, so backfill never delays the gang: a small gang
   * may use a draining node as a single container may. Nothing backfills a reservation whose projected start is
   * unknown. {@code null} when no such node has room for them all.
   */
  public List<Placement> findBackfill(Resources shape, int members, long endsAtMillis) {
    for (Reservation r : cluster.reservations()) {
      if (r.projectedStartMillis() == Long.MAX_VALUE || endsAtMillis > r.projectedStartMillis()) {
        continue;
      }
      for (NodeState state : r.nodes()) {
        if (state.gangCapacityFor(shape, members) >= members) {
          List<Placement> p = placeOnNode(state, shape, members);
          if (p != null) {
            return p;
          }
        }
      }
    }
    return null;
  }

  /**
   * Holds {@code nodeIds} for a gang, named by the lowest subtree that contains them all, as made at
   * {@code createdMillis}; {@code null}, with nothing held, when one is unknown or held for another gang.
   */
  public Reservation reserveOn(RequestRef owner, List<NodeId> nodeIds, long createdMillis) {
    List<Subtree> common = null;
    for (NodeId id : nodeIds) {
      NodeState state = cluster.node(id);
      if (state == null || state.reservation != null) {
        return null;
      }
      common = common == null ? new ArrayList<>(state.ancestors) : common;
      common.retainAll(state.ancestors);
    }
    if (common == null) {
      return null;
    }
    String subtree = nodeIds.size() == 1 ? nodeIds.get(0).value()
        : common.isEmpty() ? "/" : common.get(common.size() - 1).path;
    return cluster.reserveAgain(owner, subtree, nodeIds, createdMillis);
  }

  private static boolean mayReserve(NodeState n, Reservation own) {
    return n.cordonReason == null && (n.reservation == null || n.reservation == own);
  }

  /**
   * Unreserved nodes, those expected to drain soonest first (then the most free room), until their empty capacity
   * holds the gang; {@code null} if never.
   */
  private static List<NodeState> drainSet(Collection<NodeState> nodes, Resources shape, int members, FitTimes fits,
      Reservation own) {
    List<NodeState> free = new ArrayList<>();
    Map<NodeState, Long> drained = new HashMap<>();
    for (NodeState n : nodes) {
      if (mayReserve(n, own) && n.emptyCapacityFor(shape, members) > 0) {
        free.add(n);
        drained.put(n, fits.drainedAt(List.of(n)));
      }
    }
    free.sort(Comparator.comparingLong((NodeState n) -> drained.get(n))
        .thenComparingInt(n -> -n.gangCapacityFor(shape, members)).thenComparingInt(n -> n.seq));
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
        total += n.gangCapacityFor(shape, members);
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
  static List<Placement> distribute(List<NodeState> nodes, Resources shape, int members) {
    // Capacities are computed once: sorting calls the comparator O(n log n) times.
    List<long[]> withRoom = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      int cap = nodes.get(i).gangCapacityFor(shape, members);
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
      block = per == 0 ? List.of() : node.chooseWholeGpus(per * count, true);
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
