package io.spindle.core.engine;

import io.spindle.core.engine.EngineEvent.AppFinished;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.MigLayoutReported;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.engine.EngineEvent.NodeRemoved;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.GangPlacer;
import io.spindle.core.placement.Reservation;
import io.spindle.core.placement.MigRepartitionPlanner;
import io.spindle.core.placement.Placement;
import io.spindle.core.queue.FairShareCalculator;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueShare;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * The scheduling engine: events in, decisions out.
 *
 * <p>One {@link #cycle} applies the events, computes every queue's fair share, and then places containers one at a
 * time, each time serving the queue furthest below its fair share (walking down the tree: at each level the child
 * with the lowest usage-to-fair-share ratio), and inside a leaf the application with the highest priority, then the
 * oldest. A request that cannot be placed this cycle is skipped with a reason, so it never blocks the requests
 * behind it; the cycle ends when nothing more can be placed. A gang is placed whole or not at all; one that does not
 * fit has nodes reserved for it, which then only drain. With preemption on, requests that starve get running work
 * reclaimed for them after a checkpoint handshake ({@link EnginePreemption}, {@code io.spindle.core.preemption}).
 *
 * <p>Single-threaded and deterministic: the same events in the same order, on the same clock, give the same
 * decisions. Drivers serialise calls.
 */
public final class Engine {

  private final GpuModelCatalog catalog;
  private final Clock clock;
  private final EngineSettings settings;
  private final MigRepartitioning migRepartitioning;
  private final ClusterState cluster;
  private final GangPlacer gangPlacer;
  private final EnginePreemption preemption;
  private final EngineState state;
  private final ShapeCharges charges;
  static final String NOT_YET_CONSIDERED = "not yet considered by a scheduling cycle";

  private final GangRuns gangRuns = new GangRuns();
  /** Queue limits resolved against the current cluster; dropped when nodes or queues change. */
  private Map<String, FairShareCalculator.Limits> limits;
  private long cycles;
  private boolean restored;
  /**
   * Until then, requests are judged impossible only for what they are (unknown profile, negative count), not against
   * the nodes registered so far: after a ResourceManager starts, its nodes register over seconds, and a gang that
   * needs all of them must not be rejected because the first few arrived. {@code Long.MIN_VALUE}: not started yet.
   */
  private long capacityJudgedFromMillis = Long.MIN_VALUE;
  private boolean capacityJudged;
  /** Reservations and backoffs restored for requests; they take hold with the asks of the next cycle. */
  private final List<DurableState.ReservationState> restoredReservations = new ArrayList<>();
  private final List<DurableState.ReservationBackoff> restoredBackoffs = new ArrayList<>();

  public Engine(GpuModelCatalog catalog, QueueTree tree, Topology topology, Clock clock) {
    this(catalog, tree, topology, clock, EngineSettings.defaults());
  }

  public Engine(GpuModelCatalog catalog, QueueTree tree, Topology topology, Clock clock, EngineSettings settings) {
    this.catalog = catalog;
    this.settings = settings;
    this.clock = clock;
    this.cluster = new ClusterState(topology);
    this.migRepartitioning = new MigRepartitioning(cluster, settings, clock);
    this.gangPlacer = new GangPlacer(cluster);
    this.state = new EngineState(cluster, tree);
    this.charges = new ShapeCharges(catalog, cluster);
    this.preemption = new EnginePreemption(settings.preemption(), clock, state, charges, gangPlacer);
    state.onRelease(gangRuns::released);
    state.onRelease(preemption::released);
  }

  /** Applies the events in order, then schedules. An invalid event throws. */
  public CycleResult cycle(List<? extends EngineEvent> events) {
    return cycle(events, null);
  }

  /** Receives an event the engine could not apply, and why; the event changed nothing. */
  @FunctionalInterface
  public interface BadEventHandler {
    void rejected(EngineEvent event, IllegalArgumentException problem);
  }

  /**
   * Applies the events in order, then schedules. An event that cannot be applied (a duplicate node, a demand for an
   * unknown application, …) goes to {@code onBadEvent} and the rest of the batch still applies — what a driver that
   * must not lose other events wants.
   */
  public CycleResult cycle(List<? extends EngineEvent> events, BadEventHandler onBadEvent) {
    List<Decision> decisions = new ArrayList<>();
    settleRegistration(decisions);
    for (EngineEvent e : events) {
      try {
        apply(e, decisions);
      } catch (IllegalArgumentException problem) {
        if (onBadEvent == null) {
          throw problem;
        }
        onBadEvent.rejected(e, problem);
      }
    }
    settleRestored();
    cluster.activateReconfiguredGpus(clock.nowMillis());
    expireReservations(decisions);
    List<DemandState> reclaimedFor = preemption.beforePlacement(decisions);
    List<DemandState> waiting = schedule(reclaimedFor, decisions);
    preemption.afterPlacement(waiting, state.queues(), decisions);
    return new CycleResult(++cycles, clock.nowMillis(), decisions);
  }

  /**
   * Replaces the queue configuration. Refused, with the previous configuration kept, if an application still
   * runs or waits in a leaf the new tree lacks.
   */
  public void reconfigure(QueueTree newTree) {
    state.reconfigure(newTree);
    limits = null;
  }

  // ---------------------------------------------------------------- events

  private void apply(EngineEvent event, List<Decision> decisions) {
    if (event instanceof NodeAdded e) {
      cluster.addNode(e.node());
      limits = null;
    } else if (event instanceof NodeRemoved e) {
      Reservation broken = cluster.removeNode(e.nodeId());
      if (broken != null) {
        state.durableChange();
        DemandState d = demandOwning(broken);
        if (d != null) {
          d.reservation = null;
          d.reportedReason = "re-queued: node " + e.nodeId() + " of its reservation on " + broken.subtree() + " left";
          decisions.add(new Decision.Wait(d.app.id, d.key, d.reportedReason));
        }
      }
      limits = null;
      List<GangRuns.Run> torn = new ArrayList<>();
      for (long id : new ArrayList<>(state.onNode(e.nodeId()))) {
        GangRuns.Run run = gangRuns.lost(id);
        if (run != null) {
          torn.add(run);
        }
        state.release(id);
      }
      state.nodeLeft(e.nodeId());
      for (GangRuns.Run run : torn) {
        restart(run, "node " + e.nodeId() + " left", decisions);
      }
    } else if (event instanceof AppSubmitted e) {
      submit(e, decisions);
    } else if (event instanceof AppFinished e) {
      finish(e.appId());
    } else if (event instanceof Demand e) {
      demand(e, decisions);
    } else if (event instanceof ContainerFinished e) {
      if (!preemption.holdsFinished(e.allocationId())) {
        state.release(e.allocationId());
      }
    } else if (event instanceof EngineEvent.ContainerLost e) {
      GangRuns.Run run = state.hasAllocation(e.allocationId()) ? gangRuns.lost(e.allocationId()) : null;
      if (!preemption.holdsFinished(e.allocationId())) {
        state.release(e.allocationId());
      }
      if (run != null) {
        restart(run, "container " + e.allocationId() + " was lost: " + e.reason(), decisions);
      }
    } else if (event instanceof EngineEvent.CheckpointAnswered e) {
      preemption.answered(e, decisions);
    } else if (event instanceof EngineEvent.CheckpointReported e) {
      preemption.reported(e);
    } else if (event instanceof EngineEvent.ContainerRecovered e) {
      recover(e);
    } else if (event instanceof MigLayoutReported e) {
      cluster.reportMigLayout(e.nodeId(), e.gpuIndex(), e.layout());
    } else {
      throw new IllegalArgumentException("unknown event " + event);
    }
  }

  private void submit(AppSubmitted e, List<Decision> decisions) {
    if (state.hasApp(e.appId())) {
      throw new InvalidInputException("appId", e.appId(), "application already submitted");
    }
    QueueTree tree = state.tree();
    Optional<QueueConfig> leaf = tree.leaf(e.queue());
    if (leaf.isEmpty()) {
      state.rejected(e.appId());
      boolean isParent = tree.get(e.queue()).isPresent();
      String leaves = tree.leaves().stream().map(QueueConfig::path).toList().toString();
      decisions.add(new Decision.Reject(e.appId(), null, isParent
          ? "queue '" + e.queue() + "' is a parent queue; submit to one of the leaf queues " + leaves
          : "unknown queue '" + e.queue() + "'; leaf queues are " + leaves));
      return;
    }
    String user = e.user() == null || e.user().isBlank() ? "unknown" : e.user();
    state.addApp(e.appId(), state.queue(leaf.get().path()), user, e.priority(), clock.nowMillis());
  }

  private void finish(String appId) {
    state.forgetRejection(appId);
    AppState app = state.app(appId);
    if (app == null) {
      return;
    }
    for (long id : new ArrayList<>(app.allocations)) {
      state.release(id);
    }
    state.removeApp(appId);
    state.durableChange();
    for (DemandState d : app.demands.values()) {
      app.leaf.addPending(d.pending().times(-1));
      dropReservation(d);
    }
    app.demands.clear();
    app.leaf.waitingApps.remove(app);
    preemption.appFinished(appId);
  }

  private void demand(Demand e, List<Decision> decisions) {
    if (state.wasRejected(e.appId())) {
      return; // Already told why; more requests from the same application change nothing.
    }
    AppState app = state.app(e.appId());
    if (app == null) {
      throw new InvalidInputException("appId", e.appId(), "demand for an application that was never submitted");
    }
    String why = whyImpossible(app, e);
    if (why == null && capacityJudged) {
      why = whyNeverFits(app, e.shape(), e.count(), e.spec());
    }
    DemandState old = app.demands.get(e.requestKey());
    if (why == null) {
      // Only what is new counts: drivers re-send a request's whole outstanding count.
      int before = old != null && old.shape.equals(e.shape()) ? old.outstanding : 0;
      migRepartitioning.asked(e.shape(), e.count() - before);
    }
    if (old != null) {
      forget(old);
    }
    if (why != null) {
      decisions.add(new Decision.Reject(app.id, e.requestKey(), why));
    } else if (e.count() > 0) {
      state.addDemand(new DemandState(app, e.requestKey(), e.shape(), charges.unitCharge(e.shape()), e.count(),
          e.spec(), charges.requiredDepth(e.spec())));
    }
    state.refile(app);
  }

  private void forget(DemandState d) {
    state.removeDemand(d);
    dropReservation(d);
    if (d.noReservationBeforeMillis != 0) {
      state.durableChange(); // Its backoff goes with it.
    }
  }

  /**
   * Starts judging requests against the registered nodes once the registration window has passed since the first
   * cycle, and rejects the requests that arrived meanwhile and still could never fit.
   */
  private void settleRegistration(List<Decision> decisions) {
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
        String why = whyNeverFits(app, d.shape, d.outstanding, d.spec);
        if (why != null) {
          forget(d);
          decisions.add(new Decision.Reject(app.id, d.key, why));
        }
      }
      state.refile(app);
    }
  }

  /** Why a request can never be served as asked whatever the cluster, or {@code null}. */
  private String whyImpossible(AppState app, Demand e) {
    if (e.count() < 0) {
      return "count must not be negative; was " + e.count();
    }
    Resources shape = e.shape();
    if (e.count() > 0 && shape.memoryMb() == 0 && shape.vcores() == 0 && shape.gpus() == 0 && !shape.wantsMig()) {
      // Such a container fits on every node without end: placing as many as asked would never finish a cycle. (A
      // count of 0 withdraws the request, and drivers withdraw with an empty shape.)
      return "a container must ask for some memory, vcores or GPUs; " + shape + " asks for nothing";
    }
    if (shape.gpuModel() != null && catalog.find(shape.gpuModel()).isEmpty()) {
      return "unknown GPU model '" + shape.gpuModel() + "'; known models: "
          + catalog.models().stream().map(GpuModel::name).toList();
    }
    if (shape.wantsMig()) {
      List<GpuModel> offering = catalog.modelsOffering(shape.migProfile());
      if (offering.isEmpty()) {
        return "unknown MIG profile '" + shape.migProfile() + "'; no GPU model offers it (e.g. "
            + catalog.models().get(0).profiles().stream().map(MigProfile::name).toList() + " on "
            + catalog.models().get(0).name() + ")";
      }
      if (shape.gpuModel() != null && offering.stream().noneMatch(m -> m.name().equals(shape.gpuModel()))) {
        return "GPU model " + shape.gpuModel() + " has no MIG profile '" + shape.migProfile() + "'";
      }
    }
    if (e.spec().topologyLevel() != null) {
      try {
        cluster.depthOf(e.spec().topologyLevel());
      } catch (InvalidInputException bad) {
        return bad.getMessage();
      }
    }
    return null;
  }

  /** Why no cluster of the registered nodes, with the queue's maximum, could ever serve the request, or {@code null}. */
  private String whyNeverFits(AppState app, Resources shape, int count, PlacementSpec spec) {
    String never = cluster.whyNever(shape);
    if (never != null) {
      return never;
    }
    int requiredDepth = spec.topologyLevel() == null ? -1 : cluster.depthOf(spec.topologyLevel());
    if (spec.gang() && count > 0) {
      String gangNever = gangPlacer.whyNever(shape, count, spec.required() ? requiredDepth : -1);
      if (gangNever != null) {
        return gangNever;
      }
    }
    if (cluster.nodeCount() > 0) {
      if (limits == null) {
        limits = FairShareCalculator.resolveLimits(state.tree(), cluster.capacity());
      }
      ResourceVector max = limits.get(app.leaf.path()).maximum();
      ResourceVector unit = charges.unitCharge(shape);
      if (!unit.fitsIn(max)) {
        return "one container " + unit + " is larger than the maximum-capacity " + max + " of queue "
            + app.leaf.path();
      }
      if (spec.gang() && !unit.times(count).fitsIn(max)) {
        return "gang of " + count + " x " + unit + " is larger than the maximum-capacity " + max
            + " of queue " + app.leaf.path() + "; it could never start whole";
      }
    }
    return null;
  }

  private void recover(EngineEvent.ContainerRecovered e) {
    AppState app = state.app(e.appId());
    if (app == null) {
      throw new InvalidInputException("appId", e.appId(), "recovered container of an application never submitted");
    }
    if (state.hasAllocation(e.allocationId())) {
      throw new InvalidInputException("allocationId", e.allocationId(), "container already known");
    }
    Placement placement = cluster.placeOn(e.nodeId(), e.shape());
    if (placement == null) {
      throw new InvalidInputException("nodeId", e.nodeId(),
          "recovered container " + e.shape() + " does not fit on the node as registered");
    }
    state.charge(app, new Allocation(e.allocationId(), app.id, e.requestKey(), e.shape(), placement,
        Long.MAX_VALUE));
    preemption.recovered(app.id, e.requestKey(), e.shape(), placement.charge(), e.allocationId(), e.preemptible());
  }

  // ---------------------------------------------------------------- scheduling

  /** Places what it can; returns the requests that had to wait, in the order they were tried. */
  private List<DemandState> schedule(List<DemandState> reclaimedFor, List<Decision> decisions) {
    if (noWaitingLeaves()) {
      return List.of();
    }
    Map<String, QueueShare> shares = FairShareCalculator.compute(state.tree(), cluster.capacity(), leafDemands());
    Map<QueueState, LeafCursor> cursors = new HashMap<>();
    for (QueueState q : state.queues()) {
      q.share = shares.get(q.path());
      q.activeLeaves = 0;
    }
    long cycle = cycles + 1;
    // Capacity only shrinks within a cycle, so a shape that found no node stays unplaceable until the cycle ends.
    Set<Resources> noRoom = new HashSet<>();
    refusedThisCycle.clear();
    foundThisCycle.clear();
    List<DemandState> waiting = new ArrayList<>();
    // Capacity a reclaim freed goes to the request it was reclaimed for before anyone else can take part of it.
    for (DemandState d : reclaimedFor) {
      if (d.outstanding > 0 && d.waitingInCycle != cycle) {
        String why = tryPlace(d, noRoom, decisions);
        if (why != null) {
          d.waitingInCycle = cycle;
          d.waitingReason = why;
          waiting.add(d);
        }
      }
    }
    for (QueueState q : state.queues()) {
      if (q.isLeaf() && !q.waitingApps.isEmpty()) {
        cursors.put(q, new LeafCursor(new ArrayList<>(q.waitingApps)));
        for (QueueState p = q; p != null; p = p.parent) {
          p.activeLeaves++;
        }
      }
    }

    QueueState leaf;
    while ((leaf = pickLeaf()) != null) {
      // Stay in this leaf until one container is placed: a failure changes no usage, so the walk down the tree
      // would pick the same leaf again.
      LeafCursor cursor = cursors.get(leaf);
      boolean placed = false;
      while (!placed && cursor.advance(cycle)) {
        DemandState d = cursor.demand();
        String why = tryPlace(d, noRoom, decisions);
        if (why == null) {
          placed = true;
        } else {
          d.waitingInCycle = cycle;
          d.waitingReason = why;
          waiting.add(d);
          if (settings.strictQueueOrder()) {
            cursor.stop(); // Head-of-line blocking: nothing behind the first request that waits may start.
          }
        }
      }
      if (!placed) {
        for (QueueState p = leaf; p != null; p = p.parent) {
          p.activeLeaves--;
        }
      }
    }

    List<MigRepartitionPlanner.Need> migNeeds = new ArrayList<>();
    for (DemandState d : waiting) {
      if (d.waitingReason == NO_ROOM && d.shape.wantsMig()) {
        migNeeds.add(new MigRepartitionPlanner.Need(d.shape, d.outstanding));
      }
    }
    Map<Resources, String> noRoomReasons = migRepartitioning.plan(migNeeds, decisions);

    // "No room" is explained against the cluster as the cycle leaves it, so the reason is the same from one
    // cycle to the next while the situation is, and a Wait is re-announced only when something really changed.
    for (DemandState d : waiting) {
      if (d.waitingReason == NO_ROOM) {
        d.waitingReason = noRoomReasons.computeIfAbsent(d.shape, cluster::whyNotNow);
      }
      if (!capacityJudged) {
        String never = whyNeverFits(d.app, d.shape, d.outstanding, d.spec);
        if (never != null) {
          d.waitingReason = "not yet placeable on the " + cluster.nodeCount() + " nodes registered so far (" + never
              + "); nodes are still registering, so it is judged again at " + java.time.Instant.ofEpochMilli(capacityJudgedFromMillis)
              + " and rejected then if it still cannot fit";
        }
      }
      if (d.outstanding > 0 && !d.waitingReason.equals(d.reportedReason)) {
        d.reportedReason = d.waitingReason;
        decisions.add(new Decision.Wait(d.app.id, d.key, d.waitingReason));
      }
    }
    return waiting;
  }

  private boolean noWaitingLeaves() {
    for (QueueState q : state.queues()) {
      if (!q.waitingApps.isEmpty()) {
        return false;
      }
    }
    return true;
  }

  /** Walks down from the root, each time to the child furthest below its fair share that can still place work. */
  private QueueState pickLeaf() {
    if (state.root().activeLeaves == 0) {
      return null;
    }
    QueueState q = state.root();
    ResourceVector capacity = cluster.capacity();
    while (!q.isLeaf()) {
      QueueState best = null;
      double bestRatio = 0;
      double bestUsage = 0;
      for (QueueState c : q.children) {
        if (c.activeLeaves == 0) {
          continue;
        }
        double usage = c.usage.dominantShare(capacity);
        double fair = c.share.fairShare().dominantShare(capacity);
        double ratio = fair > 0 ? usage / fair : Double.POSITIVE_INFINITY;
        if (best == null || ratio < bestRatio || (ratio == bestRatio && usage < bestUsage)) {
          best = c;
          bestRatio = ratio;
          bestUsage = usage;
        }
      }
      q = best;
    }
    return q;
  }

  /** Marks a request that found no node with room; replaced by a reason at the end of the cycle. */
  private static final String NO_ROOM = new String("no room");

  /** Places one container of {@code d}, or says why it cannot now ({@link #NO_ROOM} when no node has room). */
  private String tryPlace(DemandState d, Set<Resources> noRoom, List<Decision> decisions) {
    if (d.isGang()) {
      return tryPlaceGang(d, decisions);
    }
    // Under sustained load a queue sits at its maximum and thousands of waiting requests of a few shapes find room
    // but are refused: the place found for a shape holds until the next container starts.
    Placement placement = noRoom.contains(d.shape) ? null : findSinceLastStart(d.shape);
    if (placement == null) {
      noRoom.add(d.shape);
      if (d.spec.maxRuntimeMillis() > 0) {
        placement = cluster.findBackfill(d.shape, clock.nowMillis() + d.spec.maxRuntimeMillis());
      }
    }
    if (placement == null) {
      return NO_ROOM;
    }
    String over = refusedByLimits(d.app, placement.charge());
    if (over != null) {
      return over;
    }
    start(d, placement, decisions);
    return null;
  }

  /**
   * All members of a gang in this cycle, or none. A gang that does not fit gets nodes reserved for it (while fewer
   * than the configured number of gangs hold reservations), so later, smaller requests cannot keep it waiting.
   */
  private String tryPlaceGang(DemandState d, List<Decision> decisions) {
    List<Placement> members = gangPlacer.place(d.shape, d.outstanding, d.requiredDepth, d.reservation);
    if (members == null) {
      if (d.shape.wantsMig() && cluster.migContainersPlaceable(d.shape, d.outstanding) < d.outstanding) {
        return NO_ROOM; // Instances are missing, not nodes: the MIG planner makes them for the gang.
      }
      return reserveFor(d, decisions);
    }
    ResourceVector total = ResourceVector.ZERO;
    for (Placement p : members) {
      total = total.plus(p.charge());
    }
    String over = overLimits(d.app, total);
    if (over != null) {
      return over;
    }
    dropReservation(d);
    List<Long> ids = new ArrayList<>(members.size());
    for (Placement p : members) {
      ids.add(start(d, p, decisions));
    }
    gangRuns.started(d, ids);
    return null;
  }

  private String reserveFor(DemandState d, List<Decision> decisions) {
    String level = d.spec.required() ? "one " + d.spec.topologyLevel() : "the cluster";
    if (d.reservation != null) {
      return "gang of " + d.outstanding + " waits for its reservation on " + d.reservation.subtree() + " to drain"
          + projected(d.reservation);
    }
    long now = clock.nowMillis();
    if (cluster.reservations().size() >= settings.maxReservations() || now < d.noReservationBeforeMillis) {
      return "gang of " + d.outstanding + " does not fit in " + level + " now; waiting for a reservation slot";
    }
    Reservation r = gangPlacer.reserve(d.owner(), d.shape, d.outstanding, d.requiredDepth, now);
    if (r == null) {
      return "gang of " + d.outstanding + " does not fit in " + level + " now, and its nodes are held for other gangs";
    }
    d.reservation = r;
    state.durableChange();
    r.projectedStartMillis(projectedStart(r));
    decisions.add(new Decision.Reserve(d.app.id, d.key, r.subtree(), r.nodeIds(), r.projectedStartMillis()));
    return "gang of " + d.outstanding + " waits for its reservation on " + r.subtree() + " to drain" + projected(r);
  }

  private static String projected(Reservation r) {
    return r.projectedStartMillis() == Long.MAX_VALUE ? " (containers there declared no run time)"
        : " (projected start " + java.time.Instant.ofEpochMilli(r.projectedStartMillis()) + ")";
  }

  /** The last declared end of what runs on the reserved nodes: when the gang is due to fit at the latest. */
  private long projectedStart(Reservation r) {
    long latest = clock.nowMillis();
    for (String node : r.nodeIds()) {
      for (long id : state.onNode(node)) {
        latest = Math.max(latest, state.allocation(id).endsAtMillis());
      }
    }
    return latest;
  }

  /** Drops reservations held longer than the timeout; their gangs re-queue and may not reserve again for as long. */
  private void expireReservations(List<Decision> decisions) {
    long now = clock.nowMillis();
    for (Reservation r : new ArrayList<>(cluster.reservations())) {
      DemandState d = demandOwning(r);
      if (d == null) {
        cluster.releaseReservation(r);
        state.durableChange();
      } else if (now - r.createdMillis() >= settings.reservationTimeoutMillis() && !preemption.reclaimingFor(d)) {
        dropReservation(d);
        d.noReservationBeforeMillis = now + settings.reservationTimeoutMillis();
        d.reportedReason = "re-queued: reservation on " + r.subtree() + " timed out after "
            + settings.reservationTimeoutMillis() / 1000 + " s";
        decisions.add(new Decision.Wait(d.app.id, d.key, d.reportedReason));
      } else {
        r.projectedStartMillis(projectedStart(r));
      }
    }
  }

  private DemandState demandOwning(Reservation r) {
    int slash = r.owner().indexOf('/');
    AppState app = state.app(r.owner().substring(0, slash));
    return app == null ? null : app.demands.get(r.owner().substring(slash + 1));
  }

  private void dropReservation(DemandState d) {
    if (d.reservation != null) {
      cluster.releaseReservation(d.reservation);
      d.reservation = null;
      state.durableChange();
    }
  }

  /** Where a shape would go, and after how many container starts of this cycle it was found. */
  private record Found(Placement placement, long starts) {}

  /** Places found in this cycle; one is valid while no container started since (a stamp, not a clear per start). */
  private final Map<Resources, Found> foundThisCycle = new HashMap<>();
  private long startsThisCycle;

  private Placement findSinceLastStart(Resources shape) {
    Found f = foundThisCycle.get(shape);
    if (f != null && f.starts() == startsThisCycle) {
      return f.placement();
    }
    Placement p = cluster.find(shape);
    if (p != null) {
      foundThisCycle.put(shape, new Found(p, startsThisCycle));
    }
    return p;
  }

  /** A charge to one user in one leaf, refused by a limit: usage only grows while a cycle places, so it stays so. */
  private record LimitKey(QueueState leaf, String user, ResourceVector charge) {}

  /** Charges a limit refused in this cycle, with the reason: thousands of waiting requests of a shape word it once. */
  private final Map<LimitKey, String> refusedThisCycle = new HashMap<>();

  /** {@link #overLimits}, remembered for the rest of the cycle when it refuses. */
  private String refusedByLimits(AppState app, ResourceVector charge) {
    LimitKey key = new LimitKey(app.leaf, app.user, charge);
    String why = refusedThisCycle.get(key);
    if (why == null) {
      why = overLimits(app, charge);
      if (why != null) {
        refusedThisCycle.put(key, why);
      }
    }
    return why;
  }

  /** Why charging {@code charge} to the application would break a queue maximum or its user limit, or null. */
  private String overLimits(AppState app, ResourceVector charge) {
    for (QueueState q = app.leaf; q != null; q = q.parent) {
      ResourceVector after = q.usage.plus(charge);
      if (!after.fitsIn(q.share.maximum())) {
        return "queue " + q.path() + " is at its maximum-capacity: it uses " + q.usage + " of at most "
            + q.share.maximum() + ", and this request needs " + charge + " more";
      }
    }
    return userLimitExceeded(app, charge);
  }

  /**
   * A gang lost members to the cluster: its survivors are stopped, and it waits again, whole, under its key, unless
   * the application already asks for that key again (its ask stands, as after a preemption).
   */
  private void restart(GangRuns.Run run, String why, List<Decision> decisions) {
    List<Long> survivors = run.members.stream().filter(id -> !run.lost.contains(id) && state.hasAllocation(id))
        .toList();
    String reason = "gang of " + run.size + " lost " + run.lost.size() + " member" + (run.lost.size() == 1 ? "" : "s")
        + " (" + why + "); its other members are stopped and it is re-queued whole";
    decisions.add(new Decision.RestartGang(run.appId, run.requestKey, survivors, run.lost, reason));
    AppState app = state.app(run.appId);
    if (app == null || app.demands.containsKey(run.requestKey)) {
      return;
    }
    DemandState d = new DemandState(app, run.requestKey, run.shape, run.unitCharge, run.size, run.spec,
        run.requiredDepth);
    state.addDemand(d);
    app.leaf.waitingApps.add(app);
    d.reportedReason = "re-queued: " + reason;
    decisions.add(new Decision.Wait(app.id, d.key, d.reportedReason));
  }

  /** Commits one container of {@code d} at {@code placement}, announces it and returns its allocation id. */
  private long start(DemandState d, Placement placement, List<Decision> decisions) {
    startsThisCycle++;
    AppState app = d.app;
    long id = state.newAllocationId();
    long endsAt = d.spec.maxRuntimeMillis() > 0 ? clock.nowMillis() + d.spec.maxRuntimeMillis() : Long.MAX_VALUE;
    state.charge(app, new Allocation(id, app.id, d.key, d.shape, placement, endsAt));
    if (endsAt != Long.MAX_VALUE) {
      state.durableChange();
    }
    app.leaf.addPending(d.unitCharge.times(-1));
    preemption.started(d, id);
    d.outstanding--;
    d.reportedReason = null;
    if (d.outstanding == 0) {
      app.demands.remove(d.key);
      if (d.noReservationBeforeMillis != 0) {
        state.durableChange(); // Its backoff goes with it.
      }
      if (!app.hasPending()) {
        app.leaf.waitingApps.remove(app);
      }
    }
    decisions.add(new Decision.Allocate(id, app.id, d.key, placement.nodeId(), d.shape, placement.gpus(),
        placement.charge()));
    return id;
  }

  /**
   * CapacityScheduler's user limit: one user may hold at most user-limit-factor times the queue's guarantee of
   * each resource the queue is guaranteed (resources it has no guarantee of are bounded by its maximum alone).
   */
  private String userLimitExceeded(AppState app, ResourceVector charge) {
    double factor = app.leaf.config.userLimitFactor();
    if (factor < 0) {
      return null;
    }
    ResourceVector guarantee = app.leaf.share.guarantee();
    ResourceVector after = app.leaf.userUsage.getOrDefault(app.user, ResourceVector.ZERO).plus(charge);
    for (int i = 0; i < ResourceVector.DIMENSIONS; i++) {
      long g = guarantee.get(i);
      if (g > 0 && after.get(i) > (long) Math.floor(g * factor + 1e-9)) {
        return "user " + app.user + " is at the user limit of queue " + app.leaf.path() + " (user-limit-factor "
            + factor + " x guarantee " + guarantee + ") in " + ResourceVector.dimensionName(i);
      }
    }
    return null;
  }

  /** Walks a leaf's waiting applications and their requests in order, once per cycle. */
  private static final class LeafCursor {
    private final List<AppState> apps;
    private int appIndex;
    private List<DemandState> demands;
    private int demandIndex;

    LeafCursor(List<AppState> apps) {
      this.apps = apps;
    }

    /** Moves to the next request that still has outstanding containers and has not had to wait this cycle. */
    boolean advance(long cycle) {
      while (appIndex < apps.size()) {
        if (demands == null) {
          demands = new ArrayList<>(apps.get(appIndex).demands.values());
          demandIndex = 0;
        }
        while (demandIndex < demands.size()) {
          DemandState d = demands.get(demandIndex);
          if (d.outstanding > 0 && d.waitingInCycle != cycle) {
            return true;
          }
          demandIndex++;
        }
        appIndex++;
        demands = null;
      }
      return false;
    }

    DemandState demand() {
      return demands.get(demandIndex);
    }

    /** Ends the walk for this cycle: nothing further in the leaf is tried. */
    void stop() {
      appIndex = apps.size();
      demands = null;
    }
  }

  // ---------------------------------------------------------------- failover

  /**
   * What a standby needs to take over from this engine and decide as it would (see {@link DurableState}), with
   * containers named by {@code containerName} (the driver's stable name for an allocation id, {@code null} for one
   * it does not know, which is then left out). Cheap enough to call after every cycle in which
   * {@link #durableVersion} moved.
   */
  public DurableState durableState(LongFunction<String> containerName) {
    List<DurableState.ReservationState> reservations = new ArrayList<>(restoredReservations);
    for (Reservation r : cluster.reservations()) {
      DemandState d = demandOwning(r);
      if (d != null && d.reservation == r) {
        reservations.add(new DurableState.ReservationState(d.app.id, d.key, r.subtree(), r.nodeIds(),
            r.createdMillis(), d.outstanding));
      }
    }
    List<DurableState.ReservationBackoff> backoffs = new ArrayList<>(restoredBackoffs);
    for (AppState app : state.apps()) {
      for (DemandState d : app.demands.values()) {
        if (d.noReservationBeforeMillis != 0) {
          backoffs.add(new DurableState.ReservationBackoff(app.id, d.key, d.noReservationBeforeMillis));
        }
      }
    }
    List<DurableState.DeclaredEnd> ends = new ArrayList<>();
    for (Allocation a : state.allocations()) {
      String name = a.endsAtMillis() == Long.MAX_VALUE ? null : containerName.apply(a.id());
      if (name != null) {
        ends.add(new DurableState.DeclaredEnd(name, a.endsAtMillis()));
      }
    }
    ends.sort(Comparator.comparing(DurableState.DeclaredEnd::container)); // Same state, same record.
    return new DurableState(preemption.nextNoticeId(), preemption.nextUnitId(), preemption.unitStates(containerName),
        reservations, backoffs, preemption.reclaimStates(containerName), preemption.checkpointStates(),
        preemption.resumeStates(), preemption.starvationState(), ends);
  }

  /**
   * Moves whenever what {@link #durableState} would return changes (and sometimes when it does not): a driver saves
   * the state only after cycles that moved it.
   */
  public long durableVersion() {
    return state.durableChanges() + preemption.durableChanges();
  }

  /**
   * Takes over from an earlier leader. Call it once YARN's recovery has been applied in a cycle (the nodes, the
   * applications, the running containers under the driver's new allocation ids), and before the applications'
   * asks, or with them already applied; {@code allocationIdOf} gives the allocation id a container has here by its
   * name, {@code null} if it was not recovered.
   *
   * <p>Recovered containers are regrouped into the units they ran as (a gang is again one victim, preempted and
   * re-queued whole, with its original start time and spec). Reclaims in flight continue with their notice ids,
   * deadlines, extensions and answers: a deadline that passed during the failover reclaims in the next cycle, an
   * answer to an old notice id is applied, no notice id is issued twice. The next cycle issues again the notices
   * in force ({@link Decision.RequestCheckpoint}, unchanged) and the kills of reclaims under way whose containers
   * still run ({@link Decision.Preempt}): what the driver knew of them did not survive the failover. A victim's
   * container that ended is held charged on its node until its reclaim completes, as before. Checkpoint reports,
   * resume locations, starvation and the run times containers declared carry on.
   *
   * <p>Reservations and reservation backoffs take hold in the next cycle, after its events: a reservation is held
   * again, with its original age, for a gang asked again as it was (same size); one whose gang was not asked again,
   * or differently, is dropped, as a changed ask drops it on any leader. Starvation of a request not waiting then
   * ends as well, and a reclaim whose request is not asked again is withdrawn. So the asks the application masters
   * send again should reach the engine before or in that cycle.
   *
   * <p>Entries naming applications, containers, nodes or queues that did not come back are dropped, each with the
   * reason in the report. Calling it again with the same state is safe: only containers recovered since (their node
   * re-registered late) join their units; nothing else is taken over twice.
   *
   * @throws InvalidInputException when {@code state} or {@code allocationIdOf} is missing
   * @throws IllegalStateException when this engine has issued checkpoint notices of its own already
   */
  public RestoreReport restore(DurableState saved, Function<String, Long> allocationIdOf) {
    if (saved == null || allocationIdOf == null) {
      throw new InvalidInputException(saved == null ? "state" : "allocationIdOf", null, "missing");
    }
    if (!restored && preemption.issuedNotices()) {
      throw new IllegalStateException("a restore must come before this engine issues checkpoint notices of its own");
    }
    List<String> dropped = new ArrayList<>();
    Set<String> missing = new LinkedHashSet<>();
    Function<String, Long> recovered = name -> {
      Long id = allocationIdOf.apply(name);
      return id != null && state.hasAllocation(id) ? id : null;
    };
    for (DurableState.DeclaredEnd end : saved.declaredEnds()) {
      Long id = recovered.apply(end.container());
      Allocation a = id == null ? null : state.allocation(id);
      if (a == null) {
        missing.add(end.container());
      } else if (a.endsAtMillis() == Long.MAX_VALUE) {
        state.replace(new Allocation(id, a.appId(), a.requestKey(), a.shape(), a.placement(), end.endsAtMillis()));
      }
    }
    if (!missing.isEmpty()) {
      dropped.add("declared run times of containers " + missing + ": not recovered");
    }
    state.durableChange();
    if (restored) {
      return new RestoreReport(preemption.regroupLate(saved.units(), recovered, dropped), 0, 0, dropped);
    }
    int[] counts = preemption.restore(saved, recovered, dropped);
    for (DurableState.ReservationState r : saved.reservations()) {
      String why = !state.hasApp(r.appId()) ? "application not recovered"
          : r.nodeIds().stream().filter(n -> !cluster.hasNode(n)).findFirst()
              .map(n -> "node " + n + " has not re-registered").orElse(null);
      if (why == null) {
        restoredReservations.add(r);
      } else {
        dropped.add("reservation of " + r.appId() + "/" + r.requestKey() + " on " + r.subtree() + ": " + why);
      }
    }
    for (DurableState.ReservationBackoff b : saved.reservationBackoffs()) {
      if (state.hasApp(b.appId())) {
        restoredBackoffs.add(b);
      } else {
        dropped.add("reservation backoff of " + b.appId() + "/" + b.requestKey() + ": application not recovered");
      }
    }
    restored = true;
    return new RestoreReport(counts[0], counts[1], restoredReservations.size(), dropped);
  }

  /** Restored reservations and backoffs meet the asks: after the events of the first cycle after a restore. */
  private void settleRestored() {
    if (restoredReservations.isEmpty() && restoredBackoffs.isEmpty()) {
      return;
    }
    state.durableChange();
    for (DurableState.ReservationBackoff b : restoredBackoffs) {
      AppState app = state.app(b.appId());
      DemandState d = app == null ? null : app.demands.get(b.requestKey());
      if (d != null && d.isGang()) {
        d.noReservationBeforeMillis = Math.max(d.noReservationBeforeMillis, b.noReservationBeforeMillis());
      }
    }
    for (DurableState.ReservationState r : restoredReservations) {
      AppState app = state.app(r.appId());
      DemandState d = app == null ? null : app.demands.get(r.requestKey());
      if (d == null || !d.isGang() || d.outstanding != r.gangSize() || d.reservation != null
          || cluster.reservations().size() >= settings.maxReservations()) {
        continue; // Not asked again as it was (or it holds nodes of this leader's choosing already).
      }
      try {
        d.reservation = cluster.reserveAgain(d.owner(), r.subtree(), r.nodeIds(), r.createdMillis());
        d.reservation.projectedStartMillis(projectedStart(d.reservation));
      } catch (InvalidInputException gone) {
        // A node left in this cycle's events, or another gang holds it by now: the gang reserves afresh.
      }
    }
    restoredReservations.clear();
    restoredBackoffs.clear();
  }

  /**
   * The outstanding requests as the applications would ask for them again after a failover, in the order the
   * engine keeps them. For tests that rebuild an engine from scratch and compare it with the original.
   */
  List<Demand> outstandingDemands() {
    List<Demand> out = new ArrayList<>();
    for (AppState app : state.apps()) {
      for (DemandState d : app.demands.values()) {
        out.add(new Demand(app.id, d.key, d.shape, d.outstanding, d.spec));
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- views

  /** Each queue as of the last cycle, parents before children. */
  public List<QueueSnapshot> queueSnapshots() {
    Map<String, QueueShare> shares = FairShareCalculator.compute(state.tree(), cluster.capacity(), leafDemands());
    List<QueueSnapshot> out = new ArrayList<>();
    for (QueueState q : state.queues()) {
      QueueShare s = shares.get(q.path());
      out.add(new QueueSnapshot(q.path(), s.guarantee(), s.maximum(), s.fairShare(), q.usage, q.pending));
    }
    return out;
  }

  private Map<String, ResourceVector> leafDemands() {
    Map<String, ResourceVector> out = new HashMap<>();
    for (QueueState q : state.queues()) {
      if (q.isLeaf()) {
        out.put(q.path(), q.usage.plus(q.pending));
      }
    }
    return out;
  }

  /** The reason each waiting request of the application was last given, by request key. */
  public Map<String, String> pendingReasons(String appId) {
    AppState app = state.app(appId);
    if (app == null) {
      return Map.of();
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (DemandState d : app.demands.values()) {
      out.put(d.key, d.reportedReason == null ? NOT_YET_CONSIDERED : d.reportedReason);
    }
    return Collections.unmodifiableMap(out);
  }

  public Optional<ResourceVector> appUsage(String appId) {
    return Optional.ofNullable(state.app(appId)).map(a -> a.usage);
  }

  public ClusterState cluster() {
    return cluster;
  }

  public QueueTree queueTree() {
    return state.tree();
  }

  /** Containers asked for and not yet placed, over all applications. */
  public long pendingContainers() {
    long n = 0;
    for (AppState app : state.apps()) {
      for (DemandState d : app.demands.values()) {
        n += d.outstanding;
      }
    }
    return n;
  }

  public int runningContainers() {
    return state.allocationCount();
  }

  /** Figures for metrics as of now (call between cycles, on the thread that runs them). */
  public EngineStats stats() {
    long now = clock.nowMillis();
    int gangs = 0;
    long oldestSubmit = Long.MAX_VALUE;
    for (AppState app : state.apps()) {
      for (DemandState d : app.demands.values()) {
        if (d.isGang() && d.outstanding > 0) {
          gangs++;
          oldestSubmit = Math.min(oldestSubmit, app.submitTimeMillis);
        }
      }
    }
    int freeWhole = 0;
    for (int n : cluster.freeWholeGpusByNode().values()) {
      freeWhole += n;
    }
    long oldestReservation = now;
    for (Reservation r : cluster.reservations()) {
      oldestReservation = Math.min(oldestReservation, r.createdMillis());
    }
    return new EngineStats(gangs, gangs == 0 ? 0 : Math.max(0, now - oldestSubmit), cluster.reservations().size(),
        cluster.capacity().gpus(), freeWhole, cluster.freeMigInstancesByProfile(), cluster.migSlices(), pendingContainers(),
        runningContainers(), now - oldestReservation);
  }

  /** What status pages show, as of now (call between cycles, on the thread that runs them). */
  public EngineStatus status() {
    List<EngineStatus.App> appViews = new ArrayList<>(state.apps().size());
    for (AppState app : state.apps()) {
      List<EngineStatus.Request> requests = new ArrayList<>(app.demands.size());
      for (DemandState d : app.demands.values()) {
        Reservation r = d.reservation;
        requests.add(new EngineStatus.Request(d.key, d.shape, d.outstanding, d.spec,
            d.reportedReason == null ? NOT_YET_CONSIDERED : d.reportedReason,
            r == null ? null : new EngineStatus.Held(r.subtree(), r.nodeIds(), r.createdMillis(),
                r.projectedStartMillis())));
      }
      appViews.add(new EngineStatus.App(app.id, app.leaf.path(), app.user, app.priority, app.submitTimeMillis,
          app.usage, app.allocations.size(), requests));
    }
    List<EngineStatus.Container> containers = new ArrayList<>(state.allocationCount());
    for (Allocation a : state.allocations().stream().sorted(Comparator.comparingLong(Allocation::id)).toList()) {
      containers.add(new EngineStatus.Container(a.id(), a.appId(), a.requestKey(), a.placement().nodeId(), a.shape(),
          a.placement().gpus()));
    }
    return new EngineStatus(cycles, clock.nowMillis(), queueSnapshots(), appViews, cluster.nodeViews(), containers);
  }

  /**
   * The earliest deadline of a checkpoint notice still awaiting its answer: a driver that runs cycles only when
   * something happens (the simulator) should run one then, so the silent victim is reclaimed on time.
   */
  public OptionalLong nextPreemptionDeadlineMillis() {
    return preemption.nextDeadlineMillis();
  }

  /** Where a request re-queued after preemption should resume from, as its application last said. */
  public Optional<String> resumeCheckpoint(String appId, String requestKey) {
    return preemption.resumeFrom(appId, requestKey);
  }
}
