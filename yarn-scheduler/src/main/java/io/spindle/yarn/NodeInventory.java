package io.spindle.yarn;

import io.spindle.channel.mig.MigLayoutExchange;
import io.spindle.channel.mig.MigLayoutRecords;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.Node;
import io.spindle.core.placement.GpuSlot;
import io.spindle.ha.avro.MigLayoutRecord;
import io.spindle.ha.avro.ShareAssignmentRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the scheduler knows of each node's GPUs, and the MIG layout exchange with the nodes.
 *
 * <p>A node whose agent reported its GPUs to ZooKeeper is modelled from those reports (model, NVLink island, MIG
 * mode and layout of every GPU). A node without reports — no ZooKeeper configured, or its agent has not reported yet
 * — is modelled from the resources its NodeManager advertises ({@link YarnResources#node}); it is <em>provisional</em>
 * and is rebuilt from the reports once they arrive.
 *
 * <p>Versions keep stale answers out: each desired layout carries a version one above anything the GPU has seen,
 * and a report is passed to the engine only if it answers the latest desired version (or a later one). A desired
 * layout left unanswered for the answer timeout (agent down, node gone from ZooKeeper) is given up: the engine hears
 * the GPU's last known layout, so the GPU goes back into service instead of staying out of it forever.
 *
 * <p>Called from the RM dispatcher (register, unregister) and the scheduling thread (the rest), hence synchronized.
 */
final class NodeInventory {

  private static final Logger LOG = LoggerFactory.getLogger(NodeInventory.class);

  /** What the scheduler needs to rebuild a node: where it is and what its NodeManager advertises. */
  private record Registration(NodeId id, String location, Resource total, String partition, boolean sharesIdle) {}

  /** One GPU's exchange state. */
  private static final class GpuExchange {
    final Gpu gpu;
    MigLayout lastReported;
    long lastDesiredVersion;
    long answerDeadlineMillis = Long.MAX_VALUE;
    /** The health last passed to the engine. */
    GpuHealth lastHealth = GpuHealth.HEALTHY;

    GpuExchange(Gpu gpu, long lastDesiredVersion) {
      this.gpu = gpu;
      this.lastReported = gpu.migLayout();
      this.lastDesiredVersion = lastDesiredVersion;
    }
  }

  /** How a report changes the engine's view. */
  sealed interface Outcome {
    /** Pass this event to the engine. */
    record Report(EngineEvent.MigLayoutReported event) implements Outcome {}

    /** The node must be rebuilt: it was provisional, or the report contradicts its known GPUs. */
    record Rebuild(NodeId node) implements Outcome {}

    /** Nothing to do: stale, unknown node, or unreadable. */
    record Ignore() implements Outcome {}
  }

  private final GpuModelCatalog catalog;
  private final YarnResources translate;
  private final MigLayoutExchange exchange;
  private final long answerTimeoutMillis;
  private final LongSupplier clock;
  private final Map<NodeId, Registration> registrations = new HashMap<>();
  /** ZooKeeper name of every node built from reports. */
  private final Map<NodeId, String> zkNames = new HashMap<>();
  private final Map<String, NodeId> byZkName = new HashMap<>();
  private final Map<NodeId, Map<Integer, GpuExchange>> gpus = new HashMap<>();

  /** @param exchange {@code null} when no ZooKeeper is configured: every node is modelled from its resources */
  NodeInventory(GpuModelCatalog catalog, YarnResources translate, MigLayoutExchange exchange,
      long answerTimeoutMillis, LongSupplier clock) {
    this.catalog = catalog;
    this.translate = translate;
    this.exchange = exchange;
    this.answerTimeoutMillis = answerTimeoutMillis;
    this.clock = clock;
  }

  /** Whether MIG layouts can be changed at all: only through the ZooKeeper exchange. */
  boolean canReconfigure() {
    return exchange != null;
  }

  /**
   * Models a registering (or re-registering) node of {@code partition} (its YARN node label, empty for none); an
   * unusable inventory is an IllegalArgumentException.
   */
  synchronized Node register(NodeId id, String location, Resource total, String partition) {
    return register(id, location, total, partition, false);
  }

  /** As {@link #register(NodeId, String, Resource, String)}; {@code sharesIdle}: the label is non-exclusive. */
  synchronized Node register(NodeId id, String location, Resource total, String partition, boolean sharesIdle) {
    unregister(id);
    registrations.put(id, new Registration(id, location, total, partition, sharesIdle));
    String zkName = zkNameWithReports(id);
    Node node = (zkName == null ? translate.node(YarnIds.node(id), location, total)
        : fromReports(id, zkName, location, total)).withPartition(partition, sharesIdle);
    if (zkName != null) {
      zkNames.put(id, zkName);
      byZkName.put(zkName, id);
    }
    Map<Integer, GpuExchange> states = new HashMap<>();
    for (Gpu g : node.gpus()) {
      long desired = zkName == null || exchange == null ? 0
          : exchange.desired(zkName, g.index()).map(MigLayoutRecord::getVersion).orElse(0L);
      states.put(g.index(), new GpuExchange(g, desired));
    }
    gpus.put(id, states);
    return node;
  }

  /** Rebuilds a registered node (after its reports arrived or its resources changed). */
  synchronized Optional<Node> rebuild(NodeId id) {
    Registration r = registrations.get(id);
    return r == null ? Optional.empty()
        : Optional.of(register(r.id(), r.location(), r.total(), r.partition(), r.sharesIdle()));
  }

  /** The node's label changed; a later rebuild keeps the new one. */
  synchronized void relabel(NodeId id, String partition, boolean sharesIdle) {
    registrations.computeIfPresent(id, (k, r) -> new Registration(id, r.location(), r.total(), partition,
        sharesIdle));
  }

  synchronized void updateResources(NodeId id, Resource total) {
    Registration r = registrations.get(id);
    if (r != null) {
      registrations.put(id, new Registration(id, r.location(), total, r.partition(), r.sharesIdle()));
    }
  }

  synchronized void unregister(NodeId id) {
    registrations.remove(id);
    gpus.remove(id);
    String zkName = zkNames.remove(id);
    if (zkName != null) {
      byZkName.remove(zkName);
    }
  }

  /** What a node's report means for the engine. */
  synchronized Outcome onReport(MigLayoutRecord report) {
    String zkName = report.getNode();
    NodeId id = byZkName.get(zkName);
    if (id == null) {
      // A provisional node whose agent just reported: rebuild it from the reports.
      return registrations.keySet().stream()
          .filter(n -> !zkNames.containsKey(n) && matches(zkName, n))
          .findFirst()
          .<Outcome>map(Outcome.Rebuild::new)
          .orElse(new Outcome.Ignore());
    }
    GpuExchange state = gpus.get(id).get(report.getGpuIndex());
    if (state == null || state.gpu.migEnabled() != report.getMigEnabled()
        || (report.getGpuModel() != null && !report.getGpuModel().equals(state.gpu.model().name()))
        || (!report.getMigEnabled() && state.gpu.sharing() != sharingOf(zkName, report))) {
      LOG.info("Node {} reports GPU {} differently from what the scheduler knows; rebuilding the node", id,
          report.getGpuIndex());
      return new Outcome.Rebuild(id);
    }
    if (!state.gpu.migEnabled() || report.getVersion() < state.lastDesiredVersion) {
      return new Outcome.Ignore();
    }
    MigLayout layout;
    try {
      layout = MigLayoutRecords.layout(report, state.gpu.model());
    } catch (InvalidInputException e) {
      LOG.error("Ignoring MIG report of node {} GPU {}: {}", id, report.getGpuIndex(), e.getMessage());
      return new Outcome.Ignore();
    }
    if (report.getError() != null) {
      LOG.warn("Node {} did not apply MIG layout version {} to GPU {}: {}", id, report.getVersion(),
          report.getGpuIndex(), report.getError());
    }
    state.lastReported = layout;
    state.answerDeadlineMillis = Long.MAX_VALUE;
    return new Outcome.Report(new EngineEvent.MigLayoutReported(YarnIds.node(id), report.getGpuIndex(), layout));
  }

  /** Whether the node has a GPU of that index that the engine schedules. */
  synchronized boolean hasGpu(NodeId id, int gpuIndex) {
    return gpus.getOrDefault(id, Map.of()).containsKey(gpuIndex);
  }

  /** The engine's event for a GPU whose reported health differs from what the engine was last told, if any. */
  synchronized Optional<EngineEvent> healthChange(MigLayoutRecord report) {
    NodeId id = byZkName.get(report.getNode());
    GpuExchange state = id == null ? null : gpus.get(id).get(report.getGpuIndex());
    GpuHealth health = MigLayoutRecords.health(report);
    if (state == null || health.equals(state.lastHealth)) {
      return Optional.empty();
    }
    state.lastHealth = health;
    if (!health.healthy()) {
      LOG.warn("Node {} reports GPU {} {}: {}", id, report.getGpuIndex(), health.state(), health.evidence());
    }
    return Optional.of(new EngineEvent.GpuHealthReported(YarnIds.node(id), report.getGpuIndex(), health));
  }

  /**
   * Every reported GPU's health of a node just registered or rebuilt: the engine keeps a GPU's health while its
   * node is away, and must hear what changed meanwhile, a recovery included.
   */
  synchronized List<EngineEvent> healthOf(NodeId id) {
    String zkName = zkNames.get(id);
    if (exchange == null || zkName == null || !gpus.containsKey(id)) {
      return List.of();
    }
    List<EngineEvent> out = new ArrayList<>();
    for (MigLayoutRecord r : exchange.reported(zkName).values()) {
      GpuExchange state = gpus.get(id).get(r.getGpuIndex());
      if (state != null) {
        state.lastHealth = MigLayoutRecords.health(r);
        out.add(new EngineEvent.GpuHealthReported(YarnIds.node(id), r.getGpuIndex(), state.lastHealth));
      }
    }
    return out;
  }

  /**
   * Asks the node for the engine's planned layout. A node that cannot be asked (it does not report to ZooKeeper)
   * keeps its layout: the returned event tells the engine so, and puts the GPU back into service.
   */
  synchronized Optional<EngineEvent> request(Decision.ReconfigureMig m) {
    NodeId id = YarnIds.yarnNode(m.nodeId());
    String zkName = zkNames.get(id);
    GpuExchange state = gpus.getOrDefault(id, Map.of()).get(m.gpuIndex());
    if (state == null || !state.gpu.migEnabled()) {
      LOG.error("Ignoring a MIG re-partition of {} GPU {}, which the scheduler does not know as a MIG GPU", id,
          m.gpuIndex());
      return Optional.empty();
    }
    if (exchange == null || zkName == null) {
      return Optional.of(new EngineEvent.MigLayoutReported(m.nodeId(), m.gpuIndex(), state.lastReported));
    }
    state.lastDesiredVersion++;
    state.answerDeadlineMillis = clock.getAsLong() + answerTimeoutMillis;
    exchange.requestLayout(MigLayoutRecord.newBuilder()
        .setNode(zkName)
        .setGpuIndex(m.gpuIndex())
        .setMigEnabled(true)
        .setInstances(MigLayoutRecords.instances(m.layout()))
        .setVersion(state.lastDesiredVersion)
        .setUpdatedMillis(clock.getAsLong())
        .build());
    return Optional.empty();
  }

  /** The model of a registered node's GPU, {@code null} if either is unknown. */
  synchronized io.spindle.core.model.GpuModel gpuModel(NodeId id, int gpuIndex) {
    GpuExchange state = gpus.getOrDefault(id, Map.of()).get(gpuIndex);
    return state == null ? null : state.gpu.model();
  }

  /**
   * Tells the node which GPU a share container got ({@code <root>/nodes/<node>/shares/<container>}), so its device
   * plugin hands out that GPU rather than working the choice out again. Nothing for a container without a share, a
   * node that does not report to ZooKeeper, or a scheduler without ZooKeeper: those nodes choose by the scheduler's
   * rule themselves.
   */
  synchronized void shareAllocated(ContainerId container, Decision.Allocate a) {
    if (exchange == null) {
      return;
    }
    NodeId id = YarnIds.yarnNode(a.nodeId());
    String zkName = zkNames.get(id);
    Map<Integer, GpuExchange> states = gpus.getOrDefault(id, Map.of());
    for (GpuSlot slot : a.gpus()) {
      GpuExchange state = states.get(slot.gpuIndex());
      if (!slot.share() || zkName == null || state == null) {
        continue;
      }
      exchange.publishShare(ShareAssignmentRecord.newBuilder()
          .setNode(zkName)
          .setContainerId(container.toString())
          .setGpuIndex(slot.gpuIndex())
          .setMilli(a.shape().shareMilli(state.gpu.model()))
          .setMemoryMb(a.shape().gpuMemoryMb())
          .setSharing(state.gpu.sharing().text())
          .setUpdatedMillis(clock.getAsLong())
          .build());
    }
  }

  /** The container ended: its share assignment, if it had one, goes. Safe from any thread. */
  void shareEnded(ContainerId container) {
    if (exchange != null) {
      exchange.withdrawShare(container.toString());
    }
  }

  /** For each desired layout past its answer timeout: the GPU's last known layout, which ends the re-partition. */
  synchronized List<EngineEvent> overdueAnswers() {
    long now = clock.getAsLong();
    List<EngineEvent> out = new ArrayList<>();
    gpus.forEach((id, states) -> states.values().forEach(s -> {
      if (now >= s.answerDeadlineMillis) {
        LOG.warn("Node {} did not answer MIG layout version {} for GPU {} within {} ms; the GPU keeps {}", id,
            s.lastDesiredVersion, s.gpu.index(), answerTimeoutMillis, s.lastReported);
        s.answerDeadlineMillis = Long.MAX_VALUE;
        out.add(new EngineEvent.MigLayoutReported(YarnIds.node(id), s.gpu.index(), s.lastReported));
      }
    }));
    return out;
  }

  /** The node's reports are under {@code host:port} when several NodeManagers share a host, else under the host. */
  private String zkNameWithReports(NodeId id) {
    if (exchange == null) {
      return null;
    }
    for (String name : List.of(id.toString(), id.getHost())) {
      if (!exchange.reported(name).isEmpty() && !byZkName.containsKey(name)) {
        return name;
      }
    }
    return null;
  }

  /**
   * A report's sharing mode. A mode this scheduler does not know (a newer NodeManager) is taken as exclusive: whole
   * GPUs are what every version can hand out.
   */
  private static GpuSharing sharingOf(String zkName, MigLayoutRecord r) {
    try {
      return GpuSharing.parse("sharing", r.getSharing());
    } catch (InvalidInputException e) {
      LOG.warn("Node {} reports GPU {} with sharing mode '{}', which this scheduler does not know; it is scheduled "
          + "as exclusive", zkName, r.getGpuIndex(), r.getSharing());
      return GpuSharing.EXCLUSIVE;
    }
  }

  private static boolean matches(String zkName, NodeId id) {
    return zkName.equals(id.toString()) || zkName.equals(id.getHost());
  }

  private Node fromReports(NodeId id, String zkName, String location, Resource total) {
    List<Gpu> list = new ArrayList<>();
    for (MigLayoutRecord r : exchange.reported(zkName).values()) {
      GpuModel model = r.getGpuModel() == null ? translate.defaultModel()
          : catalog.find(r.getGpuModel()).orElseThrow(() -> new IllegalArgumentException("node " + zkName
              + " reports GPU " + r.getGpuIndex() + " as " + r.getGpuModel() + ", which the GPU catalog lacks"));
      int island = r.getNvlinkIsland() >= 0 ? r.getNvlinkIsland() : translate.defaultIsland(r.getGpuIndex());
      list.add(r.getMigEnabled()
          ? new Gpu(r.getGpuIndex(), model, island, true, MigLayoutRecords.layout(r, model))
          : Gpu.shared(r.getGpuIndex(), model, island, sharingOf(zkName, r)));
    }
    Node node = new Node(YarnIds.node(id), location, total.getMemorySize(), (int) total.getVirtualCores(), list);
    LOG.info("Node {} modelled from its agent's reports under {}: {} GPUs ({} in MIG mode, {} shared)", id, zkName,
        list.size(), list.stream().filter(Gpu::migEnabled).count(),
        list.stream().filter(Gpu::sharesBelowWhole).count());
    return node;
  }
}
