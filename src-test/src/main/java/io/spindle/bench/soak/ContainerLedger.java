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

  public ContainerLedger(Map<NodeId, Resource> capacity) {
    this.capacity = Map.copyOf(capacity);
  }

  /** A container an AM received; {@code counted}: it is released by its AM, so it joins the capacity check. */
  public void received(Container c, boolean counted) {
    if (!seen.add(c.getId())) {
      synchronized (this) {
        duplicateIds++;
        problem("container id " + c.getId() + " handed out twice");
      }
      return;
    }
    if (!counted) {
      return;
    }
    synchronized (this) {
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
