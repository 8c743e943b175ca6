package io.spindle.core.engine;

import io.spindle.core.model.AppId;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueConfigException;
import io.spindle.core.queue.QueueTree;
import io.spindle.core.reliability.FailureObservations;
import java.util.AbstractCollection;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongConsumer;

/**
 * What the engine knows between cycles: the queues, the applications with their requests, the allocations (by id and
 * by node) and the count of durable changes. Charging and releasing an allocation, and adding and dropping a request,
 * are written here once, so usage and pending demand are kept the same way whoever changes them. The engine's passes
 * (admission, placement, preemption, failover, views) take it as a parameter. Mutable; single-threaded, like the
 * engine.
 */
final class EngineState {

  private final ClusterState cluster;
  private QueueTree tree;
  private Map<String, QueueState> queues;
  private QueueState root;
  private final Map<AppId, AppState> apps = new LinkedHashMap<>();
  /** Applications rejected at submission: told why once, their further events change nothing. */
  private final Set<AppId> rejectedApps = new LinkedHashSet<>();
  private final Map<Long, AllocationList.Entry> allocations = new HashMap<>();
  private final Map<NodeId, AllocationList> allocationsByNode = new HashMap<>();
  /** {@link #allocations}' allocations, in its order. */
  private final Collection<Allocation> allocationView = new AbstractCollection<>() {
    @Override
    public Iterator<Allocation> iterator() {
      Iterator<AllocationList.Entry> entries = allocations.values().iterator();
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return entries.hasNext();
        }

        @Override
        public Allocation next() {
          return entries.next().allocation;
        }
      };
    }

    @Override
    public int size() {
      return allocations.size();
    }
  };
  /** Told of every release, after the state has forgotten the allocation (gang runs, preemption units). */
  private final List<LongConsumer> releaseListeners = new ArrayList<>();
  private long nextAllocationId = 1;
  private long nextAppSeq;
  /** Counts changes to what the engine exports for a failover (reservations, backoffs, declared ends). */
  private long durableChanges;
  private long drainChanges;

  private final Clock clock;
  private final RuntimeEstimates estimates = new RuntimeEstimates();
  private final QueueRuntimes queueRuntimes = new QueueRuntimes();
  private final FailureObservations failures = new FailureObservations();

  /**
   * Whether what each application has run is kept (learned from, saved for a failover) in every leaf, not only in
   * ranked ones: reservations plan drains with learned run times.
   */
  private boolean historyEverywhere;

  EngineState(ClusterState cluster, QueueTree tree, Clock clock) {
    this.cluster = cluster;
    this.clock = clock;
    install(tree);
  }

  /** The engine clock's now: attained service is read at it. */
  long nowMillis() {
    return clock.nowMillis();
  }

  /** Run times learned from finished applications. */
  RuntimeEstimates estimates() {
    return estimates;
  }

  /** Run times learned per queue from every finished application, for expected start times only. */
  QueueRuntimes queueRuntimes() {
    return queueRuntimes;
  }

  /** The cluster's GPU exposure and GPU failures, behind the checkpoint interval advised to applications. */
  FailureObservations failures() {
    return failures;
  }

  /**
   * Exposure counts the GPUs of every registered node from now on: called after a cycle's events, where nodes come
   * and go.
   */
  void countGpusInService() {
    failures.capacity(clock.nowMillis(), (int) (cluster.capacity().gpuUnits() / ResourceVector.GPU_UNITS));
  }

  ClusterState cluster() {
    return cluster;
  }

  // ---------------------------------------------------------------- queues

  QueueTree tree() {
    return tree;
  }

  /** Every queue, parents before children. */
  Collection<QueueState> queues() {
    return queues.values();
  }

  QueueState queue(String path) {
    return queues.get(path);
  }

  QueueState root() {
    return root;
  }

  /**
   * Replaces the queue configuration. Refused, with the previous configuration kept, if an application still
   * runs or waits in a leaf the new tree lacks.
   */
  void reconfigure(QueueTree newTree) {
    for (AppState app : apps.values()) {
      Optional<QueueConfig> leaf = newTree.leaf(app.leaf.path());
      if (leaf.isEmpty()) {
        throw new QueueConfigException(app.leaf.path(),
            "queue has applications (" + app.id + ") and is missing or no longer a leaf in the new configuration");
      }
    }
    install(newTree);
  }

  private void install(QueueTree newTree) {
    Map<String, QueueState> states = new LinkedHashMap<>();
    for (QueueConfig q : newTree.all()) {
      QueueState parent = q.parentPath() == null ? null : states.get(q.parentPath());
      QueueState state = new QueueState(q, parent);
      if (parent != null) {
        parent.children.add(state);
      }
      states.put(q.path(), state);
    }
    this.tree = newTree;
    this.queues = states;
    this.root = states.get(QueueTree.ROOT);
    for (AppState app : apps.values()) {
      app.leaf = states.get(app.leaf.path());
      for (long id : app.allocations) {
        Allocation a = allocation(id);
        chargeQueues(app, a.shape().partition(), a.placement().charge());
      }
      for (DemandState d : app.demands.values()) {
        app.leaf.addPending(d.shape.partition(), d.pending());
      }
      if (app.hasPending()) {
        app.leaf.waitingApps.add(app);
      }
    }
  }

  /** Each leaf's usage plus pending demand in the default partition: what fair share is computed from. */
  Map<String, ResourceVector> leafDemands() {
    return leafDemands(Node.DEFAULT_PARTITION);
  }

  /** Each leaf's usage plus pending demand in {@code partition}. */
  Map<String, ResourceVector> leafDemands(String partition) {
    Map<String, ResourceVector> out = new HashMap<>();
    for (QueueState q : queues.values()) {
      if (q.isLeaf()) {
        out.put(q.path(), q.usage(partition).plus(q.pending(partition)));
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- applications

  AppState app(AppId appId) {
    return apps.get(appId);
  }

  boolean hasApp(AppId appId) {
    return apps.containsKey(appId);
  }

  /** In submission order. */
  Collection<AppState> apps() {
    return Collections.unmodifiableCollection(apps.values());
  }

  AppState addApp(AppId appId, QueueState leaf, String user, int priority, long submitMillis) {
    AppState app = new AppState(appId, leaf, user, priority, submitMillis, nextAppSeq++);
    apps.put(appId, app);
    return app;
  }

  void removeApp(AppId appId) {
    apps.remove(appId);
  }

  void rejected(AppId appId) {
    rejectedApps.add(appId);
  }

  boolean wasRejected(AppId appId) {
    return rejectedApps.contains(appId);
  }

  void forgetRejection(AppId appId) {
    rejectedApps.remove(appId);
  }

  // ---------------------------------------------------------------- requests

  /** Adds a request's outstanding containers to its application and to its leaf's pending demand. */
  void addDemand(DemandState d) {
    d.app.demands.put(d.key, d);
    long declared = d.app.declaredRuntimeMillis;
    d.app.declared(d.spec.maxRuntimeMillis());
    if (d.app.declaredRuntimeMillis != declared && keepsHistory(d.app)) {
      durableChanges++; // Kept for a failover (DurableState.AttainedState.declaredMillis).
    }
    d.app.leaf.addPending(d.shape.partition(), d.pending());
  }

  /** Drops a request and its pending demand (its reservation, if any, is the caller's to drop). */
  void removeDemand(DemandState d) {
    d.app.leaf.addPending(d.shape.partition(), d.pending().times(-1));
    d.app.demands.remove(d.key);
  }

  /** Files the application again among its leaf's waiting applications, if it still waits for anything. */
  void refile(AppState app) {
    // An application's place in the order changes only through Admission.reprioritize, which re-files it itself:
    // adding one already filed changes nothing, and one tree walk per request is saved against remove-then-add.
    if (app.hasPending()) {
      app.leaf.waitingApps.add(app);
    } else {
      app.leaf.waitingApps.remove(app);
    }
  }

  // ---------------------------------------------------------------- allocations

  long newAllocationId() {
    return nextAllocationId++;
  }

  Allocation allocation(long id) {
    AllocationList.Entry e = allocations.get(id);
    return e == null ? null : e.allocation;
  }

  /** What these allocations are charged now; ids already released count nothing. */
  ResourceVector chargeOf(Collection<Long> allocationIds) {
    ResourceVector sum = ResourceVector.ZERO;
    for (long id : allocationIds) {
      Allocation a = allocation(id);
      if (a != null) {
        sum = sum.plus(a.placement().charge());
      }
    }
    return sum;
  }

  boolean hasAllocation(long id) {
    return allocations.containsKey(id);
  }

  Collection<Allocation> allocations() {
    return allocationView;
  }

  int allocationCount() {
    return allocations.size();
  }

  /** The allocations on a node, in the order they were made there (a copy: callers release while they walk). */
  /** The nodes {@code allocationIds} run on, each once, in order; ids already released count nothing. */
  List<NodeId> nodesOf(Collection<Long> allocationIds) {
    LinkedHashSet<NodeId> nodes = new LinkedHashSet<>();
    for (long id : allocationIds) {
      Allocation a = allocation(id);
      if (a != null) {
        nodes.add(a.placement().nodeId());
      }
    }
    return List.copyOf(nodes);
  }

  List<Long> onNode(NodeId nodeId) {
    AllocationList on = allocationsByNode.get(nodeId);
    return on == null ? List.of() : on.ids();
  }

  void nodeLeft(NodeId nodeId) {
    allocationsByNode.remove(nodeId);
  }

  /** Changes an allocation's declared end (a restore); nothing else of it. */
  void replace(Allocation a) {
    allocations.get(a.id()).allocation = a;
    drainChanges++;
  }

  /** Commits {@code a} on its node and charges it to its application, its leaf (and parents) and its user. */
  void charge(AppState app, Allocation a) {
    cluster.commit(a.shape(), a.placement());
    AllocationList.Entry e = new AllocationList.Entry(a);
    allocations.put(a.id(), e);
    allocationsByNode.computeIfAbsent(a.placement().nodeId(), k -> AllocationList.ofNode()).add(e);
    app.allocations.add(e);
    addUsage(app, a.shape().partition(), a.placement().charge());
  }

  /**
   * Releases an allocation from its node and its application's charges, then tells the release listeners. Returns
   * it, or {@code null} if it was released already (its node left first): releases are idempotent.
   */
  Allocation release(long allocationId) {
    AllocationList.Entry e = allocations.remove(allocationId);
    if (e == null) {
      return null;
    }
    drainChanges++;
    Allocation a = e.allocation;
    if (a.endsAtMillis() != Long.MAX_VALUE) {
      durableChanges++;
    }
    cluster.release(a.shape(), a.placement());
    e.unlink();
    AppState app = apps.get(a.appId());
    if (app != null) {
      addUsage(app, a.shape().partition(), a.placement().charge().times(-1));
    }
    for (LongConsumer listener : releaseListeners) {
      listener.accept(allocationId);
    }
    return a;
  }

  /**
   * Counts what can make a node drain sooner than planned: an allocation released, or its declared end changed (a
   * restore). Reservations re-plan when it moved.
   */
  long drainChanges() {
    return drainChanges;
  }

  void onRelease(LongConsumer listener) {
    releaseListeners.add(listener);
  }

  /** Decayed usage of queues and users ({@code yarn.scheduler.spindle.usage.*}); keeps nothing while off. */
  private UsageHistory usageHistory = new UsageHistory(UsageSettings.OFF);

  void keepUsageHistory(UsageSettings settings) {
    usageHistory = new UsageHistory(settings);
  }

  UsageHistory usageHistory() {
    return usageHistory;
  }

  /** Keeps what every application has run, not only those of ranked leaves (see {@link #keepsHistory}). */
  void keepHistoryEverywhere() {
    historyEverywhere = true;
  }

  /**
   * Whether what {@code app} has run is tracked as part of the durable state and learned from when it ends: in ranked
   * leaves, whose order depends on it, and everywhere when reservations plan with learned run times. Elsewhere it
   * would make every start and end a change to save, for nothing.
   */
  boolean keepsHistory(AppState app) {
    return historyEverywhere || app.leaf.ranked();
  }

  /** Charges the application (all partitions together) and, in the request's partition, its queues and user. */
  private void addUsage(AppState app, String partition, ResourceVector delta) {
    app.usage = app.usage.plus(delta);
    app.attained.settle(clock.nowMillis(), app.usage);
    if (keepsHistory(app)) {
      durableChanges++; // What it has run is kept for a failover where the order depends on it.
    }
    chargeQueues(app, partition, delta);
  }

  private static void chargeQueues(AppState app, String partition, ResourceVector delta) {
    app.leaf.addUsage(partition, delta);
    app.leaf.userUsage(partition).merge(app.user, delta, ResourceVector::plus);
  }

  // ---------------------------------------------------------------- durable changes

  void durableChange() {
    durableChanges++;
  }

  long durableChanges() {
    return durableChanges;
  }
}
