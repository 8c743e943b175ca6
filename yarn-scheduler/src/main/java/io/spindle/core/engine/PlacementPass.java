package io.spindle.core.engine;

import io.spindle.core.model.Node;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.GangPlacer;
import io.spindle.core.placement.MigRepartitionPlanner;
import io.spindle.core.placement.Placement;
import io.spindle.core.placement.SparePool;
import io.spindle.core.queue.AppOrdering;
import io.spindle.core.queue.FairShareCalculator;
import io.spindle.core.queue.QueueLabels;
import io.spindle.core.queue.QueueShare;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One cycle's placement, built afresh each cycle so that what it learns while placing (places found, limits that
 * refused, shapes that found no room, requests that had to wait and why) is gone when the cycle ends. Places one
 * container at a time, each time serving the queue furthest below its fair share (walking down the tree: at each
 * level the child with the lowest usage-to-fair-share ratio), and inside a leaf the application with the highest
 * priority, then the oldest (in a leaf whose ordering is fair, the one holding least; in a ranked one, as
 * {@link LeafOrder} says). A request that cannot be placed is skipped for the rest of the cycle with a reason, so
 * it never blocks the requests behind it. A gang is placed whole or not at all.
 */
final class PlacementPass {

  private final EngineState state;
  private final ClusterState cluster;
  private final GangPlacer gangPlacer;
  private final EngineSettings settings;
  private final Clock clock;
  private final MigRepartitioning migRepartitioning;
  private final Reservations reservations;
  private final EnginePreemption preemption;
  private final GangRuns gangRuns;
  private final Admission admission;
  private final ElasticGrowth growth;
  private final SparePool spares;
  /** Capacity only shrinks within a cycle, so a shape that found no node stays unplaceable until the cycle ends. */
  private final Set<Resources> noRoom = new HashSet<>();
  /** Requests that had to wait in this cycle, and why: each is tried at most once until the cycle ends. */
  private final Map<DemandState, Refusal> waitReasons = new IdentityHashMap<>();

  PlacementPass(EngineState state, GangPlacer gangPlacer, EngineSettings settings, Clock clock,
      MigRepartitioning migRepartitioning, Reservations reservations, EnginePreemption preemption, GangRuns gangRuns,
      Admission admission, ElasticGrowth growth, SparePool spares) {
    this.state = state;
    this.spares = spares;
    this.growth = growth;
    this.cluster = state.cluster();
    this.gangPlacer = gangPlacer;
    this.settings = settings;
    this.clock = clock;
    this.migRepartitioning = migRepartitioning;
    this.reservations = reservations;
    this.preemption = preemption;
    this.gangRuns = gangRuns;
    this.admission = admission;
  }

  /** Places what it can; returns the requests that had to wait, in the order they were tried. */
  List<DemandState> run(List<DemandState> reclaimedFor, List<Decision> decisions) {
    if (noWaitingLeaves()) {
      return List.of();
    }
    List<DemandState> waiting = new ArrayList<>();
    // Capacity a reclaim freed goes to the request it was reclaimed for before anyone else can take part of it.
    for (DemandState d : reclaimedFor) {
      if (d.outstanding > 0 && !waitReasons.containsKey(d)) {
        Optional<Refusal> refused = tryPlace(d, decisions);
        if (refused.isPresent()) {
          waitReasons.put(d, refused.get());
          waiting.add(d);
        }
      }
    }
    // Each partition (node label) shares its own nodes by its own shares; the default partition first, then the
    // labels that have nodes or that the default round met in requests.
    Set<String> partitions = new java.util.TreeSet<>(cluster.labelledPartitions());
    place(Node.DEFAULT_PARTITION, partitions, waiting, decisions);
    for (String label : partitions) {
      place(label, null, waiting, decisions);
      if (cluster.lendsIdle(label)) {
        borrow(label, waiting, decisions);
      }
    }
    finish(waiting, decisions);
    return waiting;
  }

  /** Partitions whose shares this cycle computed. */
  private final Set<String> partitionsShared = new HashSet<>();

  /** Computes this cycle's shares in {@code partition}, once. */
  private void shares(String partition) {
    if (!partitionsShared.add(partition)) {
      return;
    }
    ResourceVector capacity = cluster.capacity(partition);
    Map<String, QueueShare> shares = partition.isEmpty()
        ? FairShareCalculator.compute(state.tree(), capacity, state.leafDemands(),
            FairShareCalculator.resolveLimits(state.tree(), capacity), state.usageHistory().weighting(clock.nowMillis()))
        : FairShareCalculator.compute(state.tree(), capacity, state.leafDemands(partition),
            QueueLabels.resolve(state.tree(), capacity, partition));
    for (QueueState q : state.queues()) {
      q.share(partition, shares.get(q.path()));
    }
  }

  /**
   * One container at a time in {@code partition}, each to the queue furthest below its share there, until no leaf can
   * place more. Requests of other partitions are skipped and, if {@code seen} is given, their partitions added to it.
   */
  private void place(String partition, Set<String> seen, List<DemandState> waiting, List<Decision> decisions) {
    shares(partition);
    Map<QueueState, LeafCursor> cursors = new HashMap<>();
    for (QueueState q : state.queues()) {
      q.activeLeaves = 0;
    }
    for (QueueState q : state.queues()) {
      if (q.isLeaf() && !q.waitingApps.isEmpty()) {
        cursors.put(q, new LeafCursor(q, partition, seen));
        for (QueueState p = q; p != null; p = p.parent) {
          p.activeLeaves++;
        }
      }
    }

    QueueState leaf;
    while ((leaf = pickLeaf(partition)) != null) {
      // Stay in this leaf until one container is placed: a failure changes no usage, so the walk down the tree
      // would pick the same leaf again.
      LeafCursor cursor = cursors.get(leaf);
      boolean placed = false;
      while (!placed && cursor.advance()) {
        DemandState d = cursor.demand();
        Optional<Refusal> refused = tryPlace(d, decisions);
        if (refused.isEmpty()) {
          placed = true;
          cursor.placed();
        } else {
          waitReasons.put(d, refused.get());
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
  }

  /**
   * Lends what a non-exclusive label's own requests left idle to requests of the default partition that found no
   * room, in the order they were tried (CapacityScheduler's non-exclusive labels). Such a container counts in the
   * label's partition, within the queue's maximum there; with the queue guaranteed nothing of the label (or less than
   * it holds), it is what a starved request of the label reclaims first. Gangs and MIG requests wait for their own
   * partition.
   */
  private void borrow(String label, List<DemandState> waiting, List<Decision> decisions) {
    for (DemandState d : List.copyOf(waiting)) {
      if (d.isGang() || d.shape.wantsMig() || !d.shape.partition().isEmpty()
          || waitReasons.get(d) != Refusal.NoRoom.NOW) {
        continue;
      }
      Resources there = d.shape.withPartition(label);
      Placement placement;
      while (d.outstanding > 0 && (placement = cluster.find(there)) != null
          && refusedByLimits(d.app, label, placement.charge()).isEmpty()) {
        long id = start(d, there, placement, decisions);
        preemption.started(gangRuns.started(d, List.of(id)));
      }
    }
  }

  /** Plans MIG instances for the requests that found none, and tells each waiting request why it waits. */
  private void finish(List<DemandState> waiting, List<Decision> decisions) {
    List<MigRepartitionPlanner.Need> migNeeds = new ArrayList<>();
    for (DemandState d : waiting) {
      if (waitReasons.get(d) == Refusal.NoRoom.NOW && d.shape.wantsMig()) {
        migNeeds.add(new MigRepartitionPlanner.Need(d.shape, d.outstanding));
      }
    }
    Map<Resources, String> noRoomReasons = migRepartitioning.plan(migNeeds, decisions);

    // "No room" is explained against the cluster as the cycle leaves it, so the reason is the same from one
    // cycle to the next while the situation is, and a Wait is re-announced only when something really changed.
    for (DemandState d : waiting) {
      Refusal refused = waitReasons.get(d);
      String why = refused == Refusal.NoRoom.NOW ? noRoomReasons.computeIfAbsent(d.shape, cluster::whyNotNow)
          : refused.describe();
      if (!admission.capacityJudged()) {
        Optional<Refusal> never = admission.whyNeverFits(d.app, d.shape, d.outstanding, d.spec);
        if (never.isPresent()) {
          why = "not yet placeable on the " + cluster.nodeCount() + " nodes registered so far ("
              + never.get().describe() + "); nodes are still registering, so it is judged again at "
              + java.time.Instant.ofEpochMilli(admission.capacityJudgedFromMillis())
              + " and rejected then if it still cannot fit";
        }
      }
      if (d.outstanding > 0 && !why.equals(d.reportedReason)) {
        d.reportedReason = why;
        decisions.add(new Decision.Wait(d.app.id, d.key, why));
      }
    }
  }

  private boolean noWaitingLeaves() {
    for (QueueState q : state.queues()) {
      if (!q.waitingApps.isEmpty()) {
        return false;
      }
    }
    return true;
  }

  /**
   * Walks down from the root, each time to the child furthest below its fair share in {@code partition} that can still
   * place work.
   */
  private QueueState pickLeaf(String partition) {
    if (state.root().activeLeaves == 0) {
      return null;
    }
    QueueState q = state.root();
    ResourceVector capacity = cluster.capacity(partition);
    while (!q.isLeaf()) {
      QueueState best = null;
      double bestRatio = 0;
      double bestUsage = 0;
      for (QueueState c : q.children) {
        if (c.activeLeaves == 0) {
          continue;
        }
        double usage = c.usage(partition).dominantShare(capacity);
        double fair = c.share(partition).fairShare().dominantShare(capacity);
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

  /** Places one container of {@code d}, or says why it cannot now. */
  private Optional<Refusal> tryPlace(DemandState d, List<Decision> decisions) {
    if (d.isGang()) {
      return tryPlaceGang(d, decisions);
    }
    // Under sustained load a queue sits at its maximum and thousands of waiting requests of a few shapes find room
    // but are refused: the place found for a shape holds until the next container starts.
    Placement placement = noRoom.contains(d.shape) ? null : findSinceLastStart(d.shape);
    if (placement == null) {
      noRoom.add(d.shape);
      if (d.spec.maxRuntimeMillis() > 0) {
        placement = gangPlacer.findBackfill(d.shape, clock.nowMillis() + d.spec.maxRuntimeMillis());
      }
      if (placement == null && maySpare(d)) {
        List<Placement> lent = spares.lend(d.shape, 1);
        placement = lent == null ? null : lent.get(0);
      }
    }
    if (placement == null) {
      return Optional.of(Refusal.NoRoom.NOW);
    }
    Optional<Refusal> over = refusedByLimits(d.app, d.shape.partition(), placement.charge());
    if (over.isPresent()) {
      return over;
    }
    long id = start(d, d.shape, placement, decisions);
    preemption.started(gangRuns.started(d, List.of(id)));
    return Optional.empty();
  }

  /**
   * All members of a gang in this cycle, or none. A gang that does not fit gets nodes reserved for it (while fewer
   * than the configured number of gangs hold reservations), so later, smaller requests cannot keep it waiting.
   */
  private Optional<Refusal> tryPlaceGang(DemandState d, List<Decision> decisions) {
    List<Placement> all = wholeElasticGang(d);
    if (all != null) {
      reservations.drop(d);
      List<Long> ids = new ArrayList<>(d.outstanding);
      for (Placement p : all.subList(0, d.outstanding)) {
        ids.add(start(d, d.shape, p, decisions));
      }
      GangRun core = gangRuns.started(d, ids);
      preemption.started(core);
      List<Long> above = growth.addGroup(core, all.subList(ids.size(), all.size()), decisions);
      startsThisCycle++;
      decisions.add(new Decision.Resize(d.app.id, d.key, ids.size(), all.size(), above, "started whole: the "
          + above.size() + " members above its minimum of " + ids.size() + " are the first reclaimed"));
      return Optional.empty();
    }
    long stopping = d.stopping.stream().filter(state::hasAllocation).count();
    if (d.restartNear != null && stopping > 0) {
      // Hot swap: what the survivors free is the domain's room; placed before they end, the gang would leave it.
      return Optional.of(new Refusal.RestartingInDomain(d.outstanding, (int) stopping));
    }
    // Near first even when it holds a reservation: in its domain, on its queue's hot spares, is where it belongs.
    List<Placement> members = null;
    if (d.restartNear != null) {
      List<io.spindle.core.placement.Reservation> usable = new ArrayList<>(spares.of(d.app.leaf.path()));
      if (d.reservation != null) {
        usable.add(d.reservation);
      }
      members = gangPlacer.placeNear(d.shape, d.outstanding, d.requiredDepth, d.restartNear, usable);
    }
    boolean near = members != null;
    if (members == null) {
      members = gangPlacer.place(d.shape, d.outstanding, d.requiredDepth, d.reservation);
    }
    if (members == null && d.spec.maxRuntimeMillis() > 0 && !d.spec.elastic()) {
      // Like a single container, a gang that ends before a reservation's projected start may use its nodes.
      members = gangPlacer.findBackfill(d.shape, d.outstanding, clock.nowMillis() + d.spec.maxRuntimeMillis());
    }
    if (members == null && maySpare(d) && !d.spec.elastic()) {
      members = spares.lend(d.shape, d.outstanding);
    }
    if (members == null) {
      if (d.shape.wantsMig() && cluster.migContainersPlaceable(d.shape, d.outstanding) < d.outstanding) {
        // Instances are missing, not nodes: the MIG planner makes them for the gang.
        return Optional.of(Refusal.NoRoom.NOW);
      }
      return Optional.of(reservations.reserveFor(d, decisions));
    }
    Optional<Refusal> over = overLimits(d.app, d.shape.partition(), members);
    if (over.isPresent()) {
      return over;
    }
    reservations.drop(d);
    List<Long> ids = new ArrayList<>(members.size());
    for (Placement p : members) {
      ids.add(start(d, d.shape, p, decisions));
    }
    if (near) {
      spares.taken(members);
    }
    preemption.started(gangRuns.started(d, ids));
    return Optional.empty();
  }

  /**
   * Whether {@code d} may borrow hot spares: preemptible work that declares it ends within the lending time, so a
   * gang restarting onto the spares waits for it at most that long.
   */
  private boolean maySpare(DemandState d) {
    long lend = settings.health().spareLendMillis();
    return d.spec.preemptible() && d.spec.maxRuntimeMillis() > 0 && d.spec.maxRuntimeMillis() <= lend;
  }

  /**
   * Whether {@code d} waited in this cycle for room (none free, or nodes draining or held for a gang), not for a limit
   * of its queue or user: it could use capacity that is idle, were it shaped or placed differently.
   */
  boolean waitedForRoom(DemandState d) {
    Refusal r = waitReasons.get(d);
    return r == Refusal.NoRoom.NOW || r instanceof Refusal.ReservationDraining
        || r instanceof Refusal.NoReservationSlot || r instanceof Refusal.NodesHeldForOthers
        || r instanceof Refusal.BehindHeadGang;
  }

  /**
   * Where an elastic gang goes whole, all it asks (in whole steps above its minimum), when that fits now within its
   * limits: then it starts whole, its members above the minimum reclaimable first as if it had grown at once, rather
   * than at its minimum on nodes with no room to grow. {@code null} otherwise.
   */
  private List<Placement> wholeElasticGang(DemandState d) {
    if (!d.spec.elastic() || d.growBy < d.spec.elasticity().step() || d.reservation != null
        || othersMayReclaim(d)) {
      return null;
    }
    int step = d.spec.elasticity().step();
    List<Placement> all = gangPlacer.place(d.shape, d.outstanding + d.growBy / step * step, d.requiredDepth, null);
    if (all == null) {
      return null;
    }
    return overLimits(d.app, d.shape.partition(), all).isEmpty() ? all : null;
  }

  /**
   * Whether another request of {@code d}'s partition may reclaim running work now ({@link ElasticGrowth}'s rule):
   * members above an elastic gang's minimum would then have to be given back at once, so it starts at its minimum.
   */
  private boolean othersMayReclaim(DemandState d) {
    for (AppState app : state.apps()) {
      for (DemandState x : app.demands.values()) {
        if (x != d && x.outstanding > 0 && x.shape.partition().equals(d.shape.partition())
            && preemption.mayReclaimFor(x)) {
          return true;
        }
      }
    }
    return false;
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

  /**
   * A charge to one user in one leaf and partition, refused by a limit: usage only grows while a cycle places, so it
   * stays so.
   */
  private record LimitKey(QueueState leaf, String user, String partition, ResourceVector charge) {}

  /** Charges a limit refused in this cycle, with the reason: thousands of waiting requests of a shape word it once. */
  private final Map<LimitKey, Refusal> refusedThisCycle = new HashMap<>();

  /** {@link #overLimits}, remembered for the rest of the cycle when it refuses. */
  private Optional<Refusal> refusedByLimits(AppState app, String partition, ResourceVector charge) {
    LimitKey key = new LimitKey(app.leaf, app.user, partition, charge);
    Refusal known = refusedThisCycle.get(key);
    if (known != null) {
      return Optional.of(known);
    }
    Optional<Refusal> refused = overLimits(app, partition, charge);
    refused.ifPresent(r -> refusedThisCycle.put(key, r));
    return refused;
  }

  /**
   * Whether charging {@code charge} in {@code partition} to the application would break a queue maximum or its user
   * limit there.
   */
  /** {@link #overLimits} for the members of a gang (or of an elastic gang's step) placed together. */
  Optional<Refusal> overLimits(AppState app, String partition, List<Placement> members) {
    ResourceVector total = ResourceVector.ZERO;
    for (Placement p : members) {
      total = total.plus(p.charge());
    }
    return overLimits(app, partition, total);
  }

  Optional<Refusal> overLimits(AppState app, String partition, ResourceVector charge) {
    shares(partition);
    for (QueueState q = app.leaf; q != null; q = q.parent) {
      ResourceVector used = q.usage(partition);
      ResourceVector maximum = q.share(partition).maximum();
      if (!used.plus(charge).fitsIn(maximum)) {
        return Optional.of(new Refusal.QueueAtMaximum(q.path(), used, maximum, charge));
      }
    }
    return UserLimits.exceeded(app, partition, charge);
  }

  /**
   * Commits one container of {@code d} at {@code placement} as {@code shape} (the request's, or its shape in the
   * non-exclusive partition it borrows from), announces it and returns its allocation id.
   */
  private long start(DemandState d, Resources shape, Placement placement, List<Decision> decisions) {
    startsThisCycle++;
    AppState app = d.app;
    long id = state.newAllocationId();
    long endsAt = d.spec.maxRuntimeMillis() > 0 ? clock.nowMillis() + d.spec.maxRuntimeMillis() : Long.MAX_VALUE;
    state.charge(app, new Allocation(id, app.id, d.key, shape, placement, endsAt));
    if (endsAt != Long.MAX_VALUE) {
      state.durableChange();
    }
    app.leaf.addPending(d.shape.partition(), d.unitCharge.times(-1));
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
    decisions.add(new Decision.Allocate(id, app.id, d.key, placement.nodeId(), shape, placement.gpus(),
        placement.charge()));
    return id;
  }

  /** Walks a leaf's waiting applications and their requests in order, once per cycle. */
  private final class LeafCursor {
    private final List<AppState> apps;
    private final AppOrdering ordering;
    private final boolean fair;
    private final String partition;
    private final Set<String> seen;
    private boolean reorder;
    private int appIndex;
    private List<DemandState> demands;
    private int demandIndex;

    /**
     * Walks {@code leaf}'s waiting applications in its order; under fair ordering by what each holds, afresh after
     * every placement.
     *
     * @param partition the partition whose requests it walks
     * @param seen where the partitions of the requests it skips are added; {@code null}: nowhere
     */
    LeafCursor(QueueState leaf, String partition, Set<String> seen) {
      this.apps = new ArrayList<>(leaf.waitingApps);
      this.ordering = leaf.config.ordering();
      this.fair = ordering.fair();
      this.partition = partition;
      this.seen = seen;
      this.reorder = fair;
      if (ordering.ranked()) {
        // Ranks change with time, not while a cycle places: one sort serves the whole walk.
        new LeafOrder(leaf, state.estimates(), clock.nowMillis()).sort(apps);
      }
    }

    /** A container of the current request was placed: under fair ordering the next goes to whoever holds least. */
    void placed() {
      reorder = fair;
    }

    /** Moves to the next request that still has outstanding containers and has not had to wait this cycle. */
    boolean advance() {
      if (reorder) {
        ResourceVector capacity = cluster.capacity();
        apps.sort(java.util.Comparator.<AppState>comparingDouble(a -> held(a, capacity))
            .thenComparing(AppState.ORDER));
        appIndex = 0;
        demands = null;
        reorder = false;
      }
      while (appIndex < apps.size()) {
        if (demands == null) {
          demands = new ArrayList<>(apps.get(appIndex).demands.values());
          demandIndex = 0;
        }
        while (demandIndex < demands.size()) {
          DemandState d = demands.get(demandIndex);
          if (d.outstanding > 0 && !waitReasons.containsKey(d)) {
            if (d.shape.partition().equals(partition)) {
              return true;
            }
            if (seen != null) {
              seen.add(d.shape.partition());
            }
          }
          demandIndex++;
        }
        appIndex++;
        demands = null;
      }
      return false;
    }

    /** What the application holds, as fair ordering compares it (weighted by its size under FAIR_BY_SIZE). */
    private double held(AppState a, ResourceVector capacity) {
      double share = a.usage.dominantShare(capacity);
      if (ordering != AppOrdering.FAIR_BY_SIZE) {
        return share;
      }
      long demandMb = a.usage.memoryMb();
      for (DemandState d : a.demands.values()) {
        demandMb += d.pending().memoryMb();
      }
      double weight = Math.log1p(demandMb) / Math.log(2);
      return weight > 0 ? share / weight : share;
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
}
