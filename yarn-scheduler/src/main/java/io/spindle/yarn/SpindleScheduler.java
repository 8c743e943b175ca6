package io.spindle.yarn;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import io.spindle.core.engine.CycleClock;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.EngineStats;
import io.spindle.core.engine.EngineStatus;
import io.spindle.core.engine.QueueSnapshot;
import io.spindle.core.engine.RestoreReport;
import io.spindle.core.model.AppId;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueTree;
import io.spindle.core.status.Explanation;
import io.spindle.core.status.WhyExplainer;
import io.spindle.ha.ZkSettings;
import io.spindle.journal.DecisionJournal;
import io.spindle.journal.JournalSettings;
import io.spindle.metrics.MetricsExposure;
import io.spindle.metrics.SpindleMetrics;
import io.spindle.web.SpindleWeb;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.thirdparty.com.google.common.util.concurrent.SettableFuture;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.RMFatalEvent;
import org.apache.hadoop.yarn.server.resourcemanager.RMFatalEventType;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore.RMState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerExpiredSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeLabelsUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ReleaseContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spindle as a YARN ResourceManager scheduler ({@code yarn.resourcemanager.scheduler.class}): YARN's scheduler facade,
 * the translation of its events and asks into core {@link EngineEvent}s, and the scheduling loop. What it delegates:
 * the configuration ({@link SchedulerSettings}), one cycle ({@link SchedulingCycle}), the queues and ACLs ({@link QueueRegistry}), carrying out decisions
 * ({@link DecisionApplier}), leadership and take-over ({@link SchedulerHa}), the status API ({@link SchedulerWebView}).
 *
 * <p>Threads: the RM's dispatcher calls {@link #handle}, IPC handlers call {@link #allocate}; both only record events
 * in an inbox and return. A scheduling thread drains the inbox, runs one engine cycle and hands out the containers it
 * decided, waking on every node heartbeat and at least every cycle interval. So {@code allocate()} never waits for a
 * cycle: it returns what earlier cycles decided. Lock order: {@link SchedulerLocks}.
 */
public class SpindleScheduler extends AbstractYarnScheduler<SpindleAppAttempt, FiCaSchedulerNode>
    implements Configurable {

  private static final Logger LOG = LoggerFactory.getLogger(SpindleScheduler.class);

  private Configuration conf;
  private final ResourceCalculator calculator = new DominantResourceCalculator();
  private final GpuModelCatalog catalog = GpuModelCatalog.builtIn();
  private final SchedulerLocks locks = new SchedulerLocks();
  private final ConcurrentLinkedQueue<EngineEvent> inbox = new ConcurrentLinkedQueue<>();
  private final Semaphore wake = new Semaphore(0);
  private final ContainerBook book = new ContainerBook();
  private final Map<ApplicationId, AppAsks> asks = new ConcurrentHashMap<>();
  private final PreemptionNotices preemptions = new PreemptionNotices();
  private final CheckpointDelivery checkpoints = new CheckpointDelivery(preemptions,
      CheckpointDelivery.containers(allocation -> book.container(allocation).orElse(null),
          app -> YarnSchedulerCalls.amRmTokenPassword(rmContext, app)),
      inbox::add, System::currentTimeMillis);
  private final SpindleMetrics metrics = new SpindleMetrics();
  private MetricsExposure metricsExposure;
  private SpindleWeb web;
  private final QueueRegistry queues = new QueueRegistry(this::status, this::getMaxClusterLevelAppPriority);
  private final AppActivation parallel = new AppActivation(leaf -> queues.amLimit(leaf, getClusterResource()),
      this::getClusterResource);
  private EngineRunner engine;
  private SchedulerSettings settings;
  private YarnResources translate;
  private NodeInventory inventory;
  private final NodeEvents.Reports migReports = new NodeEvents.Reports();
  private NodeEvents nodes;
  private DecisionApplier applier;
  private AppLifecycle apps;
  private QueueLoader loader;
  private ContainerEvents containers;
  private AskForwarder forwarder;
  private YarnSchedulerCalls calls;
  /** The ZooKeeper session and its channels; {@code null} without ZooKeeper. */
  private SchedulerZooKeeper zooKeeper;
  /** Leadership among the schedulers sharing the ZooKeeper root; {@code null} without ZooKeeper (always leads). */
  private SchedulerHa ha;
  private SchedulingCycle cycle;
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
    this.settings = SchedulerSettings.read(conf, rmContext);
    Configuration schedulerConf = settings.merged();
    this.translate = YarnResources.from(catalog, settings);
    Map<String, String> entries = SchedulerSettings.entries(schedulerConf);
    zooKeeper = SchedulerZooKeeper.connect(schedulerConf, settings, wake::release, this::mustStop, report -> {
      migReports.reported(report);
      wake.release();
    }, checkpoints).orElse(null);
    if (zooKeeper != null) {
      ha = zooKeeper.ha();
    } else {
      // Without ZooKeeper no node can be asked to re-partition, and a GPU planned for it would be lost.
      entries.put(EngineSettings.MAX_MIG_RECONFIGURATIONS_PER_CYCLE, "0");
      LOG.warn("No ZooKeeper configured ({} or hadoop.zk.address): nodes are modelled from the resources they "
          + "advertise and MIG layouts are never changed", ZkSettings.ZK_ADDRESS);
    }
    this.calls = new YarnSchedulerCalls(this, asks, () -> rmContext);
    checkpoints.measure(metrics);
    if (settings.signalOnPreemption()) {
      checkpoints.signalOnNotice(calls::signalGracefulShutdown);
    }
    this.inventory = new NodeInventory(catalog, translate, zooKeeper == null ? null : zooKeeper.migExchange(),
        settings.migAnswerTimeoutMillis(), System::currentTimeMillis);
    this.nodes = new NodeEvents(migReports, inventory, nodeTracker, settings, calls, locks, inbox::add,
        () -> rmContext == null ? null : rmContext.getNodeLabelManager());
    this.applier = new DecisionApplier(calls, book, locks, checkpoints, inventory, inbox::add);
    this.apps = new AppLifecycle(applications, asks, queues, () -> rmContext,
        () -> YarnConfiguration.isAclEnabled(this.conf), calls, locks, app -> {
          if (ha != null) {
            ha.forget(app);
          }
        }, checkpoints, inbox::add, parallel, this::startHeld, leaf -> loader.create(leaf));
    this.containers = new ContainerEvents(calls, book, preemptions, locks, translate, metrics, inbox::add);
    this.forwarder = new AskForwarder(translate, applier, parallel, inbox::add);
    QueueLoader.Loaded initial = QueueLoader.read(schedulerConf, List.of(), queues);
    List<String> levels = settings.topologyLevels();
    CycleClock clock = new CycleClock(System::currentTimeMillis);
    this.engine = new EngineRunner(new Engine(catalog, initial.tree(), Topology.open(levels.toArray(String[]::new)), clock,
        EngineSettings.fromConfiguration(entries)), DecisionJournal.open(JournalSettings.from(entries),
        DecisionJournal.header(settings.instanceId(), clock.nowMillis(), levels, entries)), clock, metrics,
        System::currentTimeMillis);
    this.cycle = new SchedulingCycle(() -> rmContext == null || !rmContext.isWorkPreservingRecoveryEnabled()
        || rmContext.isSchedulerReadyForAllocatingContainers(), ha, applications::containsKey, checkpoints, locks,
        inbox, nodes, engine, applier, book, preemptions, metrics, this::queueOf);
    this.loader = new QueueLoader(queues, engine, parallel, this::startHeld, () -> rmContext);
    loader.installInYarn(initial);
    super.serviceInit(conf);
    LOG.info("Spindle scheduler initialised: {} queues, topology levels {}, cycle every {} ms", initial.tree().size(),
        levels, settings.cycleIntervalMs());
  }

  @Override
  public void serviceStart() throws Exception {
    running = true;
    Configuration c = settings.merged();
    metricsExposure = MetricsExposure.start(metrics, c.getBoolean(MetricsExposure.JMX_ENABLED, true));
    web = SpindleWeb.start(c, MetricsExposure.PATH, metricsExposure.prometheus(), new SchedulerWebView(this,
        settings, ha, engine, book, queues));
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
    for (AutoCloseable c : new AutoCloseable[] {engine, web, metricsExposure, zooKeeper}) {
      if (c != null) {
        c.close();
      }
    }
    super.serviceStop();
  }

  @Override
  public void reinitialize(Configuration newConf, RMContext context) throws IOException {
    Configuration schedulerConf = SchedulerSettings.merge(newConf, rmContext);
    QueueTree next;
    try {
      next = loader.reload(schedulerConf);
    } catch (IllegalArgumentException e) {
      throw new IOException("Spindle refused the new queue configuration, the previous one stays in force: "
          + e.getMessage(), e);
    }
    // Not AbstractYarnScheduler.reinitialize: it would (re)start YARN's scheduling monitors (SchedulerSettings).
    SchedulerSettings.warnOfMonitors(newConf);
    LOG.info("Spindle queue configuration reloaded: {} queues", next.size());
  }

  // ---------------------------------------------------------------- events

  @Override
  public void handle(SchedulerEvent event) {
    switch (event.getType()) {
      case NODE_ADDED -> {
        NodeAddedSchedulerEvent e = (NodeAddedSchedulerEvent) event;
        nodes.added(e.getAddedRMNode());
        recoverContainersOnNode(e.getContainerReports(), e.getAddedRMNode());
        parallel.clusterChanged().forEach(this::startHeld);
      }
      case NODE_REMOVED -> {
        nodes.removed(((NodeRemovedSchedulerEvent) event).getRemovedRMNode());
        parallel.clusterChanged().forEach(this::startHeld);
      }
      case NODE_RESOURCE_UPDATE -> {
        NodeResourceUpdateSchedulerEvent e = (NodeResourceUpdateSchedulerEvent) event;
        updateNodeResource(e.getRMNode(), e.getResourceOption());
        nodes.resized(e.getRMNode().getNodeID(), e.getResourceOption().getResource());
        parallel.clusterChanged().forEach(this::startHeld);
      }
      case NODE_LABELS_UPDATE -> nodes.relabelled(((NodeLabelsUpdateSchedulerEvent) event).getUpdatedNodeToLabels());
      case NODE_UPDATE -> {
        nodes.heartbeat(((NodeUpdateSchedulerEvent) event).getRMNode());
        nodeUpdate(((NodeUpdateSchedulerEvent) event).getRMNode());
        wake.release();
      }
      case APP_ADDED, APP_REMOVED, APP_ATTEMPT_ADDED, APP_ATTEMPT_REMOVED -> apps.handle(event);
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
      // Spindle places by GPU inventory, topology and partition (node label), not by node attribute.
      case NODE_ATTRIBUTES_UPDATE -> LOG.debug("Spindle ignores {}", event.getType());
      // Sent by CapacityScheduler's preemption monitor and for its reserved containers and dynamic queues; Spindle
      // neither runs that monitor nor reserves YARN containers, and creates queues itself (QueueLoader).
      case KILL_RESERVED_CONTAINER, MARK_CONTAINER_FOR_PREEMPTION, MARK_CONTAINER_FOR_KILLABLE,
          MARK_CONTAINER_FOR_NONKILLABLE, MANAGE_QUEUE, AUTO_QUEUE_DELETION ->
          LOG.warn("Spindle does not act on {}: it comes from a CapacityScheduler component", event.getType());
      default -> LOG.debug("Spindle does not act on scheduler event {}", event.getType());
    }
  }

  /** Like YARN's, without the node-label manager: {@link NodeEvents#resized} tells it, once the node is Spindle's. */
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
  FiCaSchedulerNode trackedNode(NodeId id) {
    readLock.lock();
    try {
      return (FiCaSchedulerNode) getNode(id);
    } finally {
      readLock.unlock();
    }
  }

  @Override
  protected void completedContainerInternal(RMContainer rmContainer, ContainerStatus status,
      RMContainerEventType event) {
    containers.completed(rmContainer, status, event);
    wake.release();
  }

  /** After YARN's own recovery, each recovered container is told to the engine (work-preserving recovery). */
  @Override
  public void recoverContainersOnNode(List<NMContainerStatus> reports, RMNode node) {
    synchronized (locks.queueMetrics) {
      super.recoverContainersOnNode(reports, node);
    }
    if (reports != null) {
      containers.recovered(reports, node);
    }
  }

  @Override
  public void killContainer(RMContainer container) {
    completedContainer(container, SchedulerUtils.createKilledContainerStatus(container.getContainerId(),
        "Killed by the ResourceManager"), RMContainerEventType.KILL);
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

  /** An application held back by {@code max-parallel-apps} or the AM limit may run now (see {@link AppActivation}). */
  private void startHeld(ApplicationId app) {
    forwarder.forwardHeld(app, calls);
    wake.release();
  }

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
        synchronized (locks.queueMetrics) {
          attempt.updateResourceRequests(ask);
        }
      }
      if (appAsks != null) {
        forwarder.forward(attemptId.getApplicationId(), attempt, appAsks);
        if (ha != null) {
          ha.heardFrom(attemptId.getApplicationId());
        }
      }
      Resource allocated;
      synchronized (locks.queueMetrics) {
        allocated = getRootQueueMetrics().getAllocatedResources();
      }
      attempt.setHeadroom(org.apache.hadoop.yarn.util.resource.Resources.componentwiseMax(
          org.apache.hadoop.yarn.util.resource.Resources.none(),
          org.apache.hadoop.yarn.util.resource.Resources.subtract(getClusterResource(), allocated)));
      return new Allocation(attempt.pullNewlyAllocatedContainers(), attempt.getHeadroom(),
          preemptions.contract(attemptId.getApplicationId()), null, null, attempt.pullUpdatedNMTokens());
    }
  }

  // ---------------------------------------------------------------- scheduling thread

  private void schedulingLoop() {
    while (running) {
      try {
        wake.tryAcquire(settings.cycleIntervalMs(), TimeUnit.MILLISECONDS);
        wake.drainPermits();
        runCycle();
        loader.expireIdle(applications.values(), System.currentTimeMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        LOG.error("Spindle scheduling cycle failed; the next cycle starts afresh", e);
      }
    }
  }

  /** Runs one scheduling cycle now (SchedulingCycle). Visible for tests that drive cycles. */
  public void runCycle() {
    cycle.run();
  }

  @Override
  public Priority checkAndGetApplicationPriority(Priority requested, UserGroupInformation user, String queue,
      ApplicationId appId) throws YarnException {
    return queues.priorities().check(requested, user, queue, appId);
  }

  @Override
  public Priority updateApplicationPriority(Priority requested, ApplicationId appId, SettableFuture<Object> future,
      UserGroupInformation user) throws YarnException {
    return apps.updatePriority(requested, appId, future, user);
  }

  @Override
  public long checkAndGetApplicationLifetime(String queue, long requested, RMAppImpl app) {
    return queues.lifetime(queue, requested);
  }

  @Override
  public long getMaximumApplicationLifetime(String queue) {
    return queues.maximumLifetime(queue);
  }

  /** The leaf queue path of an application Spindle knows, for per-queue metrics. */
  private Optional<String> queueOf(AppId appId) {
    SchedulerApplication<SpindleAppAttempt> app = applications.get(YarnIds.application(appId));
    return app == null ? Optional.empty() : Optional.of(((SpindleQueue) app.getQueue()).path());
  }

  // ---------------------------------------------------------------- queries

  /** What this scheduler took over from the previous leader's saved state; empty until it has (or if none). */
  public Optional<RestoreReport> takeOverReport() {
    return ha == null ? Optional.empty() : ha.takeOverReport();
  }

  /**
   * Whether this scheduler may schedule now: it holds the ZooKeeper leadership (always, without HA). False while its
   * ZooKeeper session is suspended or lost, and for good once it was fenced.
   */
  public boolean leads() {
    return ha == null || ha.term() != null;
  }

  /** Reloads capacity-scheduler.xml as {@code yarn rmadmin -refreshQueues} does; says what it loaded. */
  String refreshQueues() throws IOException {
    reinitialize(getConfig(), rmContext);
    return "queue configuration reloaded: " + queues.size() + " queues";
  }

  /**
   * Takes new work off a registered node ({@code reason} non-null) or gives it back ({@code reason == null}), from the
   * next cycle on; says what it did. Refused, with nothing changed, for a node the ResourceManager does not know.
   */
  String cordon(String node, String reason) {
    org.apache.hadoop.yarn.api.records.NodeId id = registeredNode(node);
    inbox.add(new io.spindle.core.engine.EngineEvent.NodeCordonChanged(YarnIds.node(id), reason));
    wake.release();
    return reason == null ? "node " + node + " takes new work again"
        : "node " + node + " takes no new work (" + reason + "); what runs there runs on";
  }

  /**
   * Takes one GPU of a registered node out of service ({@code reason} non-null), stopping what runs on it, or puts it
   * back ({@code reason == null}), from the next cycle on. Refused, with nothing changed, for an unknown node or GPU.
   */
  String cordonGpu(String node, int gpu, String reason) {
    org.apache.hadoop.yarn.api.records.NodeId id = registeredNode(node);
    if (!inventory.hasGpu(id, gpu)) {
      throw new IllegalArgumentException("node " + node + " has no GPU " + gpu + " that Spindle schedules");
    }
    inbox.add(new io.spindle.core.engine.EngineEvent.GpuCordonChanged(YarnIds.node(id), gpu, reason));
    wake.release();
    return reason == null ? "GPU " + gpu + " of node " + node + " is back in service"
        : "GPU " + gpu + " of node " + node + " is out of service (" + reason + "); what ran on it is stopped";
  }

  private org.apache.hadoop.yarn.api.records.NodeId registeredNode(String node) {
    org.apache.hadoop.yarn.api.records.NodeId id;
    try {
      id = org.apache.hadoop.yarn.api.records.NodeId.fromString(node);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("node '" + node + "' is not a NodeManager address (host:port)");
    }
    if (getSchedulerNode(id) == null) {
      throw new IllegalArgumentException("node " + node + " is not registered with this ResourceManager");
    }
    return id;
  }

  /** Spindle's metrics, as JMX and the Prometheus endpoint show them. */
  public SpindleMetrics metrics() {
    return metrics;
  }

  /** The engine as of the last published cycle, as the status API shows it (harnesses in the RM's JVM audit it). */
  public EngineStatus status() {
    return engine == null ? EngineStatus.EMPTY : engine.published();
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
    AppId id = YarnIds.app(appId);
    AppAsks appAsks = asks.get(appId);
    List<String> notes = Optional.ofNullable(appAsks).flatMap(AppAsks::heldBack).map(List::of).orElse(List.of());
    List<String> events = appAsks == null ? List.of() : appAsks.restarts();
    return WhyExplainer.explain(id, status(), engine.history(id), notes, events);
  }

  /** The live engine's figures (harnesses and tests; the status API reads {@link #status()}). */
  public EngineStats engineStats() {
    return engine.liveStats();
  }

  /** The live engine's view of every queue, parents first (harnesses and tests). */
  public List<QueueSnapshot> queueSnapshots() {
    return engine.liveQueues();
  }

  @Override
  public QueueInfo getQueueInfo(String queueName, boolean includeChildQueues, boolean recursive)
      throws IOException {
    return queues.info(queueName, includeChildQueues, recursive);
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo() {
    try {
      return queues.aclInfo(UserGroupInformation.getCurrentUser());
    } catch (IOException e) {
      return List.of();
    }
  }

  @Override
  public boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    return queues.checkAccess(callerUGI, acl, queueName);
  }

  @Override
  public List<ApplicationAttemptId> getAppsInQueue(String queueName) {
    return queues.appsIn(queueName, applications.values());
  }

  @Override
  public QueueMetrics getRootQueueMetrics() {
    return queues.root().getMetrics();
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
