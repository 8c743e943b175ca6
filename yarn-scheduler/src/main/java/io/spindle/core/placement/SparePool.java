package io.spindle.core.placement;

import io.spindle.core.model.AppId;
import io.spindle.core.model.Node;
import io.spindle.core.model.RequestRef;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Hot spares: in every rack, whole idle nodes held back from normal placement for one leaf queue's gangs that restart
 * after losing hardware (issue #25). A gang of 1,024 nodes that loses one GPU in a full cluster otherwise waits for a
 * whole node to drain somewhere — hours of other work — while its 1,023 healthy nodes sit idle; with a spare in the
 * rack it restarts at once, next to the nodes it kept.
 *
 * <p>The spares of one leaf in one rack are one {@linkplain Reservation#spare() spare reservation}, so every other
 * placement path already leaves them alone (they are out of the free-capacity index, as any reserved node). They are
 * chosen among nodes that are idle and sound ({@link NodeState#idleAndSound}): nothing runs there, no cordon, every
 * GPU in service; only nodes of the default partition, in registration order. A spare whose GPU leaves service, or
 * that is cordoned, removed or taken by a restarting gang, is replaced by {@link #refresh} from the rack's idle nodes
 * as they appear: the pool is refilled before the placement pass, so the next node to empty in a short rack becomes
 * a spare rather than going to waiting work.
 *
 * <p>Spares are lent ({@link #lend}) only to work the engine may hold them up for briefly: the caller's rule (the
 * engine lends to preemptible work that declares it ends soon). A borrowed spare stays a spare; the restarting gang
 * counts only its free room, and waits for the rest.
 *
 * <p>Nothing here is saved across a failover: a new leader builds the pools afresh on its first cycle.
 */
public final class SparePool {

  /** The application every spare reservation names as its owner; no YARN application has this id. */
  public static final AppId OWNER = AppId.of("hot-spares");

  private final ClusterState cluster;
  /** Spare reservations by leaf, then by rack path; both in name order so that iteration is deterministic. */
  private final Map<String, Map<String, Reservation>> pools = new TreeMap<>();

  public SparePool(ClusterState cluster) {
    this.cluster = cluster;
  }

  /**
   * Brings every leaf's pools to {@code wanted} spares per rack (leaves absent or at 0 give theirs back), as far as
   * idle sound nodes allow.
   *
   * @param wanted spares per rack, by leaf path
   */
  public void refresh(Map<String, Integer> wanted, long nowMillis) {
    for (String leaf : new ArrayList<>(pools.keySet())) {
      if (wanted.getOrDefault(leaf, 0) <= 0) {
        pools.remove(leaf).values().forEach(cluster::releaseReservation);
      }
    }
    if (wanted.isEmpty()) {
      return;
    }
    List<Subtree> racks = racks();
    new TreeMap<>(wanted).forEach((leaf, n) -> {
      if (n > 0) {
        Map<String, Reservation> byRack = pools.computeIfAbsent(leaf, k -> new TreeMap<>());
        for (Subtree rack : racks) {
          refreshRack(leaf, rack == null ? "/" : rack.path, rack == null ? cluster.nodeStates() : rack.nodes, n,
              rack == null ? Long.MAX_VALUE : rack.freeWholeGpus, byRack, nowMillis);
        }
      }
    });
  }

  /** The spare reservations of {@code leaf}, by rack path order; empty when it keeps none. */
  public Collection<Reservation> of(String leaf) {
    Map<String, Reservation> byRack = pools.get(leaf);
    return byRack == null ? List.of() : List.copyOf(byRack.values());
  }

  /** Nodes held as spares now, over every leaf and rack. */
  public int nodesHeld() {
    int n = 0;
    for (Map<String, Reservation> byRack : pools.values()) {
      for (Reservation r : byRack.values()) {
        n += r.nodes().size();
      }
    }
    return n;
  }

  /**
   * Places {@code members} containers (a single container, or a small gang) together on the spares of one leaf in
   * one rack, the first pool in name order with room; {@code null} when none has room. The caller decides what may
   * borrow.
   */
  public List<Placement> lend(Resources shape, int members) {
    for (Map<String, Reservation> byRack : pools.values()) {
      for (Reservation r : byRack.values()) {
        if (cluster.reservation(r.owner()) == r) {
          List<Placement> p = GangPlacer.distribute(r.nodes(), shape, members);
          if (p != null) {
            return p;
          }
        }
      }
    }
    return null;
  }

  /**
   * A restarting gang was placed at {@code placements}: the spares among their nodes are its nodes now and leave their
   * pools ({@link #refresh} replaces them as idle nodes appear). A borrowed spare, by contrast, stays a spare.
   */
  public void taken(List<Placement> placements) {
    java.util.Set<io.spindle.core.model.NodeId> nodes = new java.util.HashSet<>();
    for (Placement p : placements) {
      nodes.add(p.nodeId());
    }
    for (Map<String, Reservation> byRack : pools.values()) {
      for (Map.Entry<String, Reservation> e : byRack.entrySet()) {
        Reservation r = e.getValue();
        if (cluster.reservation(r.owner()) != r || r.nodes().stream().noneMatch(n -> nodes.contains(n.id()))) {
          continue;
        }
        cluster.releaseReservation(r);
        List<NodeState> left = r.nodes().stream().filter(n -> !nodes.contains(n.id())).toList();
        Reservation rest = new Reservation(r.owner(), r.subtree(), left, r.createdMillis(), true);
        if (!left.isEmpty()) {
          cluster.reserve(rest);
        }
        e.setValue(rest); // An empty pool is refilled, or dropped, by the next refresh.
      }
    }
  }

  /** The bottom topology level's subtrees; one {@code null} (the whole cluster) when the topology has no levels. */
  private List<Subtree> racks() {
    int levels = cluster.topology().levels().size();
    if (levels == 0) {
      List<Subtree> whole = new ArrayList<>();
      whole.add(null);
      return whole;
    }
    return cluster.subtreesAt(levels - 1);
  }

  private void refreshRack(String leaf, String rackPath, Collection<NodeState> nodes, int wanted, long rackFreeGpus,
      Map<String, Reservation> byRack, long nowMillis) {
    Reservation held = byRack.get(rackPath);
    boolean intact = held != null && cluster.reservation(held.owner()) == held;
    List<NodeState> kept = new ArrayList<>();
    long keptFree = 0;
    if (intact) {
      for (NodeState n : held.nodes()) {
        // A borrowed spare is kept; one with a GPU out of service, cordoned or gone is not.
        if (kept.size() < wanted && n.reservation == held && cluster.node(n.id()) == n && n.cordonReason == null
            && n.gpuService().isEmpty()) {
          kept.add(n);
          keptFree += n.freeWholeGpus;
        }
      }
    }
    // An idle node has all its GPUs free: a rack whose free GPUs are all on its spares has none to add.
    if (kept.size() < wanted && rackFreeGpus > keptFree) {
      for (NodeState n : nodes) {
        if (kept.size() >= wanted) {
          break;
        }
        if (n.reservation == null && n.node.partition().equals(Node.DEFAULT_PARTITION) && !n.node.gpus().isEmpty()
            && n.idleAndSound()) {
          kept.add(n);
        }
      }
    }
    if (intact && kept.equals(held.nodes())) {
      return;
    }
    if (intact) {
      cluster.releaseReservation(held);
    }
    if (kept.isEmpty()) {
      byRack.remove(rackPath);
      return;
    }
    Reservation r = new Reservation(new RequestRef(OWNER, leaf + "@" + rackPath), rackPath, kept, nowMillis, true);
    cluster.reserve(r);
    byRack.put(rackPath, r);
  }
}
