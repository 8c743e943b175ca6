package io.spindle.bench.soak;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * Every container the soak's ApplicationMasters received, as YARN handed them out: a container id handed out twice,
 * or a node whose live containers add up to more than it has of any resource (memory, vcores, GPUs, each MIG
 * profile), is a double allocation.
 *
 * <p>A container is live for this check from the moment its AM receives it until its AM releases it; the release is
 * recorded before the allocate call that carries it, so the ResourceManager can only reuse the capacity after the
 * ledger has let go of it, and an overflow is never a race of the check. Containers the soak launches end on their
 * own, and the ResourceManager may reuse their capacity before their AM hears of the end, so they are left out of the
 * capacity check (they are in the id check). MIG capacities count every place an instance may start, not the
 * instances that exist, so this check is coarse for MIG; {@link SlotAudit} checks instances exactly.
 *
 * <p>When the active ResourceManager fails over, the containers the previous one handed out and nobody launched are
 * gone: the new one learns running containers from the NodeManagers only, and a NodeManager refuses to start a
 * container a previous ResourceManager allocated. Their capacity is free again for the new one, so from then on they
 * leave the capacity check ({@link #failover}); the id check keeps them. Container ids carry the epoch of the
 * ResourceManager that allocated them.
 */
public final class ContainerLedger {

  private static final int KEEP_PROBLEMS = 20;

  private final Map<NodeId, Resource> capacity;
  private final Set<ContainerId> seen = ConcurrentHashMap.newKeySet();
  /** Guarded by this. */
  private final Map<NodeId, Resource> liveByNode = new HashMap<>();
  /** Guarded by this: the counted live containers' nodes and sizes. */
  private final Map<ContainerId, Container> live = new HashMap<>();
  private final List<String> problems = new ArrayList<>();
  private long duplicateIds;
  private long overflows;
  private long unknownNodes;
  /** Containers of epochs up to this one were allocated by ResourceManagers that have failed over. */
  private long deadUpTo = -1;
  private long leftAtFailovers;
  /** Per epoch: when the ResourceManager of that epoch created the first container an AM received, and when. */
  private final Map<Long, long[]> firstByEpoch = new HashMap<>();

  public ContainerLedger(Map<NodeId, Resource> capacity) {
    this.capacity = Map.copyOf(capacity);
  }

  /** The epoch of the ResourceManager that allocated {@code id}. */
  public static long epoch(ContainerId id) {
    return id.getContainerId() >> ResourceManager.EPOCH_BIT_SHIFT;
  }

  /**
   * A container an AM received at {@code receivedMs}, created by the ResourceManager at {@code createdMs};
   * {@code counted}: it is released by its AM, so it joins the capacity check.
   */
  public void received(Container c, boolean counted, long createdMs, long receivedMs) {
    if (!seen.add(c.getId())) {
      synchronized (this) {
        duplicateIds++;
        problem("container id " + c.getId() + " handed out twice");
      }
      return;
    }
    long epoch = epoch(c.getId());
    synchronized (this) {
      long[] first = firstByEpoch.computeIfAbsent(epoch, e -> new long[] {Long.MAX_VALUE, Long.MAX_VALUE});
      first[0] = Math.min(first[0], createdMs);
      first[1] = Math.min(first[1], receivedMs);
      if (!counted || epoch <= deadUpTo) {
        return; // Unless counted, or when it arrives after its ResourceManager failed over (see above).
      }
      Resource cap = capacity.get(c.getNodeId());
      if (cap == null) {
        unknownNodes++;
        problem("container " + c.getId() + " on node " + c.getNodeId() + ", which no node report listed");
        return;
      }
      live.put(c.getId(), c);
      Resource used = liveByNode.computeIfAbsent(c.getNodeId(), n -> Resources.createResource(0, 0));
      Resources.addTo(used, c.getResource());
      if (!Resources.fitsIn(used, cap)) {
        overflows++;
        problem("node " + c.getNodeId() + " holds " + used + " of " + cap + " after container " + c.getId());
      }
    }
  }

  /**
   * The ResourceManager of epoch {@code epoch} has stepped down: the containers it and earlier ones handed out and
   * nobody launched leave the capacity check, before the next one can hand their capacity out again.
   */
  public synchronized void failover(long epoch) {
    deadUpTo = Math.max(deadUpTo, epoch);
    for (var it = live.values().iterator(); it.hasNext(); ) {
      Container c = it.next();
      if (epoch(c.getId()) <= deadUpTo) {
        Resources.subtractFrom(liveByNode.get(c.getNodeId()), c.getResource());
        it.remove();
        leftAtFailovers++;
      }
    }
  }

  /** Containers AMs held, unlaunched, when their ResourceManager stepped down. */
  public synchronized long leftAtFailovers() {
    return leftAtFailovers;
  }

  /** Whether an AM received {@code id}. */
  public boolean seen(ContainerId id) {
    return seen.contains(id);
  }

  /**
   * For the ResourceManager of {@code epoch}: the creation time of the first container of it an AM received, and when
   * the first was received (epoch millis); empty if none.
   */
  public synchronized java.util.Optional<long[]> first(long epoch) {
    long[] f = firstByEpoch.get(epoch);
    return f == null ? java.util.Optional.empty() : java.util.Optional.of(f.clone());
  }

  /** Its AM gives the container back (before the allocate call that tells the ResourceManager). */
  public synchronized void released(ContainerId id) {
    Container c = live.remove(id);
    if (c != null) {
      Resources.subtractFrom(liveByNode.get(c.getNodeId()), c.getResource());
    }
  }

  private void problem(String text) {
    if (problems.size() < KEEP_PROBLEMS) {
      problems.add(text);
    }
  }

  public synchronized long duplicateIds() {
    return duplicateIds;
  }

  /** Times a node's live containers exceeded what it has. */
  public synchronized long overflows() {
    return overflows;
  }

  public synchronized long unknownNodes() {
    return unknownNodes;
  }

  /** Counted containers not released: 0 once every AM has given back what it held. */
  public synchronized int stillLive() {
    return live.size();
  }

  public synchronized List<String> problems() {
    return List.copyOf(problems);
  }
}
