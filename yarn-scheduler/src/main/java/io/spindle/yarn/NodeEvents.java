package io.spindle.yarn;

import io.spindle.core.engine.EngineEvent;
import io.spindle.ha.avro.MigLayoutRecord;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.nodelabels.RMNodeLabelsManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ClusterNodeTracker;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Nodes as YARN and their agents tell them: added and removed (as engine events), resized, and the GPU layouts their
 * agents reported; a node whose GPUs changed is re-read from those reports or its new resources once nothing runs on
 * it (a re-read re-adds the node, which would drop running work). YARN's events arrive on the dispatcher, reports on
 * ZooKeeper's thread; the scheduling thread collects the changes into each cycle.
 */
final class NodeEvents {

  private static final Logger LOG = LoggerFactory.getLogger(NodeEvents.class);

  private final NodeInventory inventory;
  private final ClusterNodeTracker<FiCaSchedulerNode> tracker;
  private final SchedulerSettings settings;
  private final SchedulerCalls yarn;
  private final SchedulerLocks locks;
  private final Consumer<EngineEvent> toEngine;
  private final Reports migReports;
  /** Why a node YARN is decommissioning gracefully is cordoned. */
  static final String DECOMMISSIONING = "YARN is decommissioning the node gracefully";
  /** Nodes this scheduler cordoned because YARN is decommissioning them. */
  private final Set<NodeId> decommissioning = ConcurrentHashMap.newKeySet();
  /** Nodes to rebuild from their reports or new resources once nothing runs on them. */
  private final Set<NodeId> pendingRebuild = ConcurrentHashMap.newKeySet();
  private final Supplier<RMNodeLabelsManager> labels;

  /**
   * The latest layout each GPU's agent reported and no cycle has read yet, by node and GPU index. A report is the
   * GPU's whole state, so a newer one supersedes an unread older one; keeping one per GPU bounds what a standby,
   * which runs no cycles, holds however long it waits (a queue of every report grew without end). Made before the
   * channel that fills it starts, which is before the rest of this class can be.
   */
  static final class Reports {
    private final ConcurrentHashMap<String, MigLayoutRecord> latest = new ConcurrentHashMap<>();

    void reported(MigLayoutRecord report) {
      latest.put(report.getNode() + "#" + report.getGpuIndex(), report);
    }
  }

  /** @param labels YARN's node-label manager; {@code null} where the RM has none (some tests) */
  NodeEvents(Reports migReports, NodeInventory inventory, ClusterNodeTracker<FiCaSchedulerNode> tracker,
      SchedulerSettings settings, SchedulerCalls yarn, SchedulerLocks locks, Consumer<EngineEvent> toEngine,
      Supplier<RMNodeLabelsManager> labels) {
    this.labels = labels;
    this.migReports = migReports;
    this.inventory = inventory;
    this.tracker = tracker;
    this.settings = settings;
    this.yarn = yarn;
    this.locks = locks;
    this.toEngine = toEngine;
  }

  /** YARN gives a node at most one partition label; none is the default partition. */
  static String partition(Set<String> labels) {
    return labels == null || labels.isEmpty() ? io.spindle.core.model.Node.DEFAULT_PARTITION
        : labels.iterator().next();
  }

  /** Whether {@code partition}'s label is non-exclusive ({@code exclusive=false}): it lends its idle capacity. */
  private boolean sharesIdle(String partition) {
    RMNodeLabelsManager manager = labels.get();
    if (manager == null || partition.isEmpty()) {
      return false;
    }
    try {
      return !manager.isExclusiveNodeLabel(partition);
    } catch (java.io.IOException unknownLabel) {
      return false;
    }
  }

  /**
   * Nodes' labels changed ({@code yarn rmadmin -replaceLabelsOnNode}, or a NodeManager's own report): the node
   * keeps what runs there and takes new work of its new partition only.
   */
  void relabelled(Map<NodeId, Set<String>> labels) {
    for (Map.Entry<NodeId, Set<String>> e : labels.entrySet()) {
      FiCaSchedulerNode node = tracker.getNode(e.getKey());
      if (node == null) {
        LOG.info("Labels {} of node {}, which is not registered: it takes them when it registers", e.getValue(),
            e.getKey());
        continue;
      }
      node.updateLabels(e.getValue());
      String partition = partition(e.getValue());
      boolean shares = sharesIdle(partition);
      inventory.relabel(e.getKey(), partition, shares);
      toEngine.accept(new EngineEvent.NodePartitionChanged(YarnIds.node(e.getKey()), partition, shares));
      LOG.info("Node {} now in partition '{}'{}", e.getKey(), partition, shares ? " (non-exclusive)" : "");
    }
  }

  /**
   * A node registered. It is activated in YARN's node-label manager, which is the scheduler's duty (CapacityScheduler
   * does it on adding a node; without it label changes never reach the node), and enters its label's partition.
   */
  void added(RMNode rmNode) {
    RMNodeLabelsManager manager = labels.get();
    Set<String> nodeLabels = rmNode.getNodeLabels();
    if (manager != null) {
      manager.activateNode(rmNode.getNodeID(), rmNode.getTotalCapability());
      nodeLabels = manager.getLabelsOnNode(rmNode.getNodeID());
    }
    tracker.addNode(new FiCaSchedulerNode(rmNode, settings.usePortForNodeName(), nodeLabels));
    try {
      toEngine.accept(new EngineEvent.NodeAdded(inventory.register(rmNode.getNodeID(),
          settings.location(rmNode.getRackName()), rmNode.getTotalCapability(), partition(nodeLabels),
          sharesIdle(partition(nodeLabels)))));
      inventory.healthOf(rmNode.getNodeID()).forEach(toEngine);
    } catch (IllegalArgumentException e) {
      LOG.error("Node {} cannot be scheduled by Spindle: {}", rmNode.getNodeID(), e.getMessage());
    }
    LOG.info("Node {} added on {}: {}", rmNode.getNodeID(), rmNode.getRackName(), rmNode.getTotalCapability());
  }

  /**
   * A node's heartbeat: one that YARN decommissions gracefully ({@code yarn rmadmin -refreshNodes -g}) takes no new
   * work, as under CapacityScheduler, while what runs there finishes; it is cordoned in the engine, and given back if
   * YARN recommissions it.
   */
  void heartbeat(RMNode rmNode) {
    NodeId id = rmNode.getNodeID();
    boolean leaving = rmNode.getState() == org.apache.hadoop.yarn.api.records.NodeState.DECOMMISSIONING;
    if (leaving && decommissioning.add(id)) {
      toEngine.accept(new EngineEvent.NodeCordonChanged(YarnIds.node(id), DECOMMISSIONING));
      LOG.info("Node {} is being decommissioned: it takes no new work", id);
    } else if (!leaving && decommissioning.remove(id)) {
      toEngine.accept(new EngineEvent.NodeCordonChanged(YarnIds.node(id), null));
      LOG.info("Node {} is no longer being decommissioned: it takes new work again", id);
    }
  }

  /** The node's containers are lost and the node leaves, in one step for the scheduling thread. */
  void removed(RMNode rmNode) {
    if (labels.get() != null) {
      labels.get().deactivateNode(rmNode.getNodeID());
    }
    FiCaSchedulerNode node = tracker.getNode(rmNode.getNodeID());
    if (node == null) {
      return;
    }
    synchronized (locks.nodeRemoval) {
      for (RMContainer c : node.getCopiedListOfRunningContainers()) {
        yarn.complete(c, SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(),
            SchedulerUtils.LOST_CONTAINER), RMContainerEventType.KILL);
      }
      tracker.removeNode(rmNode.getNodeID());
      inventory.unregister(rmNode.getNodeID());
      pendingRebuild.remove(rmNode.getNodeID());
      if (decommissioning.remove(rmNode.getNodeID())) {
        // Decommissioned: the cordon ends with it, or it would outlive the node in the scheduler state.
        toEngine.accept(new EngineEvent.NodeCordonChanged(YarnIds.node(rmNode.getNodeID()), null));
      }
      toEngine.accept(new EngineEvent.NodeRemoved(YarnIds.node(rmNode.getNodeID())));
    }
    LOG.info("Node {} removed", rmNode.getNodeID());
  }

  /** The node's resources changed (YARN's tracker has them already): it is re-read once nothing runs on it. */
  void resized(NodeId node, Resource resources) {
    if (labels.get() != null) {
      labels.get().updateNodeResource(node, resources);
    }
    inventory.updateResources(node, resources);
    pendingRebuild.add(node);
    LOG.info("Node {} resources updated to {}; Spindle re-reads the node once nothing runs on it", node, resources);
  }

  /**
   * Adds to the cycle what the nodes' agents reported and the re-partitions they left unanswered, and rebuilds the
   * nodes whose GPUs changed once nothing runs on them.
   */
  void collect(List<EngineEvent> batch) {
    for (String gpu : migReports.latest.keySet()) {
      MigLayoutRecord report = migReports.latest.remove(gpu);
      if (report == null) {
        continue;
      }
      NodeInventory.Outcome outcome = inventory.onReport(report);
      if (outcome instanceof NodeInventory.Outcome.Report r) {
        batch.add(r.event());
      } else if (outcome instanceof NodeInventory.Outcome.Rebuild r) {
        pendingRebuild.add(r.node());
      }
      inventory.healthChange(report).ifPresent(batch::add);
    }
    batch.addAll(inventory.overdueAnswers());
    for (NodeId id : pendingRebuild) {
      FiCaSchedulerNode node = yarn.node(id);
      if (node == null) {
        pendingRebuild.remove(id);
      } else if (node.getNumContainers() == 0) {
        pendingRebuild.remove(id);
        try {
          Optional<io.spindle.core.model.Node> rebuilt = inventory.rebuild(id);
          if (rebuilt.isPresent()) {
            batch.add(new EngineEvent.NodeRemoved(YarnIds.node(id)));
            batch.add(new EngineEvent.NodeAdded(rebuilt.get()));
            batch.addAll(inventory.healthOf(id));
            LOG.info("Node {} re-read now that nothing runs on it: {} GPUs", id, rebuilt.get().gpus().size());
          }
        } catch (IllegalArgumentException ex) {
          LOG.error("Node {} cannot be rebuilt from its new GPU inventory: {}", id, ex.getMessage());
        }
      }
    }
  }
}
