package io.spindle.yarn;

import io.spindle.channel.checkpoint.CheckpointNoticeStore;
import io.spindle.channel.mig.MigLayoutExchange;
import io.spindle.core.engine.CycleClock;
import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.RestoreReport;
import io.spindle.core.engine.DurableState;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.core.engine.QueueSnapshot;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
import io.spindle.ha.SchedulerLeadership;
import io.spindle.ha.SchedulerStateCodec;
import io.spindle.ha.SchedulerZk;
import io.spindle.ha.SchedulerZkIdentity;
import io.spindle.ha.ZkSettings;
import io.spindle.ha.avro.MigLayoutRecord;
import io.spindle.core.engine.EngineStats;
import io.spindle.core.engine.EngineStatus;
import io.spindle.core.status.AppHistory;
import io.spindle.core.status.Explanation;
import io.spindle.core.status.WhyExplainer;
import io.spindle.journal.DecisionJournal;
import io.spindle.journal.JournalSettings;
import io.spindle.journal.RecordingLookup;
import io.spindle.metrics.MetricsExposure;
import io.spindle.web.SchedulerView;
import io.spindle.web.SpindleWeb;
import io.spindle.metrics.SpindleMetrics;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.protocolrecords.SignalContainerRequest;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.api.records.SignalContainerCommand;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.RMFatalEvent;
import org.apache.hadoop.yarn.server.resourcemanager.RMFatalEventType;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore.RMState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeSignalContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ContainerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerExpiredSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ReleaseContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spindle as a YARN ResourceManager scheduler ({@code yarn.resourcemanager.scheduler.class}).
 *
 * <p>Translates YARN's scheduler events and AM asks into core {@link EngineEvent}s and applies the engine's
 * {@link Decision}s as RM containers. Threads: the RM's dispatcher calls {@link #handle}, IPC handlers call
 * {@link #allocate}; both only record events in an inbox and return. A scheduling thread drains the inbox, runs one
 * engine cycle and hands out the containers it decided, waking on every node heartbeat and at least every
 * {@value #DEFAULT_CYCLE_INTERVAL_MS} ms. So {@code allocate()} never waits for a cycle: it returns what earlier
 * cycles decided.
 */
public class SpindleScheduler extends AbstractYarnScheduler<SpindleAppAttempt, FiCaSchedulerNode>
    implements Configurable {

  private static final Logger LOG = LoggerFactory.getLogger(SpindleScheduler.class);

  public static final String CYCLE_INTERVAL_MS = "yarn.scheduler.spindle.cycle-interval-ms";
  public static final long DEFAULT_CYCLE_INTERVAL_MS = 100;
  public static final String TOPOLOGY_LEVELS = "yarn.scheduler.spindle.topology.levels";
  public static final String DEFAULT_TOPOLOGY_LEVELS = "rack";
  public static final String NODE_GPU_MODEL = "yarn.scheduler.spindle.node.gpu-model";
  public static final String DEFAULT_NODE_GPU_MODEL = "H100-80GB";
  public static final String NODE_NVLINK_ISLAND_SIZE = "yarn.scheduler.spindle.node.nvlink-island-size";
  public static final int DEFAULT_NODE_NVLINK_ISLAND_SIZE = 8;
  public static final String PREEMPTION_SIGNAL = "yarn.scheduler.spindle.preemption.signal-graceful-shutdown";
  public static final String MIG_ANSWER_TIMEOUT_SECONDS = "yarn.scheduler.spindle.mig.answer-timeout-seconds";
  public static final long DEFAULT_MIG_ANSWER_TIMEOUT_SECONDS = 300;
  /** Applications whose rejections and preemptions {@code why} remembers: the most recently touched. */
  static final int HISTORY_APPS = 10_000;
  static final String ACL_SUBMIT = "acl_submit_applications";
  static final String ACL_ADMINISTER = "acl_administer_queue";
  private static final String CAPACITY_SCHEDULER_XML = "capacity-scheduler.xml";

  private Configuration conf;
  private final ResourceCalculator calculator = new DominantResourceCalculator();
  private final GpuModelCatalog catalog = GpuModelCatalog.builtIn();
  private final Object engineLock = new Object();
  /**
   * Held around everything that changes or reads YARN's queue metrics: applications' asks (IPC handlers),
   * allocations (the scheduling thread), completions and recovery (the dispatcher). YARN keeps the GPU and other
   * custom-resource figures of a queue in a plain HashMap, shared by every application of the queue and, through the
   * parents, of the cluster; concurrent updates lost counts or threw ConcurrentModificationException out of an AM's
   * allocate call (found by the failover soak, docs/reliability.md). Lock order: an attempt's monitor, this, then
   * YARN's own locks (the scheduler's, in recovery; an attempt's read-write lock).
   */
  private final Object queueMetricsLock = new Object();
  private final ConcurrentLinkedQueue<EngineEvent> inbox = new ConcurrentLinkedQueue<>();
  /**
   * Makes a node's removal one step for the scheduling thread. The removal is the losses of the node's containers and
   * then the node's leaving: a cycle that drained the inbox between the two restarted the lost containers' gang on the
   * leaving node, still free in the engine, and its AM got containers on a NodeManager that was gone
   * (FaultMatrixTest, docs/reliability.md); and containers handed out while the node was being removed were missed by
   * it. Held by the removal, by the inbox's drain and around handing out a cycle's containers. Lock order: this, then
   * an attempt's monitor, then {@link #queueMetricsLock}.
   */
  private final Object nodeRemovalLock = new Object();
  private final Semaphore wake = new Semaphore(0);
  private final Map<ContainerId, Long> allocationOf = new ConcurrentHashMap<>();
  private final Map<ApplicationId, AppAsks> asks = new ConcurrentHashMap<>();
  private final Map<ApplicationId, String> waitReasons = new ConcurrentHashMap<>();
  /** Lost containers' asks, by allocation, until the engine says whether their gangs restart (then cleared). */
  private final Map<Long, LostAsk> lostAsks = new ConcurrentHashMap<>();
  /** Why this adapter holds an application's ask back from the engine (a gang not fully asked for yet). */
  private final Map<ApplicationId, String> askNotes = new ConcurrentHashMap<>();
  private final PreemptionNotices preemptions = new PreemptionNotices();
  /** The container of each engine allocation, for notices and reclaims, which name allocations. */
  private final Map<Long, ContainerId> containerOf = new ConcurrentHashMap<>();
  private final CheckpointDelivery checkpoints = new CheckpointDelivery(preemptions,
      CheckpointDelivery.containers(containerOf::get, this::amRmTokenPassword), inbox::add, System::currentTimeMillis);
  private final SpindleMetrics metrics = new SpindleMetrics();
  private Configuration metricsConf;
  private MetricsExposure metricsExposure;
  private SpindleWeb web;
  /** What the engine showed after the last published cycle: what the status API and the GPU map read. */
  private volatile EngineStatus published = EngineStatus.EMPTY;
  /** Rejections, notices and preemptions per application, for {@code why}; guarded by itself. */
  private final AppHistory history = new AppHistory(HISTORY_APPS);
  private long lastMetricsPublish;
  private String rmId;
  /** Ids for recovered containers count down from -1, apart from the engine's own (1, 2, …). */
  private long nextRecoveredId = -1;
  /** The engine's clock: moved once before each cycle, so a cycle has one time, which the journal records. */
  private final CycleClock clock = new CycleClock(System::currentTimeMillis);
  private Engine engine;
  private DecisionJournal journal = DecisionJournal.OFF;
  private YarnResources translate;
  private NodeInventory inventory;
  private MigLayoutExchange migExchange;
  private SchedulerZk schedulerZk;
  /** The previous leader's state, read and waiting for the applications it names to ask again. */
  private DurableState takeOverState;
  private long takeOverSince;
  private long takeOverWaitMs;
  /** Applications whose AM has called allocate() on this scheduler: their asks are in the inbox. */
  private final Set<ApplicationId> heardFrom = ConcurrentHashMap.newKeySet();
  private volatile RestoreReport takeOverReport;
  /** Whether this scheduler, as leader, has removed the checkpoint znodes of applications that ended unseen. */
  private boolean checkpointsSwept;
  /** The engine's durable version last handed to the writer (-1: none yet). */
  private long savedVersion = -1;
  /** Leadership among the schedulers sharing the ZooKeeper root; {@code null} without ZooKeeper (always leads). */
  private SchedulerHa ha;
  /**
   * The latest layout each GPU's agent reported and no cycle has read yet, by node and GPU index. A report is the
   * GPU's whole state, so a newer one supersedes an unread older one; keeping one per GPU bounds what a standby,
   * which runs no cycles, holds however long it waits (a queue of every report grew without end).
   */
  private final ConcurrentHashMap<String, MigLayoutRecord> migReports = new ConcurrentHashMap<>();
  /** Nodes to rebuild from their reports or new resources once nothing runs on them. */
  private final Set<NodeId> pendingRebuild = ConcurrentHashMap.newKeySet();
  private List<String> topologyLevels;
  private volatile QueueTree tree;
  private volatile Map<String, SpindleQueue> queues = Map.of();
  private long cycleIntervalMs;
  private boolean usePortForNodeName;
  private Thread loop;
  private volatile boolean running;

  public SpindleScheduler() {
    super(SpindleScheduler.class.getName());
  }

  // ---------------------------------------------------------------- lifecycle

  @Override
  public void serviceInit(Configuration conf) throws Exception {
    this.conf = conf;
    this.applications = new ConcurrentHashMap<>();
    this.minimumAllocation = super.getMinimumAllocation();
    initMaximumResourceCapability(super.getMaximumAllocation());
    this.usePortForNodeName = conf.getBoolean(YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_USE_PORT_FOR_NODE_NAME);
    this.cycleIntervalMs = conf.getLong(CYCLE_INTERVAL_MS, DEFAULT_CYCLE_INTERVAL_MS);
    this.rmId = conf.get(YarnConfiguration.RM_HA_ID, "rm");
    this.takeOverWaitMs = conf.getLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS,
        YarnConfiguration.DEFAULT_RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS);
    Configuration schedulerConf = schedulerConfiguration(conf);
    this.topologyLevels = List.of(schedulerConf.getTrimmedStrings(TOPOLOGY_LEVELS, DEFAULT_TOPOLOGY_LEVELS));
    this.translate = new YarnResources(catalog,
        catalog.require(NODE_GPU_MODEL, schedulerConf.get(NODE_GPU_MODEL, DEFAULT_NODE_GPU_MODEL)),
        schedulerConf.getInt(NODE_NVLINK_ISLAND_SIZE, DEFAULT_NODE_NVLINK_ISLAND_SIZE));
    Map<String, String> entries = entries(schedulerConf);
    ZkSettings zk = ZkSettings.from(schedulerConf);
    if (zk.enabled()) {
      SchedulerZkIdentity identity = SchedulerZkIdentity.from(schedulerConf);
      schedulerZk = SchedulerZk.connect(zk, identity, schedulerConf);
      ha = new SchedulerHa(schedulerZk, identity, instanceId(conf), wake::release, this::mustStop);
      migExchange = MigLayoutExchange.start(schedulerZk.client(), zk.root(), ha.fence(), identity.schedulerOnlyAcl(),
          report -> {
            migReports.put(report.getNode() + "#" + report.getGpuIndex(), report);
            wake.release();
          });
      checkpoints.useStore(CheckpointNoticeStore.start(schedulerZk.client(), zk.root(), identity.aclId(),
          ha.fence(), checkpoints));
    } else {
      // Without ZooKeeper no node can be asked to re-partition, and a GPU planned for it would be lost.
      entries.put(EngineSettings.MAX_MIG_RECONFIGURATIONS_PER_CYCLE, "0");
      LOG.warn("No ZooKeeper configured ({} or hadoop.zk.address): nodes are modelled from the resources they "
          + "advertise and MIG layouts are never changed", ZkSettings.ZK_ADDRESS);
    }
    checkpoints.measure(metrics);
    this.metricsConf = schedulerConf;
    if (schedulerConf.getBoolean(PREEMPTION_SIGNAL, false)) {
      checkpoints.signalOnNotice(this::signalGracefulShutdown);
    }
    long answerTimeout = schedulerConf.getLong(MIG_ANSWER_TIMEOUT_SECONDS, DEFAULT_MIG_ANSWER_TIMEOUT_SECONDS);
    if (answerTimeout <= 0) {
      throw new IllegalArgumentException(MIG_ANSWER_TIMEOUT_SECONDS + " must be > 0, not " + answerTimeout);
    }
    this.inventory = new NodeInventory(catalog, translate, migExchange, answerTimeout * 1000,
        System::currentTimeMillis);
    QueueTree initial = new QueueConfigParser().parse(entries);
    this.engine = new Engine(catalog, initial, Topology.open(topologyLevels.toArray(String[]::new)), clock,
        EngineSettings.fromConfiguration(entries));
    this.journal = DecisionJournal.open(JournalSettings.from(entries),
        DecisionJournal.header(instanceId(conf), clock.nowMillis(), topologyLevels, entries));
    installQueues(initial, schedulerConf);
    super.serviceInit(conf);
    LOG.info("Spindle scheduler initialised: {} queues, topology levels {}, cycle every {} ms", initial.size(),
        topologyLevels, cycleIntervalMs);
  }

  @Override
  public void serviceStart() throws Exception {
    running = true;
    metricsExposure = MetricsExposure.start(metrics, metricsConf.getBoolean(MetricsExposure.JMX_ENABLED, true));
    web = SpindleWeb.start(metricsConf, MetricsExposure.PATH, metricsExposure.prometheus(), new WebView());
    if (ha != null) {
      ha.start();
    }
    loop = new Thread(this::schedulingLoop, "spindle-scheduling");
    loop.setDaemon(true);
    loop.start();
    super.serviceStart();
  }

  @Override
  public void serviceStop() throws Exception {
    running = false;
    if (loop != null) {
      wake.release();
      loop.join(10_000);
    }
    journal.close();
    if (ha != null) {
      ha.close();
    }
    if (web != null) {
      web.close();
    }
    if (metricsExposure != null) {
      metricsExposure.close();
    }
    if (migExchange != null) {
      migExchange.close();
    }
    if (checkpoints.store() != null) {
      checkpoints.store().close();
    }
    if (schedulerZk != null) {
      schedulerZk.close();
    }
    super.serviceStop();
  }

  @Override
  public void reinitialize(Configuration newConf, RMContext context) throws IOException {
    Configuration schedulerConf = schedulerConfiguration(newConf);
    QueueTree next;
    try {
      Map<String, String> entries = entries(schedulerConf);
      next = new QueueConfigParser().parse(entries);
      synchronized (engineLock) {
        engine.reconfigure(next);
        journal.reconfigured(entries);
      }
    } catch (IllegalArgumentException e) {
      throw new IOException("Spindle refused the new queue configuration, the previous one stays in force: "
          + e.getMessage(), e);
    }
    installQueues(next, schedulerConf);
    super.reinitialize(newConf, context);
    LOG.info("Spindle queue configuration reloaded: {} queues", next.size());
  }

  /**
   * yarn-site.xml plus capacity-scheduler.xml, which is where admins keep the queue tree. The file comes through the
   * ResourceManager's configuration provider, as CapacityScheduler's does: from the classpath by default, from a
   * shared store ({@code yarn.resourcemanager.configuration.provider-class}) in an HA pair, whose RMs must agree.
   */
  private Configuration schedulerConfiguration(Configuration base) throws IOException {
    Configuration c = new Configuration(base);
    if (rmContext == null || rmContext.getConfigurationProvider() == null) {
      c.addResource(CAPACITY_SCHEDULER_XML);
      return c;
    }
    try (InputStream in = rmContext.getConfigurationProvider().getConfigurationInputStream(base,
        CAPACITY_SCHEDULER_XML)) {
      if (in != null) {
        // Copied key by key: a stream resource cannot be read again when the configuration reloads. Values set in
        // code (embedded clusters, tests) win over the file, as they do over any resource.
        Configuration file = new Configuration(false);
        file.addResource(in);
        for (Map.Entry<String, String> e : file) {
          if (!setInCode(base, e.getKey())) {
            c.set(e.getKey(), e.getValue(), CAPACITY_SCHEDULER_XML);
          }
        }
      }
    } catch (YarnException e) {
      throw new IOException("cannot read " + CAPACITY_SCHEDULER_XML + ": " + e.getMessage(), e);
    }
    return c;
  }

  private static boolean setInCode(Configuration c, String key) {
    String[] sources = c.getPropertySources(key);
    return sources != null && List.of(sources).contains("programmatically");
  }

  private static Map<String, String> entries(Configuration c) {
    Map<String, String> out = new HashMap<>();
    for (Map.Entry<String, String> e : c) {
      if (e.getKey().startsWith(QueueConfigParser.PREFIX) || e.getKey().startsWith("yarn.scheduler.spindle.")) {
        out.put(e.getKey(), c.get(e.getKey()));
      }
    }
    return out;
  }

  private void installQueues(QueueTree next, Configuration c) {
    Map<String, SpindleQueue> byPath = new LinkedHashMap<>();
    Map<String, SpindleQueue> before = queues;
    for (QueueConfig q : next.all()) {
      SpindleQueue parent = q.parentPath() == null ? null : byPath.get(q.parentPath());
      // A queue that stays keeps the metrics it has: YARN's registry is one JVM-wide map by queue name, which another
      // scheduler in the JVM may have filled since (the other ResourceManager of an HA pair in a test cluster); the
      // applications already running count into the object they were added with.
      SpindleQueue kept = before.get(q.path());
      QueueMetrics metrics = kept != null && java.util.Objects.equals(kept.config().parentPath(), q.parentPath())
          ? kept.getMetrics() : QueueMetrics.forQueue(q.path(), parent, false, c);
      Map<QueueACL, AccessControlList> acls = new HashMap<>();
      boolean root = q.parentPath() == null;
      acls.put(QueueACL.SUBMIT_APPLICATIONS, new AccessControlList(
          c.get(QueueConfigParser.key(q.path(), ACL_SUBMIT), root ? "*" : " ")));
      acls.put(QueueACL.ADMINISTER_QUEUE, new AccessControlList(
          c.get(QueueConfigParser.key(q.path(), ACL_ADMINISTER), root ? "*" : " ")));
      byPath.put(q.path(), new SpindleQueue(q, parent, metrics, acls, this::figures));
    }
    this.tree = next;
    this.queues = Map.copyOf(byPath);
  }

  // ---------------------------------------------------------------- events

  @Override
  public void handle(SchedulerEvent event) {
    switch (event.getType()) {
      case NODE_ADDED -> {
        NodeAddedSchedulerEvent e = (NodeAddedSchedulerEvent) event;
        addNode(e.getAddedRMNode());
        recoverContainersOnNode(e.getContainerReports(), e.getAddedRMNode());
      }
      case NODE_REMOVED -> removeNode(((NodeRemovedSchedulerEvent) event).getRemovedRMNode());
      case NODE_RESOURCE_UPDATE -> {
        NodeResourceUpdateSchedulerEvent e = (NodeResourceUpdateSchedulerEvent) event;
        updateNodeResource(e.getRMNode(), e.getResourceOption());
        inventory.updateResources(e.getRMNode().getNodeID(), e.getResourceOption().getResource());
        pendingRebuild.add(e.getRMNode().getNodeID());
        LOG.info("Node {} resources updated to {}; Spindle re-reads the node once nothing runs on it",
            e.getRMNode().getNodeID(), e.getResourceOption().getResource());
      }
      case NODE_UPDATE -> {
        nodeUpdate(((NodeUpdateSchedulerEvent) event).getRMNode());
        wake.release();
      }
      case APP_ADDED -> {
        AppAddedSchedulerEvent e = (AppAddedSchedulerEvent) event;
        addApplication(e.getApplicationId(), e.getQueue(), e.getUser(), e.getIsAppRecovering(), e.isUnmanagedAM());
      }
      case APP_REMOVED -> {
        AppRemovedSchedulerEvent e = (AppRemovedSchedulerEvent) event;
        removeApplication(e.getApplicationID(), e.getFinalState());
      }
      case APP_ATTEMPT_ADDED -> {
        AppAttemptAddedSchedulerEvent e = (AppAttemptAddedSchedulerEvent) event;
        addAttempt(e.getApplicationAttemptId(), e.getTransferStateFromPreviousAttempt(), e.getIsAttemptRecovering());
      }
      case APP_ATTEMPT_REMOVED -> {
        AppAttemptRemovedSchedulerEvent e = (AppAttemptRemovedSchedulerEvent) event;
        removeAttempt(e.getApplicationAttemptID(), e.getKeepContainersAcrossAppAttempts());
      }
      case CONTAINER_EXPIRED -> {
        ContainerId id = ((ContainerExpiredSchedulerEvent) event).getContainerId();
        completedContainer(getRMContainer(id),
            SchedulerUtils.createAbnormalContainerStatus(id, SchedulerUtils.EXPIRED_CONTAINER),
            RMContainerEventType.EXPIRE);
      }
      case RELEASE_CONTAINER -> {
        RMContainer c = ((ReleaseContainerEvent) event).getContainer();
        completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(),
            SchedulerUtils.RELEASED_CONTAINER), RMContainerEventType.RELEASED);
      }
      // Spindle places by GPU inventory and topology, not by node label or attribute.
      case NODE_LABELS_UPDATE, NODE_ATTRIBUTES_UPDATE -> LOG.debug("Spindle ignores {}", event.getType());
      // Sent by CapacityScheduler's preemption monitor and for its reserved containers and dynamic queues; Spindle
      // neither runs that monitor nor reserves YARN containers nor creates queues on the fly.
      case KILL_RESERVED_CONTAINER, MARK_CONTAINER_FOR_PREEMPTION, MARK_CONTAINER_FOR_KILLABLE,
          MARK_CONTAINER_FOR_NONKILLABLE, MANAGE_QUEUE, AUTO_QUEUE_DELETION ->
          LOG.warn("Spindle does not act on {}: it comes from a CapacityScheduler component", event.getType());
      default -> LOG.debug("Spindle does not act on scheduler event {}", event.getType());
    }
  }

  private void addNode(RMNode rmNode) {
    FiCaSchedulerNode node = new FiCaSchedulerNode(rmNode, usePortForNodeName);
    nodeTracker.addNode(node);
    try {
      inbox.add(new EngineEvent.NodeAdded(inventory.register(rmNode.getNodeID(), location(rmNode.getRackName()),
          rmNode.getTotalCapability())));
    } catch (IllegalArgumentException e) {
      LOG.error("Node {} cannot be scheduled by Spindle: {}", rmNode.getNodeID(), e.getMessage());
    }
    LOG.info("Node {} added on {}: {}", rmNode.getNodeID(), rmNode.getRackName(), rmNode.getTotalCapability());
  }

  /**
   * Like YARN's, without telling the node-label manager: once that knows a node's resources, FiCaSchedulerApp's
   * usage report casts the queue to CapacityScheduler's queue class. Spindle does not schedule by node label.
   */
  @Override
  public void updateNodeResource(RMNode rmNode, ResourceOption option) {
    writeLock.lock();
    try {
      FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
      if (node == null) {
        return;
      }
      nodeTracker.removeNode(rmNode.getNodeID());
      node.updateTotalResource(option.getResource());
      node.setOvercommitTimeOut(option.getOverCommitTimeout());
      nodeTracker.addNode(node);
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * The node as the tracker holds it, never missed while {@link #updateNodeResource} files it again (out of the
   * tracker and back, under the write lock). Read without the lock, a completion on another thread (an AM's release,
   * on an IPC thread) could find no node in that window and never give the container back to it: the node would never
   * look empty again, and a resized node is re-read only once empty (docs/reliability.md). Only the look-up takes the
   * read lock, so it nests under any of this class's own locks.
   */
  private FiCaSchedulerNode trackedNode(NodeId id) {
    readLock.lock();
    try {
      return (FiCaSchedulerNode) getNode(id);
    } finally {
      readLock.unlock();
    }
  }

  private void removeNode(RMNode rmNode) {
    FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
    if (node == null) {
      return;
    }
    synchronized (nodeRemovalLock) {
      for (RMContainer c : node.getCopiedListOfRunningContainers()) {
        super.completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(),
            SchedulerUtils.LOST_CONTAINER), RMContainerEventType.KILL);
      }
      nodeTracker.removeNode(rmNode.getNodeID());
      inventory.unregister(rmNode.getNodeID());
      pendingRebuild.remove(rmNode.getNodeID());
      inbox.add(new EngineEvent.NodeRemoved(engineNodeId(rmNode.getNodeID())));
    }
    LOG.info("Node {} removed", rmNode.getNodeID());
  }

  /** Hadoop racks are paths like {@code /spine1/rack3}; padded or trimmed to one segment per topology level. */
  private String location(String rack) {
    List<String> segments = new ArrayList<>();
    for (String s : (rack == null ? "" : rack).split("/")) {
      if (!s.isBlank()) {
        segments.add(s);
      }
    }
    while (segments.size() < topologyLevels.size()) {
      segments.add(0, "default-" + topologyLevels.get(topologyLevels.size() - 1 - segments.size()));
    }
    List<String> kept = segments.subList(segments.size() - topologyLevels.size(), segments.size());
    return "/" + String.join("/", kept);
  }

  private static String engineNodeId(NodeId id) {
    return id.toString();
  }

  private void addApplication(ApplicationId appId, String queueName, String user, boolean recovering,
      boolean unmanagedAm) {
    QueueTree current = tree;
    Optional<QueueConfig> leaf = current.leaf(queueName);
    String rejection = null;
    SpindleTags tags = SpindleTags.NONE;
    if (leaf.isEmpty()) {
      rejection = current.get(queueName).isPresent()
          ? "Spindle: queue '" + queueName + "' is a parent queue; submit to a leaf queue: " + leafNames(current)
          : "Spindle: application " + appId + " submitted by user " + user + " to unknown queue '" + queueName
              + "'; leaf queues: " + leafNames(current);
    } else {
      RMApp rmApp = rmContext.getRMApps().get(appId);
      try {
        tags = SpindleTags.parse(rmApp == null ? Set.of() : rmApp.getApplicationTags());
      } catch (IllegalArgumentException e) {
        rejection = "Spindle: " + e.getMessage();
      }
      if (rejection == null && YarnConfiguration.isAclEnabled(conf)) {
        UserGroupInformation ugi = UserGroupInformation.createRemoteUser(user);
        SpindleQueue q = queues.get(leaf.get().path());
        if (!q.hasAccess(QueueACL.SUBMIT_APPLICATIONS, ugi) && !q.hasAccess(QueueACL.ADMINISTER_QUEUE, ugi)) {
          rejection = "User " + user + " does not have permission to submit " + appId + " to queue "
              + leaf.get().path();
        }
      }
    }
    if (rejection != null) {
      LOG.info("Rejected application {}: {}", appId, rejection);
      rmContext.getDispatcher().getEventHandler().handle(
          new RMAppEvent(appId, RMAppEventType.APP_REJECTED, rejection));
      return;
    }
    SpindleQueue queue = queues.get(leaf.get().path());
    applications.put(appId, new SchedulerApplication<>(queue, user, unmanagedAm));
    asks.put(appId, new AppAsks(tags, unmanagedAm));
    queue.getMetrics().submitApp(user, unmanagedAm);
    RMApp rmApp = rmContext.getRMApps().get(appId);
    int priority = rmApp == null || rmApp.getApplicationPriority() == null ? 0
        : rmApp.getApplicationPriority().getPriority();
    inbox.add(new EngineEvent.AppSubmitted(appId.toString(), queue.path(), user, priority));
    LOG.info("Accepted application {} from {} into {} (tags {})", appId, user, queue.path(), tags);
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler().handle(new RMAppEvent(appId, RMAppEventType.APP_ACCEPTED));
    }
  }

  private static List<String> leafNames(QueueTree t) {
    return t.leaves().stream().map(QueueConfig::path).toList();
  }

  private void addAttempt(ApplicationAttemptId attemptId, boolean transferState, boolean recovering) {
    SchedulerApplication<SpindleAppAttempt> app = applications.get(attemptId.getApplicationId());
    if (app == null) {
      LOG.warn("Attempt {} of an application Spindle does not know", attemptId);
      return;
    }
    SpindleQueue queue = (SpindleQueue) app.getQueue();
    SpindleAppAttempt attempt = new SpindleAppAttempt(attemptId, app.getUser(), queue,
        queue.getAbstractUsersManager(), rmContext);
    if (transferState) {
      attempt.transferStateFromPreviousAttempt(app.getCurrentAppAttempt());
    }
    app.setCurrentAppAttempt(attempt);
    queue.getMetrics().submitAppAttempt(app.getUser(), app.isUnmanagedAM());
    AppAsks appAsks = asks.get(attemptId.getApplicationId());
    if (appAsks != null) {
      appAsks.newAttempt();
    }
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler().handle(
          new RMAppAttemptEvent(attemptId, RMAppAttemptEventType.ATTEMPT_ADDED));
    }
  }

  private void removeAttempt(ApplicationAttemptId attemptId, boolean keepContainers) {
    SpindleAppAttempt attempt = getApplicationAttempt(attemptId);
    if (attempt == null) {
      return;
    }
    // One step under the attempt's monitor, which handing out containers takes too: a cycle that ran between the
    // completions and the stop (the completions freed room for the attempt's remaining asks) handed it a container
    // nobody ever completed, which held its node for good (SpindleSchedulerMiniClusterTest, docs/reliability.md).
    synchronized (attempt) {
      for (RMContainer c : attempt.getLiveContainers()) {
        if (keepContainers && c.getState().equals(org.apache.hadoop.yarn.server.resourcemanager.rmcontainer
            .RMContainerState.RUNNING)) {
          continue;
        }
        super.completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(),
            SchedulerUtils.COMPLETED_APPLICATION), RMContainerEventType.KILL);
      }
      AppAsks appAsks = asks.get(attemptId.getApplicationId());
      if (appAsks != null) {
        for (String key : appAsks.cancelAll()) {
          inbox.add(new EngineEvent.Demand(attemptId.getApplicationId().toString(), key, Resources.NONE, 0));
        }
      }
      synchronized (queueMetricsLock) {
        attempt.stop(org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState.FINISHED);
      }
    }
  }

  private void removeApplication(ApplicationId appId,
      org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState finalState) {
    SchedulerApplication<SpindleAppAttempt> app = applications.remove(appId);
    if (app == null) {
      return;
    }
    app.stop(finalState);
    asks.remove(appId);
    heardFrom.remove(appId);
    waitReasons.remove(appId);
    askNotes.remove(appId);
    checkpoints.forget(appId);
    inbox.add(new EngineEvent.AppFinished(appId.toString()));
  }

  @Override
  protected void completedContainerInternal(RMContainer rmContainer, ContainerStatus status,
      RMContainerEventType event) {
    Container container = rmContainer.getContainer();
    SpindleAppAttempt attempt = getCurrentAttemptForContainer(container.getId());
    FiCaSchedulerNode node = trackedNode(container.getNodeId());
    Long allocation = allocationOf.remove(container.getId());
    if (allocation != null) {
      containerOf.remove(allocation);
    }
    preemptions.ended(container.getId());
    if (allocation != null) {
      String lost = lostBecause(status, event);
      if (lost == null) {
        inbox.add(new EngineEvent.ContainerFinished(allocation));
      } else {
        // The engine may restart the container's gang; asking for it again then needs what it was asked as.
        lostAsks.put(allocation, new LostAsk(rmContainer.getAllocatedSchedulerKey(),
            rmContainer.getAllocatedResource(), rmContainer.getContainerRequest() != null));
        inbox.add(new EngineEvent.ContainerLost(allocation, lost));
      }
    }
    if (attempt != null) {
      synchronized (attempt) { // Same lock order as allocate(): monitor, then the attempt's write lock.
        synchronized (queueMetricsLock) {
          attempt.containerCompleted(rmContainer, status, event, rmContainer.getNodeLabelExpression());
        }
      }
    }
    if (node != null) {
      node.releaseContainer(container.getId(), false);
    }
    wake.release();
  }

  /**
   * Why a container ended through no doing of its application or of Spindle, or {@code null} if it did not: its
   * node was lost, it expired before it was launched, or its disks failed.
   */
  private static String lostBecause(ContainerStatus status, RMContainerEventType event) {
    if (event == RMContainerEventType.EXPIRE) {
      return "it was allocated but not launched within " + YarnConfiguration.RM_CONTAINER_ALLOC_EXPIRY_INTERVAL_MS;
    }
    if (SchedulerUtils.LOST_CONTAINER.equals(status.getDiagnostics())) {
      return "its node was lost";
    }
    if (status.getExitStatus() == ContainerExitStatus.DISKS_FAILED) {
      return "its node's disks failed";
    }
    return null;
  }

  /**
   * Work-preserving recovery: after YARN has rebuilt its view of the node's running containers, each is told to
   * the engine so it is charged to its queue and its capacity stays taken.
   */
  @Override
  public void recoverContainersOnNode(List<org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus> reports,
      RMNode node) {
    synchronized (queueMetricsLock) {
      super.recoverContainersOnNode(reports, node);
    }
    if (reports == null) {
      return;
    }
    for (org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus report : reports) {
      ContainerId id = report.getContainerId();
      RMContainer rmContainer = getRMContainer(id);
      if (rmContainer == null || allocationOf.containsKey(id)) {
        continue;
      }
      try {
        long allocation;
        synchronized (this) {
          allocation = nextRecoveredId--;
        }
        allocationOf.put(id, allocation);
        containerOf.put(allocation, id);
        // Under the request's own key, so that a reclaimed recovered container is asked for again under it.
        inbox.add(new EngineEvent.ContainerRecovered(allocation, id.getApplicationAttemptId().getApplicationId()
            .toString(), AppAsks.keyName(rmContainer.getAllocatedSchedulerKey()), engineNodeId(node.getNodeID()),
            translate.shape(report.getAllocatedResource()), !rmContainer.isAMContainer()));
        metrics.recovered();
        LOG.info("Recovered container {} on {}", id, node.getNodeID());
      } catch (IllegalArgumentException e) {
        LOG.error("Recovered container {} cannot be accounted: {}", id, e.getMessage());
      }
    }
  }

  @Override
  public void killContainer(RMContainer container) {
    completedContainer(container, SchedulerUtils.createKilledContainerStatus(container.getContainerId(),
        "Killed by the ResourceManager"), RMContainerEventType.KILL);
  }

  /** How this scheduler names itself in the election: host and, in an HA pair, the ResourceManager's HA id. */
  private static String instanceId(Configuration conf) {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      host = "unknown-host";
    }
    String haId = HAUtil.isHAEnabled(conf) ? HAUtil.getRMHAId(conf) : null;
    return host + (haId == null ? "" : "/" + haId) + "#" + ProcessHandle.current().pid();
  }

  /**
   * Another scheduler led while this one could not see it: its engine is stale. The ResourceManager is told as it
   * is of a fenced state store: it goes to standby in an HA pair and stops otherwise, either way never letting this
   * scheduler allocate again.
   */
  private void mustStop(String why) {
    running = false;
    if (rmContext != null) {
      rmContext.getDispatcher().getEventHandler().handle(new RMFatalEvent(RMFatalEventType.STATE_STORE_FENCED,
          "Spindle: " + why));
    }
  }

  // ---------------------------------------------------------------- asks

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release, List<String> blacklistAdditions,
      List<String> blacklistRemovals, ContainerUpdates updateRequests) {
    SpindleAppAttempt attempt = getApplicationAttempt(attemptId);
    if (attempt == null || !attempt.getApplicationAttemptId().equals(attemptId)) {
      LOG.error("allocate for unknown or outdated attempt {}", attemptId);
      return EMPTY_ALLOCATION;
    }
    normalizeResourceRequests(ask);
    releaseContainers(release, attempt);
    checkpoints.open(attemptId.getApplicationId());
    AppAsks appAsks = asks.get(attemptId.getApplicationId());
    synchronized (attempt) {
      if (attempt.isStopped()) {
        return EMPTY_ALLOCATION;
      }
      if (!ask.isEmpty()) {
        synchronized (queueMetricsLock) {
          attempt.updateResourceRequests(ask);
        }
      }
      if (appAsks != null) {
        forwardAsks(attemptId.getApplicationId(), attempt, appAsks);
        heardFrom.add(attemptId.getApplicationId());
      }
      Resource allocated;
      synchronized (queueMetricsLock) {
        allocated = getRootQueueMetrics().getAllocatedResources();
      }
      attempt.setHeadroom(org.apache.hadoop.yarn.util.resource.Resources.componentwiseMax(
          org.apache.hadoop.yarn.util.resource.Resources.none(),
          org.apache.hadoop.yarn.util.resource.Resources.subtract(getClusterResource(), allocated)));
      return new Allocation(attempt.pullNewlyAllocatedContainers(), attempt.getHeadroom(),
          preemptions.contract(attemptId.getApplicationId()), null, null, attempt.pullUpdatedNMTokens());
    }
  }

  /** Turns YARN's outstanding asks into engine demands, only where they changed. */
  private void forwardAsks(ApplicationId appId, SpindleAppAttempt attempt, AppAsks appAsks) {
    boolean amAsk = appAsks.expectsAmAsk(attempt);
    Set<String> listed = new HashSet<>();
    for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
      PendingAsk pending = attempt.getPendingAsk(key, ResourceRequest.ANY);
      Resource capability = pending.getPerAllocationResource();
      String keyName = AppAsks.keyName(key);
      listed.add(keyName);
      if (amAsk) {
        appAsks.markAm(keyName);
      }
      boolean gang = !appAsks.isAm(keyName) && appAsks.takesGang(keyName);
      int count = pending.getCount();
      if (!appAsks.changed(keyName, key, capability, count)) {
        continue;
      }
      Resources shape;
      try {
        shape = translate.shape(capability);
      } catch (IllegalArgumentException e) {
        reject(appId, keyName, e.getMessage());
        continue;
      }
      int gangSize = appAsks.tags().gangSize();
      if (gang && count > 0 && count < gangSize) {
        String note = "gang of " + gangSize + " waits for the application to ask for all members (it asks "
            + count + ")";
        waitReasons.put(appId, note);
        askNotes.put(appId, note);
        continue;
      }
      askNotes.remove(appId);
      PlacementSpec spec = appAsks.isAm(keyName) ? PlacementSpec.APPLICATION_MASTER : appAsks.tags().placement(gang);
      inbox.add(new EngineEvent.Demand(appId.toString(), keyName, shape, count, spec));
    }
    // An ask withdrawn to 0 leaves YARN's list of keys: the engine would go on placing it. Seen when a preempted gang
    // was re-admitted on its AM's behalf before the AM's own re-ask arrived, which the AM then withdrew
    // (CheckpointPreemptionTest, about one run in ten; docs/reliability.md).
    for (String gone : appAsks.withdrawnUnless(listed)) {
      inbox.add(new EngineEvent.Demand(appId.toString(), gone, Resources.NONE, 0));
    }
  }

  // ---------------------------------------------------------------- scheduling thread

  private void schedulingLoop() {
    while (running) {
      try {
        wake.tryAcquire(cycleIntervalMs, TimeUnit.MILLISECONDS);
        wake.drainPermits();
        runCycle();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        LOG.error("Spindle scheduling cycle failed; the next cycle starts afresh", e);
      }
    }
  }

  /** Drains the inbox into one engine cycle and applies its decisions. Visible for tests that drive cycles. */
  public void runCycle() {
    if (rmContext != null && rmContext.isWorkPreservingRecoveryEnabled()
        && !rmContext.isSchedulerReadyForAllocatingContainers()) {
      return;
    }
    SchedulerLeadership.Term term = ha == null ? null : ha.term();
    if (ha != null && term == null) {
      return; // Not the leader: what arrives waits in the inbox for a term that may never come.
    }
    if (!checkpointsSwept && checkpoints.store() != null) {
      // YARN's recovery has added every application that still runs: the znodes of any other ended unseen.
      checkpointsSwept = true;
      checkpoints.store().sweep(this::stillRuns);
    }
    if (ha != null && takeOverState == null) {
      savedState().ifPresent(state -> {
        takeOverState = state;
        takeOverSince = System.currentTimeMillis();
      });
    }
    if (takeOverState != null && !readyToTakeOver()) {
      return;
    }
    List<EngineEvent> batch = new ArrayList<>();
    synchronized (nodeRemovalLock) {
      EngineEvent e;
      while ((e = inbox.poll()) != null) {
        batch.add(e);
      }
    }
    collectNodeChanges(batch);
    List<Long> lostInBatch = batch.stream().filter(EngineEvent.ContainerLost.class::isInstance)
        .map(event -> ((EngineEvent.ContainerLost) event).allocationId()).toList();
    List<Decision> decisions = new ArrayList<>();
    com.codahale.metrics.Timer.Context timing = metrics.timeCycle();
    synchronized (engineLock) {
      Optional<DurableState> saved = Optional.ofNullable(takeOverState);
      takeOverState = null;
      if (saved.isPresent()) {
        // What YARN recovered first, then the previous leader's state over it, then the asks, as restore expects.
        List<EngineEvent> asks = new ArrayList<>();
        batch.removeIf(event -> event instanceof EngineEvent.Demand && asks.add(event));
        decisions.addAll(remembered(cycle(batch)));
        takeOver(saved.get());
        batch = asks;
      }
      decisions.addAll(remembered(cycle(batch)));
    }
    apply(decisions);
    lostInBatch.forEach(lostAsks::remove); // Their gangs did not restart (or restarting used them): not needed.
    timing.stop();
    metrics.decided(decisions, this::queueOf);
    publishMetrics(!batch.isEmpty() || !decisions.isEmpty());
    if (term != null) {
      saveState(term);
    }
  }

  /**
   * Refreshes the gauges' snapshot after a cycle that changed something, and at least once a second (ages move with
   * time): not on every idle cycle, since the stats walk every GPU. Not part of the cycle's measured latency.
   */
  private void publishMetrics(boolean changed) {
    long now = System.currentTimeMillis();
    if (!changed && now - lastMetricsPublish < 1_000) {
      return;
    }
    lastMetricsPublish = now;
    synchronized (engineLock) {
      metrics.publish(engine.stats(), engine.queueSnapshots());
      published = engine.status();
    }
  }

  private List<Decision> remembered(CycleResult cycle) {
    synchronized (history) {
      history.record(cycle);
    }
    return cycle.decisions();
  }

  /**
   * Whether every running application the saved state holds requests of (reservations, reclaims, starvation) has
   * sent its asks to this ResourceManager since it became active — an AM does so on its first heartbeat after a
   * failover — or YARN's recovery wait has passed again. Restored against asks that have not arrived yet, those
   * reservations and reclaims would be dropped as withdrawn.
   */
  private boolean readyToTakeOver() {
    if (System.currentTimeMillis() - takeOverSince >= takeOverWaitMs) {
      return true;
    }
    for (String app : takeOverState.requestingApps()) {
      ApplicationId id = ApplicationId.fromString(app);
      if (applications.containsKey(id) && !heardFrom.contains(id)) {
        return false;
      }
    }
    return true;
  }

  /** One engine cycle at one time, journaled with its events and decisions. Called holding the engine lock. */
  private CycleResult cycle(List<EngineEvent> events) {
    long now = clock.tick();
    CycleResult result = engine.cycle(events, this::ignored);
    journal.cycle(now, events, result.decisions());
    return result;
  }

  private void ignored(EngineEvent event, RuntimeException problem) {
    LOG.error("Spindle ignored an event it cannot apply ({}): {}", event, problem.getMessage());
  }

  /** Whether YARN has told this scheduler of {@code appId} and not of its end. */
  private boolean stillRuns(String appId) {
    try {
      return applications.containsKey(ApplicationId.fromString(appId));
    } catch (IllegalArgumentException notAnApplication) {
      return true; // Not for this scheduler to remove.
    }
  }

  /** The previous leader's state, on this scheduler's first cycle as leader; empty then too if there is none. */
  private Optional<DurableState> savedState() {
    Optional<byte[]> bytes;
    try {
      bytes = ha.takeOver();
    } catch (Exception ex) {
      LOG.warn("Cannot read the previous leader's state yet (retried next cycle): {}", ex.getMessage());
      return Optional.empty();
    }
    if (bytes.isEmpty()) {
      return Optional.empty();
    }
    try {
      SchedulerStateCodec.Snapshot snapshot = SchedulerStateCodec.decode(bytes.get());
      LOG.info("Taking over the scheduler state saved in epoch {}", snapshot.leaderEpoch());
      return Optional.of(snapshot.state());
    } catch (IllegalArgumentException ex) {
      LOG.error("The saved scheduler state is unreadable; scheduling without it (gangs regroup as single "
          + "containers, open checkpoint notices are planned again): {}", ex.getMessage());
      return Optional.empty();
    }
  }

  /**
   * Restores the previous leader's state over what YARN recovered. Containers the restored notices name join their
   * applications' preemption contracts at once (the engine re-issues the notices with their ids and deadlines next
   * cycle), so they are not signalled a second time.
   */
  private void takeOver(DurableState state) {
    RecordingLookup lookup = new RecordingLookup(name -> {
      try {
        return allocationOf.get(ContainerId.fromString(name));
      } catch (IllegalArgumentException notAContainer) {
        return null;
      }
    });
    try {
      RestoreReport report = engine.restore(state, lookup);
      journal.restored(clock.nowMillis(), state, lookup.found(), null);
      LOG.info("Spindle took over: {}", report);
      takeOverReport = report;
    } catch (RuntimeException ex) {
      journal.restored(clock.nowMillis(), state, lookup.found(), ex.toString());
      LOG.error("The saved scheduler state cannot be restored; scheduling without it: {}", ex.getMessage());
      return;
    }
    for (DurableState.ReclaimState reclaim : state.reclaims()) {
      for (DurableState.NoticeState n : reclaim.notices()) {
        Set<ContainerId> ids = new HashSet<>();
        for (DurableState.NoticeContainer c : n.containers()) {
          if (!c.ended()) {
            ContainerId id = ContainerId.fromString(c.name());
            if (allocationOf.containsKey(id)) {
              ids.add(id);
            }
          }
        }
        if (!ids.isEmpty()) {
          preemptions.announce(ApplicationId.fromString(n.appId()), ids);
        }
      }
    }
  }

  /**
   * Hands the engine's durable state to the writer when it changed, fenced by the term it was decided in. The value
   * is immutable; the writer encodes it.
   */
  private void saveState(SchedulerLeadership.Term term) {
    DurableState state;
    synchronized (engineLock) {
      long version = engine.durableVersion();
      if (version == savedVersion) {
        return;
      }
      savedVersion = version;
      state = engine.durableState(allocation -> {
        ContainerId id = containerOf.get(allocation);
        return id == null ? null : id.toString();
      });
    }
    ha.save(term, () -> SchedulerStateCodec.encode(state, term.epoch()));
  }

  private void apply(List<Decision> all) {
    // An application's containers of one cycle are handed to its attempt under the attempt's monitor, which its AM's
    // allocate() also takes: the AM sees a gang whole or not at all, never a part pulled in between.
    Map<String, List<Decision.Allocate>> allocationsByApp = new LinkedHashMap<>();
    for (Decision d : all) {
      if (d instanceof Decision.Allocate a) {
        allocationsByApp.computeIfAbsent(a.appId(), k -> new ArrayList<>()).add(a);
      } else {
        apply(d);
      }
    }
    synchronized (nodeRemovalLock) {
      allocationsByApp.forEach((appId, list) -> {
        SchedulerApplication<SpindleAppAttempt> app = applications.get(ApplicationId.fromString(appId));
        SpindleAppAttempt attempt = app == null ? null : app.getCurrentAppAttempt();
        Object lock = attempt == null ? new Object() : attempt;
        synchronized (lock) {
          list.forEach(this::startContainer);
        }
      });
    }
  }

  private void apply(Decision decision) {
    if (decision instanceof Decision.Reject r) {
      reject(ApplicationId.fromString(r.appId()), r.requestKey(), r.reason());
    } else if (decision instanceof Decision.Wait w) {
      waitReasons.put(ApplicationId.fromString(w.appId()), w.reason());
      LOG.info("Application {} request {} waits: {}", w.appId(), w.requestKey(), w.reason());
    } else if (decision instanceof Decision.Reserve r) {
      LOG.info("Reserved {} nodes in {} for the gang of {} (projected start {})", r.nodeIds().size(), r.subtree(),
          r.appId(), r.projectedStartMillis());
    } else if (decision instanceof Decision.RequestCheckpoint r) {
      checkpoints.request(r);
    } else if (decision instanceof Decision.CancelCheckpoint c) {
      checkpoints.cancel(c);
    } else if (decision instanceof Decision.Preempt p) {
      reclaim(p);
    } else if (decision instanceof Decision.RestartGang r) {
      restartGang(r);
    } else if (decision instanceof Decision.ReconfigureMig m) {
      Optional<EngineEvent> refused = inventory.request(m);
      if (refused.isPresent()) {
        LOG.warn("MIG re-partition of {} GPU {} to {} cannot be sent: the node does not report to ZooKeeper",
            m.nodeId(), m.gpuIndex(), m.layout());
        inbox.add(refused.get());
      } else {
        LOG.info("MIG re-partition of {} GPU {} to {} asked of the node", m.nodeId(), m.gpuIndex(), m.layout());
      }
    }
  }

  /** Asks the container's NodeManager to send it SIGTERM; it goes out with the node's next heartbeat answer. */
  private void signalGracefulShutdown(ContainerId id) {
    RMContainer c = getRMContainer(id);
    if (c != null && rmContext != null) {
      rmContext.getDispatcher().getEventHandler().handle(new RMNodeSignalContainerEvent(c.getContainer().getNodeId(),
          SignalContainerRequest.newInstance(id, SignalContainerCommand.GRACEFUL_SHUTDOWN)));
    }
  }

  /**
   * Kills the victims with status PREEMPTED and asks for their containers again on the application's behalf. The
   * engine re-queues preempted work itself (a gang whole), so YARN's outstanding ask must hold it too, or the
   * re-queued containers could not be handed out; YARN does the same for a container killed before its AM saw it.
   * An AM that asks again itself sends an absolute count, which then simply stands; one that does not want the work
   * back asks for none.
   */
  private void reclaim(Decision.Preempt p) {
    checkpoints.reclaimed(p);
    stopAndAskAgain(p.appId(), p.requestKey(), p.allocationIds(), List.of(), "by Spindle: " + p.reason());
    LOG.info("Preempted {} containers of {} (notice {}); it resumes from {}", p.allocationIds().size(), p.appId(),
        p.noticeId(), p.checkpointLocation());
  }

  private void restartGang(Decision.RestartGang r) {
    stopAndAskAgain(r.appId(), r.requestKey(), r.allocationIds(), r.lostAllocationIds(),
        "by Spindle, which restarts the gang: " + r.reason());
    LOG.warn("Application {} request {}: {}", r.appId(), r.requestKey(), r.reason());
  }

  /**
   * Kills the running containers (status PREEMPTED: not the application's failure) and puts them, and the lost
   * ones, back into YARN's outstanding ask on the application's behalf, as YARN does for a container killed before
   * its AM saw it: the engine re-queued them, and what YARN holds must agree.
   */
  private void stopAndAskAgain(String application, String requestKey, List<Long> running, List<Long> lost,
      String why) {
    ApplicationId appId = ApplicationId.fromString(application);
    SchedulerApplication<SpindleAppAttempt> app = applications.get(appId);
    SpindleAppAttempt attempt = app == null ? null : app.getCurrentAppAttempt();
    AppAsks appAsks = asks.get(appId);
    Object lock = attempt == null ? new Object() : attempt;
    synchronized (lock) { // As allocate(): the AM sees its asks and our re-ask of them change together.
      for (long allocation : running) {
        ContainerId id = containerOf.get(allocation);
        RMContainer c = id == null ? null : getRMContainer(id);
        if (c == null) {
          // It was lost itself meanwhile (its loss may still be on its way to the engine): ask for it as lost.
          LostAsk ask = lostAsks.remove(allocation);
          if (ask != null) {
            askAgain(attempt, appAsks, requestKey, ask);
          }
          continue;
        }
        boolean yarnAsksAgain = c.getContainerRequest() != null; // Not yet acquired by the AM.
        completedContainer(c, SchedulerUtils.createPreemptedContainerStatus(id, SchedulerUtils.PREEMPTED_CONTAINER
            + " " + why), RMContainerEventType.KILL);
        askAgain(attempt, appAsks, requestKey, new LostAsk(c.getAllocatedSchedulerKey(), c.getAllocatedResource(),
            yarnAsksAgain));
      }
      for (long allocation : lost) {
        LostAsk ask = lostAsks.remove(allocation);
        if (ask != null) {
          askAgain(attempt, appAsks, requestKey, ask);
        }
      }
    }
  }

  private void askAgain(SpindleAppAttempt attempt, AppAsks appAsks, String requestKey, LostAsk ask) {
    if (attempt == null || appAsks == null) {
      return;
    }
    if (!ask.yarnAsksAgain()) {
      synchronized (queueMetricsLock) {
        attempt.recoverResourceRequestsForContainer(new ContainerRequest(List.of(ResourceRequest.newBuilder()
            .priority(ask.key().getPriority()).allocationRequestId(ask.key().getAllocationRequestId())
            .resourceName(ResourceRequest.ANY).capability(ask.capability()).numContainers(1).build())));
      }
    }
    appAsks.requeued(requestKey, ask.key(), ask.capability());
  }

  /**
   * What a lost container was asked as, kept until the engine says whether its gang restarts.
   *
   * @param yarnAsksAgain YARN put it back into the outstanding ask itself (it was lost before its AM acquired it)
   */
  private record LostAsk(SchedulerRequestKey key, Resource capability, boolean yarnAsksAgain) {}

  /**
   * Adds to the cycle what the nodes' agents reported and the re-partitions they left unanswered, and rebuilds the
   * nodes whose GPUs changed once nothing runs on them (a rebuild re-adds the node, which would drop running work).
   */
  private void collectNodeChanges(List<EngineEvent> batch) {
    for (String gpu : migReports.keySet()) {
      MigLayoutRecord report = migReports.remove(gpu);
      if (report == null) {
        continue;
      }
      NodeInventory.Outcome outcome = inventory.onReport(report);
      if (outcome instanceof NodeInventory.Outcome.Report r) {
        batch.add(r.event());
      } else if (outcome instanceof NodeInventory.Outcome.Rebuild r) {
        pendingRebuild.add(r.node());
      }
    }
    batch.addAll(inventory.overdueAnswers());
    for (NodeId id : pendingRebuild) {
      FiCaSchedulerNode node = trackedNode(id);
      if (node == null) {
        pendingRebuild.remove(id);
      } else if (node.getNumContainers() == 0) {
        pendingRebuild.remove(id);
        try {
          Optional<io.spindle.core.model.Node> rebuilt = inventory.rebuild(id);
          if (rebuilt.isPresent()) {
            batch.add(new EngineEvent.NodeRemoved(engineNodeId(id)));
            batch.add(new EngineEvent.NodeAdded(rebuilt.get()));
            LOG.info("Node {} re-read now that nothing runs on it: {} GPUs", id, rebuilt.get().gpus().size());
          }
        } catch (IllegalArgumentException ex) {
          LOG.error("Node {} cannot be rebuilt from its new GPU inventory: {}", id, ex.getMessage());
        }
      }
    }
  }

  /** The leaf queue path of an application Spindle knows, for per-queue metrics. */
  private Optional<String> queueOf(String appId) {
    SchedulerApplication<SpindleAppAttempt> app = applications.get(ApplicationId.fromString(appId));
    return app == null ? Optional.empty() : Optional.of(((SpindleQueue) app.getQueue()).path());
  }

  private Optional<byte[]> amRmTokenPassword(ApplicationId app) {
    RMApp rmApp = rmContext == null ? null : rmContext.getRMApps().get(app);
    if (rmApp == null || rmApp.getCurrentAppAttempt() == null
        || rmApp.getCurrentAppAttempt().getAMRMToken() == null) {
      return Optional.empty();
    }
    return Optional.of(rmApp.getCurrentAppAttempt().getAMRMToken().getPassword());
  }

  private void startContainer(Decision.Allocate a) {
    ApplicationId appId = ApplicationId.fromString(a.appId());
    SchedulerApplication<SpindleAppAttempt> app = applications.get(appId);
    SpindleAppAttempt attempt = app == null ? null : app.getCurrentAppAttempt();
    AppAsks appAsks = asks.get(appId);
    FiCaSchedulerNode node = trackedNode(NodeId.fromString(a.nodeId()));
    AppAsks.Ask ask = appAsks == null ? null : appAsks.ask(a.requestKey());
    if (attempt == null || node == null || ask == null) {
      inbox.add(new EngineEvent.ContainerFinished(a.allocationId()));
      return;
    }
    ContainerId containerId = BuilderUtils.newContainerId(attempt.getApplicationAttemptId(),
        attempt.getNewContainerId());
    Container container = BuilderUtils.newContainer(containerId, node.getNodeID(), node.getHttpAddress(),
        ask.capability(), ask.key().getPriority(), null, ask.key().getAllocationRequestId());
    RMContainer rmContainer;
    synchronized (queueMetricsLock) {
      rmContainer = attempt.assign(node, ask.key(), container);
    }
    if (rmContainer == null) {
      inbox.add(new EngineEvent.ContainerFinished(a.allocationId()));
      return;
    }
    allocationOf.put(containerId, a.allocationId());
    containerOf.put(a.allocationId(), containerId);
    appAsks.allocated(a.requestKey());
    node.allocateContainer(rmContainer);
    waitReasons.remove(appId);
    askNotes.remove(appId);
  }

  /** A request that can never be served: the application is killed with the reason as its diagnostics. */
  private void reject(ApplicationId appId, String requestKey, String reason) {
    String message = "Spindle rejected " + (requestKey == null ? "the application" : "request " + requestKey)
        + ": " + reason;
    LOG.info("{}: {}", appId, message);
    waitReasons.put(appId, message);
    rmContext.getDispatcher().getEventHandler().handle(new RMAppEvent(appId, RMAppEventType.KILL, message));
  }

  // ---------------------------------------------------------------- queries

  /** What this scheduler took over from the previous leader's saved state; empty until it has (or if none). */
  public Optional<RestoreReport> takeOverReport() {
    return Optional.ofNullable(takeOverReport);
  }

  /**
   * Whether this scheduler may schedule now: it holds the ZooKeeper leadership (always, without HA). False while its
   * ZooKeeper session is suspended or lost, and for good once it was fenced.
   */
  public boolean leads() {
    return leads(ha == null ? null : ha.term());
  }

  private boolean leads(SchedulerLeadership.Term term) {
    return ha == null || term != null;
  }

  /** Spindle's metrics, as JMX and the Prometheus endpoint show them. */
  public SpindleMetrics metrics() {
    return metrics;
  }

  /** The engine as of the last published cycle, as the status API shows it (harnesses in the RM's JVM audit it). */
  public EngineStatus status() {
    return published;
  }

  /**
   * Where Spindle's HTTP server (Prometheus endpoint, status API, GPU map) listens; empty unless
   * {@value SpindleWeb#PORT} is set.
   */
  public Optional<InetSocketAddress> webAddress() {
    return web == null ? Optional.empty() : web.address();
  }

  /** Why the application is where it is, from the engine's reasons as of the last published cycle. */
  public Explanation explain(ApplicationId appId) {
    String id = appId.toString();
    List<AppHistory.Outcome> outcomes;
    synchronized (history) {
      outcomes = history.of(id);
    }
    String note = askNotes.get(appId);
    return WhyExplainer.explain(id, published, outcomes, note == null ? List.of() : List.of(note));
  }

  /** The status API's window on this scheduler: published snapshots and thread-safe calls only. */
  private final class WebView implements SchedulerView {

    @Override
    public EngineStatus status() {
      return published;
    }

    @Override
    public SchedulerInfo info() {
      SchedulerLeadership.Term term = ha == null ? null : ha.term();
      return new SchedulerInfo(rmId, leads(term), term == null ? -1 : term.epoch(), cycleIntervalMs);
    }

    @Override
    public Explanation explain(String appId) {
      return SpindleScheduler.this.explain(ApplicationId.fromString(appId));
    }

    @Override
    public List<AppHistory.Outcome> history(String appId) {
      synchronized (history) {
        return history.of(appId);
      }
    }

    @Override
    public Optional<String> containerName(long allocationId) {
      return Optional.ofNullable(containerOf.get(allocationId)).map(ContainerId::toString);
    }

    @Override
    public boolean isQueueAdmin(String user, String queuePath) {
      return checkAccess(UserGroupInformation.createRemoteUser(user), QueueACL.ADMINISTER_QUEUE, queuePath);
    }

    @Override
    public String refreshQueues() throws IOException {
      reinitialize(getConfig(), rmContext);
      return "queue configuration reloaded: " + queues.size() + " queues";
    }
  }

  /** The last reason Spindle gave for an application waiting or being rejected, if any. */
  public Optional<String> pendingReason(ApplicationId appId) {
    return Optional.ofNullable(waitReasons.get(appId));
  }

  /** The engine's figures as of now: running and pending containers, gangs, reservations, GPUs. */
  public EngineStats engineStats() {
    synchronized (engineLock) {
      return engine.stats();
    }
  }

  /** The engine's view of every queue, parents first. */
  public List<QueueSnapshot> queueSnapshots() {
    synchronized (engineLock) {
      return engine.queueSnapshots();
    }
  }

  private float[] figures(String path) {
    Map<String, QueueSnapshot> byPath = new HashMap<>();
    for (QueueSnapshot s : queueSnapshots()) {
      byPath.put(s.path(), s);
    }
    QueueSnapshot s = byPath.get(path);
    QueueSnapshot parent = byPath.get(path.contains(".") ? path.substring(0, path.lastIndexOf('.')) : path);
    QueueSnapshot root = byPath.get(QueueTree.ROOT);
    if (s == null || root == null) {
      return new float[] {0, 0, 0};
    }
    ResourceVector cluster = root.guarantee();
    double parentGuarantee = Math.max(1e-9, parent.guarantee().dominantShare(cluster));
    double parentMax = Math.max(1e-9, parent.maximum().dominantShare(cluster));
    double guarantee = s.guarantee().dominantShare(cluster);
    return new float[] {
        (float) (guarantee / parentGuarantee),
        (float) (guarantee > 0 ? s.usage().dominantShare(cluster) / guarantee : 0),
        (float) (s.maximum().dominantShare(cluster) / parentMax)};
  }

  private SpindleQueue queue(String nameOrPath) {
    Map<String, SpindleQueue> q = queues;
    SpindleQueue byPath = q.get(nameOrPath);
    if (byPath != null) {
      return byPath;
    }
    for (SpindleQueue candidate : q.values()) {
      if (candidate.getQueueName().equals(nameOrPath)) {
        return candidate;
      }
    }
    return null;
  }

  @Override
  public QueueInfo getQueueInfo(String queueName, boolean includeChildQueues, boolean recursive)
      throws IOException {
    SpindleQueue q = queue(queueName);
    if (q == null) {
      throw new IOException("Unknown queue: " + queueName);
    }
    return q.getQueueInfo(includeChildQueues, recursive);
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo() {
    UserGroupInformation user;
    try {
      user = UserGroupInformation.getCurrentUser();
    } catch (IOException e) {
      return List.of();
    }
    return queues.get(QueueTree.ROOT).getQueueUserAclInfo(user);
  }

  @Override
  public boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    SpindleQueue q = queue(queueName);
    return q != null && q.hasAccess(acl, callerUGI);
  }

  @Override
  public List<ApplicationAttemptId> getAppsInQueue(String queueName) {
    SpindleQueue q = queue(queueName);
    if (q == null) {
      return null;
    }
    List<ApplicationAttemptId> out = new ArrayList<>();
    for (SchedulerApplication<SpindleAppAttempt> app : applications.values()) {
      String path = ((SpindleQueue) app.getQueue()).path();
      if ((path.equals(q.path()) || path.startsWith(q.path() + ".")) && app.getCurrentAppAttempt() != null) {
        out.add(app.getCurrentAppAttempt().getApplicationAttemptId());
      }
    }
    return out;
  }

  @Override
  public QueueMetrics getRootQueueMetrics() {
    return queues.get(QueueTree.ROOT).getMetrics();
  }

  @Override
  public ResourceCalculator getResourceCalculator() {
    return calculator;
  }

  @Override
  public EnumSet<SchedulerResourceTypes> getSchedulingResourceTypes() {
    return EnumSet.of(SchedulerResourceTypes.MEMORY, SchedulerResourceTypes.CPU);
  }

  @Override
  public int getNumClusterNodes() {
    return nodeTracker.nodeCount();
  }

  @Override
  public void setRMContext(RMContext rmContext) {
    this.rmContext = rmContext;
  }

  @Override
  public void recover(RMState state) {
    // Nothing to read here: applications come back through APP_ADDED / APP_ATTEMPT_ADDED with their recovering
    // flags, and running containers through the container reports of re-registering nodes
    // (recoverContainersOnNode).
  }

  @Override
  public RMContainer getRMContainer(ContainerId containerId) {
    SpindleAppAttempt attempt = getCurrentAttemptForContainer(containerId);
    return attempt == null ? null : attempt.getRMContainer(containerId);
  }

  @Override
  public void setConf(Configuration conf) {
    this.conf = conf;
  }

  @Override
  public Configuration getConf() {
    return conf;
  }
}
