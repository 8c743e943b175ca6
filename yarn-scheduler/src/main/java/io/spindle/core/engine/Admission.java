package io.spindle.core.engine;

import io.spindle.core.engine.EngineEvent.AppPriorityChanged;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.model.AppId;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuResourceNames;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Node;
import io.spindle.core.model.RequestRef;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.GangPlacer;
import io.spindle.core.placement.Placement;
import io.spindle.core.queue.FairShareCalculator;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueLabels;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What enters the engine and what leaves it: applications submitted (or rejected for their queue) and finished,
 * requests asked, changed and withdrawn (or rejected at once when they could never be served), containers recovered
 * after a restart. A request is judged against the registered nodes only once the registration window has passed.
 */
final class Admission {

  private final EngineState state;
  private final ClusterState cluster;
  private final GpuModelCatalog catalog;
  private final ShapeCharges charges;
  private final GangPlacer gangPlacer;
  private final Clock clock;
  private final EngineSettings settings;
  private final MigRepartitioning migRepartitioning;
  private final Reservations reservations;
  private final EnginePreemption preemption;
  private final GangRuns gangRuns;
  /** Queue limits resolved against the current cluster; dropped when nodes or queues change. */
  /** Queues' limits by partition, as of the nodes registered now; {@code null} once they changed. */
  private Map<String, Map<String, FairShareCalculator.Limits>> limits;
  /**
   * Until then, requests are judged impossible only for what they are (unknown profile, negative count), not against
   * the nodes registered so far: after a ResourceManager starts, its nodes register over seconds, and a gang that
   * needs all of them must not be rejected because the first few arrived. {@code Long.MIN_VALUE}: not started yet.
   */
  private long capacityJudgedFromMillis = Long.MIN_VALUE;
  private boolean capacityJudged;

  Admission(EngineState state, GpuModelCatalog catalog, ShapeCharges charges, GangPlacer gangPlacer, Clock clock,
      EngineSettings settings, MigRepartitioning migRepartitioning, Reservations reservations,
      EnginePreemption preemption, GangRuns gangRuns) {
    this.state = state;
    this.gangRuns = gangRuns;
    this.cluster = state.cluster();
    this.catalog = catalog;
    this.charges = charges;
    this.gangPlacer = gangPlacer;
    this.clock = clock;
    this.settings = settings;
    this.migRepartitioning = migRepartitioning;
    this.reservations = reservations;
    this.preemption = preemption;
  }

  /** Nodes or queues changed: queue limits are resolved again when next needed. */
  void limitsChanged() {
    limits = null;
  }

  /** Whether requests are judged against the registered nodes yet. */
  boolean capacityJudged() {
    return capacityJudged;
  }

  /** When requests start being judged against the registered nodes. */
  long capacityJudgedFromMillis() {
    return capacityJudgedFromMillis;
  }

  void submit(AppSubmitted e, List<Decision> decisions) {
    if (state.hasApp(e.appId())) {
      throw new InvalidInputException("appId", e.appId(), "application already submitted");
    }
    QueueTree tree = state.tree();
    Optional<QueueConfig> leaf = tree.leaf(e.queue());
    if (leaf.isEmpty()) {
      state.rejected(e.appId());
      decisions.add(new Decision.Reject(e.appId(), null, tree.whyNotALeaf(e.queue()).orElseThrow()));
      return;
    }
    String user = e.user() == null || e.user().isBlank() ? "unknown" : e.user();
    AppState app = state.addApp(e.appId(), state.queue(leaf.get().path()), user, e.priority(), clock.nowMillis());
    app.kind = e.kind();
    if (state.keepsHistory(app)) {
      state.durableChange(); // When it was submitted is kept: its starvation bound counts from it.
    }
  }

  void reprioritize(AppPriorityChanged e) {
    AppState app = state.app(e.appId());
    if (app == null || app.priority == e.priority()) {
      return;
    }
    // The waiting set is sorted by priority: take the application out before its key changes.
    boolean waiting = app.leaf.waitingApps.remove(app);
    app.priority = e.priority();
    if (waiting) {
      app.leaf.waitingApps.add(app);
    }
  }

  void finish(AppId appId) {
    state.forgetRejection(appId);
    AppState app = state.app(appId);
    if (app == null) {
      return;
    }
    for (long id : app.allocations.ids()) {
      state.release(id);
    }
    if (app.attained.whole()) { // Learned in every leaf for status views' expected starts; decisions never read it.
      state.queueRuntimes().finished(app.leaf.path(), app.kind, app.attained.ranMillis(clock.nowMillis()));
    }
    if (state.keepsHistory(app) && app.attained.whole()) {
      // Only from a run whose whole length is known, also after a failover (DurableState.attained).
      state.estimates().finished(app, app.attained.ranMillis(clock.nowMillis()));
    }
    state.removeApp(appId);
    state.durableChange();
    for (DemandState d : app.demands.values()) {
      app.leaf.addPending(d.shape.partition(), d.pending().times(-1));
      reservations.drop(d);
    }
    app.demands.clear();
    app.leaf.waitingApps.remove(app);
    preemption.appFinished(appId);
  }

  void demand(Demand e, List<Decision> decisions) {
    if (state.wasRejected(e.appId())) {
      return; // Already told why; more requests from the same application change nothing.
    }
    AppState app = state.app(e.appId());
    if (app == null) {
      throw new InvalidInputException("appId", e.appId(), "demand for an application that was never submitted");
    }
    DemandState old = app.demands.get(e.requestKey());
    if (old == null && e.spec().elastic() && growing(app, e)) {
      return;
    }
    Optional<Refusal> refused = whyImpossible(app, e);
    if (refused.isEmpty() && capacityJudged) {
      refused = whyNeverFits(app, e.shape(), e.spec().elasticity().startingMembers(e.count()), e.spec());
    }
    if (refused.isEmpty()) {
      // Only what is new counts: drivers re-send a request's whole outstanding count.
      int before = old != null && old.shape.equals(e.shape()) ? old.outstanding : 0;
      migRepartitioning.asked(e.shape(), e.count() - before);
      cluster.asked(e.shape(), e.count() - before);
    }
    if (old != null) {
      forget(old);
    }
    if (refused.isPresent()) {
      decisions.add(new Decision.Reject(app.id, e.requestKey(), refused.get().describe()));
    } else if (e.count() > 0) {
      state.addDemand(DemandState.asked(app, e.requestKey(), e.shape(), charges.unitCharge(e.shape()), e.count(),
          e.spec(), charges.requiredDepth(e.spec())));
    }
    state.refile(app);
  }

  /**
   * An elastic gang that runs asks for more (or fewer) members: what it asks beyond those running is what it grows
   * by, in the same shape; nothing waits. Returns whether the request was such an ask.
   */
  private boolean growing(AppState app, Demand e) {
    GangRun core = gangRuns.elasticCore(new RequestRef(app.id, e.requestKey()));
    if (core == null || !core.shape.equals(e.shape())) {
      return false;
    }
    core.wanted = Math.max(0, e.count());
    return true;
  }

  private void forget(DemandState d) {
    state.removeDemand(d);
    reservations.drop(d);
    if (d.noReservationBeforeMillis != 0) {
      state.durableChange(); // Its backoff goes with it.
    }
  }

  /**
   * Starts judging requests against the registered nodes once the registration window has passed since the first
   * cycle, and rejects the requests that arrived meanwhile and still could never fit.
   */
  void settleRegistration(List<Decision> decisions) {
    if (capacityJudged) {
      return;
    }
    long now = clock.nowMillis();
    if (capacityJudgedFromMillis == Long.MIN_VALUE) {
      capacityJudgedFromMillis = now + settings.registrationSettleMillis();
    }
    if (now < capacityJudgedFromMillis) {
      return;
    }
    capacityJudged = true;
    for (AppState app : state.apps()) {
      for (DemandState d : List.copyOf(app.demands.values())) {
        Optional<Refusal> never = whyNeverFits(app, d.shape, d.outstanding, d.spec);
        if (never.isPresent()) {
          forget(d);
          decisions.add(new Decision.Reject(app.id, d.key, never.get().describe()));
        }
      }
      state.refile(app);
    }
  }

  /** Why a request can never be served as asked whatever the cluster, if it cannot. */
  private Optional<Refusal> whyImpossible(AppState app, Demand e) {
    if (e.count() < 0) {
      return impossible("count must not be negative; was " + e.count());
    }
    Resources shape = e.shape();
    if (e.count() > 0 && shape.memoryMb() == 0 && shape.vcores() == 0 && !shape.wantsGpu()) {
      // Such a container fits on every node without end: placing as many as asked would never finish a cycle. (A
      // count of 0 withdraws the request, and drivers withdraw with an empty shape.)
      return impossible("a container must ask for some memory, vcores or GPUs; " + shape
          + " asks for nothing");
    }
    for (String model : shape.models().names()) {
      if (catalog.find(model).isEmpty()) {
        return impossible("unknown GPU model '" + model + "'" + (shape.models().names().size() > 1
            ? " in the model set " + shape.models() : "") + "; known models: "
            + catalog.models().stream().map(GpuModel::name).toList());
      }
    }
    if (shape.wantsShare()) {
      long largest = 0;
      for (GpuModel m : catalog.models()) {
        if (shape.models().accepts(m.name())) {
          largest = Math.max(largest, m.memoryMb());
        }
      }
      if (shape.gpuMemoryMb() > largest) {
        return impossible(GpuResourceNames.GPU_MEMORY_MB + "=" + shape.gpuMemoryMb() + " is more memory than any GPU"
            + (shape.models().isAny() ? "" : " of " + shape.models()) + " has (the largest has " + largest + " MB)");
      }
    }
    if (shape.wantsMig()) {
      List<GpuModel> offering = catalog.modelsOffering(shape.migProfile());
      if (offering.isEmpty()) {
        return impossible("unknown MIG profile '" + shape.migProfile() + "'; no GPU model offers it (e.g. "
            + catalog.models().get(0).profiles().stream().map(MigProfile::name).toList() + " on "
            + catalog.models().get(0).name() + ")");
      }
      if (!shape.models().isAny() && offering.stream().noneMatch(m -> shape.models().accepts(m.name()))) {
        return impossible("GPU model " + shape.models() + " has no MIG profile '" + shape.migProfile()
            + "'");
      }
    }
    if (e.spec().topologyLevel() != null) {
      try {
        cluster.depthOf(e.spec().topologyLevel());
      } catch (InvalidInputException bad) {
        return impossible(bad.getMessage());
      }
    }
    return Optional.empty();
  }

  /** Why no cluster of the registered nodes, with the queue's maximum, could ever serve the request, if none can. */
  Optional<Refusal> whyNeverFits(AppState app, Resources shape, int count, PlacementSpec spec) {
    String never = cluster.whyNever(shape);
    if (never != null) {
      return impossible(never);
    }
    int requiredDepth = spec.topologyLevel() == null ? -1 : cluster.depthOf(spec.topologyLevel());
    if (spec.gang() && count > 0) {
      String gangNever = gangPlacer.whyNever(shape, count, spec.required() ? requiredDepth : -1);
      if (gangNever != null) {
        return impossible(gangNever);
      }
    }
    String partition = shape.partition();
    if (!partition.isEmpty() && !QueueLabels.mayUse(QueueLabels.accessOf(state.tree(), app.leaf.path()), partition)) {
      return impossible("queue " + app.leaf.path() + " may not use node label " + partition
          + " (its accessible-node-labels)");
    }
    ResourceVector partitionCapacity = cluster.capacity(partition);
    // A partition without nodes may get some: its requests wait (ClusterState.whyNever), judged once it has nodes.
    boolean partitionEmpty = partitionCapacity.equals(ResourceVector.ZERO) && !cluster.labelledPartitions().isEmpty();
    if (cluster.nodeCount() > 0 && !partitionEmpty) {
      if (limits == null) {
        limits = new HashMap<>();
      }
      ResourceVector max = limits.computeIfAbsent(partition, p -> p.isEmpty()
          ? FairShareCalculator.resolveLimits(state.tree(), partitionCapacity)
          : QueueLabels.resolve(state.tree(), partitionCapacity, p)).get(app.leaf.path()).maximum();
      ResourceVector unit = charges.unitCharge(shape);
      if (!unit.fitsIn(max)) {
        return impossible("one container " + unit + " is larger than the maximum-capacity " + max + " of queue "
            + app.leaf.path() + (partition.isEmpty() ? "" : " in partition " + partition));
      }
      if (spec.gang() && !unit.times(count).fitsIn(max)) {
        return impossible("gang of " + count + " x " + unit + " is larger than the maximum-capacity " + max
            + " of queue " + app.leaf.path() + (partition.isEmpty() ? "" : " in partition " + partition)
            + "; it could never start whole");
      }
    }
    return Optional.empty();
  }

  void recover(EngineEvent.ContainerRecovered e) {
    AppState app = state.app(e.appId());
    if (app == null) {
      throw new InvalidInputException("appId", e.appId(), "recovered container of an application never submitted");
    }
    if (state.hasAllocation(e.allocationId())) {
      throw new InvalidInputException("allocationId", e.allocationId(), "container already known");
    }
    // A container of the default partition on a non-exclusive label's node counts in that label, as when placed.
    io.spindle.core.model.Node node = cluster.nodeOf(e.nodeId());
    String nodePartition = node == null ? null : node.partition();
    Resources shape = e.shape().partition().isEmpty() && nodePartition != null && cluster.lendsIdle(nodePartition)
        ? e.shape().withPartition(nodePartition) : e.shape();
    Placement placement = cluster.placeOn(e.nodeId(), shape);
    if (placement == null) {
      throw new InvalidInputException("nodeId", e.nodeId(),
          "recovered container " + e.shape() + " does not fit on the node as registered");
    }
    state.charge(app, new Allocation(e.allocationId(), app.id, e.requestKey(), shape, placement, Long.MAX_VALUE));
    preemption.recovered(app.id, e.requestKey(), e.shape(), placement.charge(), e.allocationId(), e.preemptible());
  }

  private static Optional<Refusal> impossible(String why) {
    return Optional.of(new Refusal.Impossible(why));
  }
}
