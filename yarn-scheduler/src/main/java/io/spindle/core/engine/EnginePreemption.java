package io.spindle.core.engine;

import io.spindle.core.engine.EngineEvent.CheckpointAnswered;
import io.spindle.core.engine.EngineEvent.CheckpointReported;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.GangPlacer;
import io.spindle.core.placement.Placement;
import io.spindle.core.placement.Reservation;
import io.spindle.core.preemption.Candidate;
import io.spindle.core.preemption.CapacityProbe;
import io.spindle.core.preemption.CheckpointHandshake;
import io.spindle.core.preemption.Need;
import io.spindle.core.preemption.Plan;
import io.spindle.core.preemption.PreemptionPlanner;
import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.preemption.QueueView;
import io.spindle.core.preemption.ReclaimLedger;
import io.spindle.core.preemption.StarvationClock;
import io.spindle.core.queue.QueuePreemption;
import java.util.ArrayList;
import java.util.Collection;
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
 * The engine's side of preemption: keeps track of what runs as which gang, turns the engine's state into the
 * planner's snapshot, carries plans out through the {@link ReclaimLedger}, and re-queues what was preempted. The
 * choices themselves are made in {@code io.spindle.core.preemption}; this class only translates, so that
 * {@link Engine} needs a few calls and no preemption logic. With preemption off every call returns at once.
 */
final class EnginePreemption {

  /** What runs as one piece: a gang's members, or one container. Mutable; ended members leave it. */
  private static final class Unit {
    /** Increases with start order; changed only by a restore, which renumbers units it did not restore. */
    long id;
    final String appId;
    final String requestKey;
    final Resources shape;
    final PlacementSpec spec;
    final ResourceVector unitCharge;
    final int requiredDepth;
    final long startMillis;
    final Set<Long> members = new LinkedHashSet<>();
    /** Members at start: a preempted gang re-queues whole. */
    int size;
    /** A victim of a reclaim in the ledger: kept even when its members are gone, until it is re-queued. */
    boolean victim;

    Unit(long id, String appId, String requestKey, Resources shape, PlacementSpec spec, ResourceVector unitCharge,
        int requiredDepth, long startMillis) {
      this.id = id;
      this.appId = appId;
      this.requestKey = requestKey;
      this.shape = shape;
      this.spec = spec;
      this.unitCharge = unitCharge;
      this.requiredDepth = requiredDepth;
      this.startMillis = startMillis;
    }
  }

  private record Checkpoint(long atMillis, String location) {}

  private final PreemptionSettings settings;
  private final Clock clock;
  private final EngineState state;
  private final ShapeCharges charges;
  private final ClusterState cluster;
  private final GangPlacer placer;
  private final ReclaimLedger ledger = new ReclaimLedger();
  private final StarvationClock starvation = new StarvationClock();
  private final Map<Long, Unit> units = new LinkedHashMap<>();
  private final Map<Long, Unit> unitOf = new HashMap<>();
  /** Recovered containers of one request form one unit: after a restart nothing says which were one gang. */
  private final Map<String, Unit> recoveredUnits = new HashMap<>();
  private final Map<String, Checkpoint> checkpoints = new LinkedHashMap<>();
  /** Where a re-queued request should resume from, by owner key. */
  private final Map<String, String> resumeFrom = new LinkedHashMap<>();
  /** The queues as of the last planning, to look up a victim's queue's extension bounds. */
  private Map<String, QueueState> queuesByPath = Map.of();
  /**
   * Counts starts, releases and checkpoint reports: with {@link #fruitless}, lets a cycle skip planning that could
   * not come out differently.
   */
  private long changes;
  /** What the last planning that found nothing saw, or {@code null}. */
  private PlanningInputs fruitless;
  private DemandState openGang;
  private Unit openGangUnit;
  private long nextUnitId = 1;
  /**
   * Counts changes to what {@link #unitStates} and its siblings export (units, the ledger, checkpoint reports,
   * resume locations, starvation), so that a driver saves the durable state only when it changed.
   */
  private long durableChanges;
  /** Units a restore rebuilt, by id: containers recovered late (a node re-registered after it) may still join. */
  private final Set<Long> restoredUnitIds = new LinkedHashSet<>();
  /** Notices restored as NOTICED, issued again in the next cycle: the driver's delivery state did not survive. */
  private final List<Long> reissueNotices = new ArrayList<>();
  /** Notices restored while their reclaim was under way: its kill may not have been carried out. */
  private final List<Long> reissueReclaims = new ArrayList<>();

  EnginePreemption(PreemptionSettings settings, Clock clock, EngineState state, ShapeCharges charges,
      GangPlacer placer) {
    this.settings = settings;
    this.clock = clock;
    this.state = state;
    this.charges = charges;
    this.cluster = state.cluster();
    this.placer = placer;
  }

  boolean enabled() {
    return settings.enabled();
  }

  // ---------------------------------------------------------------- what runs

  /**
   * A container of {@code d} started; a gang's members, started one after another, form one unit. A container that
   * is not preemptible forms none, so no plan can pick it.
   */
  void started(DemandState d, long allocationId) {
    if (!enabled() || !d.spec.preemptible()) {
      return;
    }
    Unit u;
    if (d.isGang() && d == openGang) {
      u = openGangUnit;
    } else {
      u = new Unit(nextUnitId++, d.app.id, d.key, d.shape, d.spec, d.unitCharge, d.requiredDepth, clock.nowMillis());
      units.put(u.id, u);
      openGang = d.isGang() ? d : null;
      openGangUnit = d.isGang() ? u : null;
    }
    u.members.add(allocationId);
    u.size++;
    unitOf.put(allocationId, u);
    changes++;
    durableChanges++;
  }

  void recovered(String appId, String requestKey, Resources shape, ResourceVector charge, long allocationId,
      boolean preemptible) {
    if (!enabled() || !preemptible) {
      return;
    }
    String owner = appId + "/" + requestKey;
    Unit u = recoveredUnits.get(owner);
    if (u == null || units.get(u.id) != u) {
      u = new Unit(nextUnitId++, appId, requestKey, shape, PlacementSpec.SINGLE, charge, -1, clock.nowMillis());
      units.put(u.id, u);
      recoveredUnits.put(owner, u);
    }
    u.members.add(allocationId);
    u.size++;
    unitOf.put(allocationId, u);
    durableChanges++;
  }

  /**
   * A container ended (the driver said so). {@code true}: it is a victim's, held charged until its reclaim
   * completes; {@code false}: the engine releases it now.
   */
  boolean holdsFinished(long allocationId) {
    if (enabled() && ledger.containerEnded(allocationId)) {
      durableChanges++;
      return true;
    }
    return false;
  }

  /** The engine released a container, for whatever reason. */
  void released(long allocationId) {
    if (!enabled()) {
      return;
    }
    ledger.containerGone(allocationId);
    changes++;
    durableChanges++;
    Unit u = unitOf.remove(allocationId);
    if (u != null) {
      u.members.remove(allocationId);
      if (u.members.isEmpty() && !u.victim) {
        units.remove(u.id);
      }
    }
  }

  void appFinished(String appId) {
    durableChanges++;
    checkpoints.remove(appId);
    resumeFrom.keySet().removeIf(owner -> owner.startsWith(appId + "/"));
    recoveredUnits.keySet().removeIf(owner -> owner.startsWith(appId + "/"));
  }

  // ---------------------------------------------------------------- the application's side of the handshake

  void answered(CheckpointAnswered e, List<Decision> decisions) {
    if (!enabled()) {
      return;
    }
    Optional<CheckpointHandshake> found = ledger.notice(e.noticeId());
    if (found.isEmpty()) {
      return; // Already reclaimed or withdrawn: a late answer changes nothing.
    }
    CheckpointHandshake h = found.get();
    if (!h.appId().equals(e.appId())) {
      throw new InvalidInputException("appId", e.appId(), "notice " + e.noticeId() + " was sent to " + h.appId());
    }
    CheckpointHandshake.Outcome outcome =
        h.answer(e.answer(), e.requestedExtensionMillis(), e.checkpointLocation(), clock.nowMillis());
    if (outcome != CheckpointHandshake.Outcome.IGNORED) {
      durableChanges++;
    }
    switch (outcome) {
      case GRANTED -> notice(h, null, decisions);
      case REFUSED -> notice(h, clock.nowMillis() >= h.deadlineMillis() ? "the deadline has passed"
          : "no extensions left (" + h.maxExtensions() + " granted); the deadline holds", decisions);
      default -> { }
    }
  }

  /** Issues (or re-issues) the notice as it stands; {@code refusal} says why an extension was refused. */
  private void notice(CheckpointHandshake h, String refusal, List<Decision> decisions) {
    Need n = ledger.planOf(h.noticeId()).need();
    decisions.add(new Decision.RequestCheckpoint(h.noticeId(), h.appId(), h.requestKey(), h.runningAllocationIds(),
        h.deadlineMillis(), h.extensionsGranted(), h.maxExtensions(), h.maxExtensionMillis(), refusal, n.appId(),
        n.requestKey(), h.reason()));
  }

  void reported(CheckpointReported e) {
    if (!enabled()) {
      return;
    }
    if (!state.hasApp(e.appId())) {
      throw new InvalidInputException("appId", e.appId(), "checkpoint reported by an application not running");
    }
    checkpoints.put(e.appId(), new Checkpoint(Math.min(e.lastCheckpointMillis(), clock.nowMillis()), e.location()));
    changes++; // Victim order changes with it.
    durableChanges++;
  }

  // ---------------------------------------------------------------- the cycle

  /**
   * Before placement: withdraws reclaims no longer needed, reclaims victims that answered DONE or whose deadline
   * came, and completes reclaims whose victims have all ended — their capacity is released through {@code release}
   * and their victims re-queued. Returns the requests to place first, before the walk down the queue tree, so that
   * the capacity goes where it was reclaimed for.
   */
  List<DemandState> beforePlacement(List<Decision> decisions) {
    if (!enabled() || ledger.isEmpty()) {
      reissueNotices.clear();
      reissueReclaims.clear();
      return List.of();
    }
    withdrawUnneeded(decisions);
    List<DemandState> first = new ArrayList<>();
    for (ReclaimLedger.InFlight p : ledger.plans()) {
      if (!p.withdrawn() && anyDue(p) && !stillFits(p)) {
        // Free capacity the plan counted on was taken meanwhile: killing its victims now would serve nobody.
        withdraw(p, "no longer enough: " + describe(p.need()) + " would not fit even with its victims gone",
            decisions);
      }
      if (!p.withdrawn()) {
        for (CheckpointHandshake h : p.handshakes()) {
          if (h.dueAt(clock.nowMillis())) {
            List<Long> running = h.runningAllocationIds();
            String why = h.reclaim();
            durableChanges++;
            if (why != null) {
              decisions.add(new Decision.Preempt(h.noticeId(), h.appId(), h.requestKey(), running,
                  checkpointOf(h), why + "; reclaimed for " + describe(p.need())));
            }
          }
        }
        if (p.complete()) {
          List<Long> held = new ArrayList<>(p.held());
          finish(p, decisions);
          held.forEach(state::release);
          DemandState d = demand(p.need());
          if (d != null) {
            first.add(d);
          }
        }
      } else if (ReclaimLedger.settled(p)) {
        finish(p, decisions);
      }
    }
    reissue(decisions);
    return first;
  }

  /**
   * After placement: withdraws reclaims whose request was placed meanwhile, updates how long requests and queues
   * have starved, and plans reclaims for those that starved long enough.
   *
   * @param waiting requests that could not be placed in this cycle, in the order they were tried
   * @param queues every queue, parents first, with this cycle's shares
   */
  void afterPlacement(List<DemandState> waiting, Collection<QueueState> queues, List<Decision> decisions) {
    if (!enabled()) {
      return;
    }
    long now = clock.nowMillis();
    withdrawUnneeded(decisions);
    List<String> waitingOwners = new ArrayList<>();
    Set<String> belowFair = new LinkedHashSet<>();
    ResourceVector capacity = cluster.capacity();
    for (DemandState d : waiting) {
      if (d.outstanding > 0 && d.app.demands.get(d.key) == d) {
        waitingOwners.add(d.owner());
        QueueState leaf = d.app.leaf;
        if (leaf.share != null
            && leaf.usage.dominantShare(capacity) < leaf.share.fairShare().dominantShare(capacity)) {
          belowFair.add(leaf.path());
        }
      }
    }
    if (starvation.observe(now, waitingOwners, belowFair)) {
      durableChanges++;
    }

    List<DemandState> starved = new ArrayList<>();
    Set<DemandState> seen = new LinkedHashSet<>();
    for (DemandState d : waiting) {
      if (!seen.add(d) || d.outstanding <= 0 || d.app.demands.get(d.key) != d
          || starvation.waitedMillis(d.owner(), now) < settings.starvationMillis()) {
        continue;
      }
      if (d.shape.wantsMig() && cluster.migInstancesInFlight(d.shape.migProfile()) > 0) {
        continue; // A re-partition is already making instances of its profile; it is about to fit.
      }
      starved.add(d);
    }
    if (starved.isEmpty()) {
      fruitless = null;
      return;
    }
    // What planning sees changes only when a container starts or ends, demand or nodes or reservations change, a
    // reclaim moves, or another request becomes eligible: skip it otherwise (PlanningInputs).
    PlanningInputs seenNow = planningInputs(starved, queues, now);
    if (seenNow.equals(fruitless)) {
      return;
    }
    PreemptionPlanner planner = planner(queues, now);
    int budget = settings.maxVictimsPerCycle();
    boolean firstPlan = true;
    for (DemandState d : starved) {
      boolean cross = starvation.belowMillis(d.app.leaf.path(), now) >= settings.starvationMillis()
          && planner.belowFairShare(d.app.leaf.path());
      int planned = activePlansFor(d);
      int wanted = d.isGang() ? (planned == 0 ? 1 : 0) : d.outstanding - planned;
      for (int i = 0; i < wanted && budget > 0; i++) {
        Optional<Plan> plan = planner.plan(need(d, cross), probe(d), firstPlan ? Integer.MAX_VALUE : budget);
        if (plan.isEmpty()) {
          break;
        }
        firstPlan = false;
        budget -= plan.get().victims().size();
        open(plan.get(), d, decisions);
      }
      if (budget <= 0) {
        break;
      }
    }
    fruitless = firstPlan ? seenNow : null;
  }

  private PlanningInputs planningInputs(List<DemandState> starved, Collection<QueueState> queues, long now) {
    List<PlanningInputs.QueueFigures> figures = new ArrayList<>();
    for (QueueState q : queues) {
      figures.add(new PlanningInputs.QueueFigures(q.usage, q.share));
    }
    List<PlanningInputs.Held> held = new ArrayList<>();
    for (Reservation r : cluster.reservations()) {
      held.add(new PlanningInputs.Held(r.owner(), r.nodeIds()));
    }
    List<PlanningInputs.Reclaim> reclaims = new ArrayList<>();
    for (ReclaimLedger.InFlight p : ledger.plans()) {
      reclaims.add(new PlanningInputs.Reclaim(p.id(), p.withdrawn()));
    }
    List<PlanningInputs.Starved> waiting = new ArrayList<>();
    for (DemandState d : starved) {
      waiting.add(new PlanningInputs.Starved(d.owner(), d.outstanding,
          starvation.belowMillis(d.app.leaf.path(), now) >= settings.starvationMillis()));
    }
    return new PlanningInputs(changes, now / Math.max(1_000, settings.starvationMillis()), cluster.capacity(),
        queues.iterator().next().pending, figures, held, reclaims, waiting);
  }

  /**
   * Whether a reclaim is under way for this request: its reservation is then kept past the timeout (for at most the
   * handshake's bound, grace plus extensions), or the capacity reclaimed for the gang would go to someone else.
   */
  boolean reclaimingFor(DemandState d) {
    if (!enabled()) {
      return false;
    }
    for (ReclaimLedger.InFlight p : ledger.plans()) {
      if (!p.withdrawn() && p.need().appId().equals(d.app.id) && p.need().requestKey().equals(d.key)) {
        return true;
      }
    }
    return false;
  }

  // ---------------------------------------------------------------- failover

  long durableChanges() {
    return durableChanges;
  }

  long nextNoticeId() {
    return ledger.nextNoticeId();
  }

  long nextUnitId() {
    return nextUnitId;
  }

  /** Whether this engine has issued checkpoint notices: a notice id an earlier leader issued may then be taken. */
  boolean issuedNotices() {
    return ledger.nextNoticeId() > 1;
  }

  /** Every unit, in id order; containers a reclaim holds after they ended are left to their notice. */
  List<DurableState.UnitState> unitStates(LongFunction<String> nameOf) {
    Set<Long> ended = new HashSet<>();
    for (ReclaimLedger.InFlight p : ledger.plans()) {
      for (CheckpointHandshake h : p.handshakes()) {
        ended.addAll(h.allocationIds());
        h.runningAllocationIds().forEach(ended::remove);
      }
    }
    List<DurableState.UnitState> out = new ArrayList<>();
    for (Unit u : units.values()) {
      List<String> names = new ArrayList<>();
      for (long id : u.members) {
        String name = ended.contains(id) ? null : nameOf.apply(id);
        if (name != null) {
          names.add(name);
        }
      }
      out.add(new DurableState.UnitState(u.id, u.appId, u.requestKey, u.shape, u.spec, u.startMillis, u.size, names));
    }
    return out;
  }

  List<DurableState.ReclaimState> reclaimStates(LongFunction<String> nameOf) {
    List<DurableState.ReclaimState> out = new ArrayList<>();
    for (ReclaimLedger.InFlight p : ledger.plans()) {
      List<DurableState.NoticeState> notices = new ArrayList<>();
      for (CheckpointHandshake h : p.handshakes()) {
        Set<Long> running = new HashSet<>(h.runningAllocationIds());
        List<DurableState.NoticeContainer> containers = new ArrayList<>();
        for (long id : h.allocationIds()) {
          Allocation a = state.allocation(id);
          if (a == null) {
            continue; // Ended and released: nothing of it is charged any more.
          }
          boolean ended = !running.contains(id);
          String name = nameOf.apply(id);
          if (ended || name != null) { // One the driver cannot name could not be found again.
            containers.add(new DurableState.NoticeContainer(name, a.placement().nodeId(), a.shape(),
                a.endsAtMillis(), ended));
          }
        }
        CheckpointHandshake.Saved s = h.saved();
        notices.add(new DurableState.NoticeState(s.noticeId(), s.unitId(), s.appId(), s.requestKey(), containers,
            s.noticedAtMillis(), s.deadlineMillis(), s.extensionsGranted(), s.maxExtensions(),
            s.maxExtensionMillis(), s.reason(), s.checkpointLocation(), s.state(), s.reclaimReason()));
      }
      out.add(new DurableState.ReclaimState(p.need(), p.withdrawn(), notices));
    }
    return out;
  }

  List<DurableState.CheckpointState> checkpointStates() {
    List<DurableState.CheckpointState> out = new ArrayList<>();
    checkpoints.forEach((app, c) -> out.add(new DurableState.CheckpointState(app, c.atMillis(), c.location())));
    return out;
  }

  List<DurableState.ResumeState> resumeStates() {
    List<DurableState.ResumeState> out = new ArrayList<>();
    resumeFrom.forEach((owner, location) -> {
      int slash = owner.indexOf('/');
      out.add(new DurableState.ResumeState(owner.substring(0, slash), owner.substring(slash + 1), location));
    });
    return out;
  }

  DurableState.StarvationState starvationState() {
    List<DurableState.WaitingSince> requests = new ArrayList<>();
    starvation.waitingSince().forEach((owner, since) -> {
      int slash = owner.indexOf('/');
      requests.add(new DurableState.WaitingSince(owner.substring(0, slash), owner.substring(slash + 1), since));
    });
    List<DurableState.BelowFairShareSince> queues = new ArrayList<>();
    starvation.belowSince().forEach((queue, since) -> queues.add(new DurableState.BelowFairShareSince(queue, since)));
    return new DurableState.StarvationState(requests, queues);
  }

  /** What a restore took over: units regrouped and checkpoint notices in force. */
  record Restored(int units, int notices) {}

  /**
   * Takes over what an earlier leader saved: units regrouped from the recovered containers, the reclaims in flight
   * with their handshakes as they stood, checkpoint reports, resume locations, starvation, the next notice id.
   *
   * @param recovered the allocation id a container has here, {@code null} if it was not recovered
   * @return units and notices restored
   */
  Restored restore(DurableState saved, Function<String, Long> recovered, List<String> dropped) {
    if (!enabled()) {
      if (!saved.units().isEmpty() || !saved.reclaims().isEmpty()) {
        dropped.add("preemption is off: " + saved.units().size() + " units and " + saved.reclaims().size()
            + " reclaims in flight not restored");
      }
      return new Restored(0, 0);
    }
    durableChanges++;
    Set<Long> liveVictims = new HashSet<>();
    for (DurableState.ReclaimState r : saved.reclaims()) {
      for (DurableState.NoticeState n : r.notices()) {
        if (n.state() != CheckpointHandshake.State.WITHDRAWN) {
          liveVictims.add(n.unitId());
        }
      }
    }
    Map<Long, Unit> restored = new LinkedHashMap<>();
    for (DurableState.UnitState us : saved.units()) {
      Unit u;
      try {
        u = new Unit(us.unitId(), us.appId(), us.requestKey(), us.shape(), us.spec(),
            charges.checkedUnitCharge(us.shape()), charges.requiredDepth(us.spec()), us.startMillis());
      } catch (IllegalArgumentException bad) {
        dropped.add(describe(us) + ": " + bad.getMessage());
        continue;
      }
      u.size = us.size();
      List<String> missing = new ArrayList<>();
      for (String name : us.containers()) {
        Long id = recovered.apply(name);
        String refused = id == null ? null : joinable(id, us.appId(), restored.values());
        if (id == null) {
          missing.add(name);
        } else if (refused != null) {
          dropped.add(describe(us) + ": container " + name + " " + refused);
        } else {
          move(id, u);
        }
      }
      if (!missing.isEmpty()) {
        dropped.add(describe(us) + ": containers " + missing
            + " not recovered (ended during the failover, or their node has not re-registered yet)");
      }
      if (u.members.isEmpty() && !liveVictims.contains(us.unitId())) {
        dropped.add(describe(us) + ": none of its containers was recovered");
        continue;
      }
      restored.put(u.id, u);
    }
    renumber(restored, saved.nextUnitId());
    restoredUnitIds.addAll(restored.keySet());

    int notices = 0;
    for (DurableState.ReclaimState r : saved.reclaims()) {
      notices += restore(r, restored, recovered, dropped);
    }
    ledger.skipNoticeIdsBelow(saved.nextNoticeId());

    for (DurableState.CheckpointState c : saved.checkpoints()) {
      Checkpoint mine = checkpoints.get(c.appId());
      if (!state.hasApp(c.appId())) {
        dropped.add("checkpoint report of " + c.appId() + ": application not recovered");
      } else if (mine == null || mine.atMillis() < c.atMillis()) {
        checkpoints.put(c.appId(), new Checkpoint(c.atMillis(), c.location()));
      }
    }
    for (DurableState.ResumeState r : saved.resumeFrom()) {
      if (state.hasApp(r.appId())) {
        resumeFrom.put(r.appId() + "/" + r.requestKey(), r.location());
      } else {
        dropped.add("resume location of " + r.appId() + "/" + r.requestKey() + ": application not recovered");
      }
    }
    Map<String, Long> waiting = new LinkedHashMap<>();
    for (DurableState.WaitingSince w : saved.starvation().requests()) {
      if (state.hasApp(w.appId())) {
        waiting.put(w.appId() + "/" + w.requestKey(), w.sinceMillis());
      } else {
        dropped.add("starvation of " + w.appId() + "/" + w.requestKey() + ": application not recovered");
      }
    }
    Map<String, Long> below = new LinkedHashMap<>();
    for (DurableState.BelowFairShareSince b : saved.starvation().queues()) {
      QueueState q = state.queue(b.queue());
      if (q != null && q.isLeaf()) {
        below.put(b.queue(), b.sinceMillis());
      } else {
        dropped.add("starvation of queue " + b.queue() + ": no longer a leaf queue");
      }
    }
    starvation.resume(waiting, below);
    return new Restored(restored.size(), notices);
  }

  /** One reclaim plan back into the ledger; returns how many of its notices are in force. */
  private int restore(DurableState.ReclaimState r, Map<Long, Unit> restored, Function<String, Long> recovered,
      List<String> dropped) {
    List<CheckpointHandshake> handshakes = new ArrayList<>();
    List<Candidate> victims = new ArrayList<>();
    List<Long> held = new ArrayList<>();
    int inForce = 0;
    for (DurableState.NoticeState n : r.notices()) {
      boolean live = n.state() != CheckpointHandshake.State.WITHDRAWN;
      Unit u = live ? restored.get(n.unitId()) : null;
      List<Long> all = new ArrayList<>();
      List<Long> running = new ArrayList<>();
      for (DurableState.NoticeContainer c : n.containers()) {
        Long id = c.ended() ? null : recovered.apply(c.name());
        if (id != null && (!live || unitOf.get(id) == u)) {
          all.add(id);
          running.add(id);
        } else if (id == null && live && u != null && !r.withdrawn() && state.hasApp(n.appId())) {
          // Ended (or not back): the old leader held its capacity until the reclaim completes, and so does this one.
          try {
            long ghost = holdEnded(n.appId(), n.requestKey(), c);
            all.add(ghost);
            held.add(ghost);
            u.members.add(ghost);
            unitOf.put(ghost, u);
          } catch (IllegalArgumentException gone) {
            dropped.add("notice " + n.noticeId() + ": capacity of an ended container on " + c.nodeId()
                + " not held: " + gone.getMessage());
          }
        }
      }
      CheckpointHandshake h = CheckpointHandshake.resume(new CheckpointHandshake.Saved(n.noticeId(), n.unitId(),
          n.appId(), n.requestKey(), all, running, n.noticedAtMillis(), n.deadlineMillis(), n.extensionsGranted(),
          n.maxExtensions(), n.maxExtensionMillis(), n.reason(), n.checkpointLocation(), n.state(),
          n.reclaimReason()));
      handshakes.add(h);
      if (live && u != null) {
        u.victim = true;
      }
      if (h.state() == CheckpointHandshake.State.NOTICED && !r.withdrawn()) {
        reissueNotices.add(h.noticeId());
        inForce++;
      } else if (h.state() == CheckpointHandshake.State.RECLAIM_DUE && !r.withdrawn()) {
        inForce++;
      } else if (h.state() == CheckpointHandshake.State.RECLAIMING) {
        reissueReclaims.add(h.noticeId());
      }
      victims.add(victim(n, u, all));
    }
    ledger.resume(new Plan(r.need(), victims), handshakes, held, r.withdrawn());
    return inForce;
  }

  /**
   * Charges, on its node, a stand-in for a victim's container that ended before or during the failover: the old
   * leader held such a container's capacity until its reclaim completed. Returns its allocation id.
   */
  private long holdEnded(String appId, String requestKey, DurableState.NoticeContainer c) {
    Placement placement = cluster.placeOn(c.nodeId(), c.shape());
    if (placement == null) {
      throw new InvalidInputException("nodeId", c.nodeId(), cluster.hasNode(c.nodeId())
          ? "no room for " + c.shape() + " there" : "not re-registered");
    }
    long id = state.newAllocationId();
    state.charge(state.app(appId), new Allocation(id, appId, requestKey, c.shape(), placement, c.endsAtMillis()));
    return id;
  }

  /**
   * The plan's record of a victim. Once a plan is open only a victim's containers matter (to tell whether the plan
   * still fits); the rest is filled in as it stands now.
   */
  private Candidate victim(DurableState.NoticeState n, Unit u, List<Long> containers) {
    AppState app = state.app(n.appId());
    Checkpoint c = checkpoints.get(n.appId());
    ResourceVector charge = ResourceVector.ZERO;
    for (long id : containers) {
      Allocation a = state.allocation(id);
      if (a != null) {
        charge = charge.plus(a.placement().charge());
      }
    }
    return new Candidate(n.unitId(), n.appId(), n.requestKey(), app == null ? "" : app.leaf.path(),
        app == null ? "" : app.user, app == null ? 0 : app.priority, charge,
        u == null ? n.noticedAtMillis() : u.startMillis, c == null ? Long.MIN_VALUE : c.atMillis(), containers);
  }

  /**
   * A later restore of the same state: containers recovered since (their node re-registered late) join the units
   * they ran in, if those still run here. Nothing else is taken over again. Returns the units that grew.
   */
  int regroupLate(List<DurableState.UnitState> saved, Function<String, Long> recovered, List<String> dropped) {
    if (!enabled()) {
      return 0;
    }
    int grew = 0;
    for (DurableState.UnitState us : saved) {
      Unit u = units.get(us.unitId());
      if (u == null || !restoredUnitIds.contains(u.id) || !u.appId.equals(us.appId())) {
        continue; // Ended, or re-queued after preemption: a late container does not bring it back.
      }
      boolean moved = false;
      for (String name : us.containers()) {
        Long id = recovered.apply(name);
        if (id == null || unitOf.get(id) == u) {
          continue;
        }
        Unit current = unitOf.get(id);
        if (current == null || !recoveredUnits.containsValue(current)) {
          dropped.add(describe(us) + ": container " + name + " is not a recovered container waiting for its unit");
        } else if (u.members.size() >= u.size) {
          dropped.add(describe(us) + ": container " + name + " would make the unit larger than it started");
        } else {
          move(id, u);
          moved = true;
        }
      }
      if (moved) {
        grew++;
        durableChanges++;
      }
    }
    return grew;
  }

  /** Why a recovered container cannot join a unit of {@code appId}, or {@code null}. */
  private String joinable(long id, String appId, Collection<Unit> restoredSoFar) {
    Allocation a = state.allocation(id);
    Unit current = unitOf.get(id);
    if (!a.appId().equals(appId)) {
      return "is recovered as a container of " + a.appId();
    }
    if (current == null) {
      return "is recovered as not preemptible (an application master's)";
    }
    if (restoredSoFar.contains(current)) {
      return "is in another restored unit already";
    }
    return null;
  }

  /** Moves a recovered container out of the unit recovery put it in, into {@code to}. */
  private void move(long id, Unit to) {
    Unit from = unitOf.get(id);
    if (from != null) {
      from.members.remove(id);
      if (from.members.isEmpty() && !from.victim) {
        units.remove(from.id);
      }
    }
    to.members.add(id);
    unitOf.put(id, to);
  }

  /**
   * Units in id order, restored ones with their old ids; units this engine made before the restore (containers
   * recovered that the state does not name) are renumbered after them, being the youngest.
   */
  private void renumber(Map<Long, Unit> restored, long savedNextUnitId) {
    long next = savedNextUnitId;
    for (long id : restored.keySet()) {
      next = Math.max(next, id + 1);
    }
    List<Unit> mine = new ArrayList<>(units.values());
    units.clear();
    for (Unit u : restored.values()) {
      units.put(u.id, u);
    }
    for (Unit u : mine) {
      if (!restored.containsValue(u)) {
        u.id = next++;
        units.put(u.id, u);
      }
    }
    nextUnitId = next;
    openGang = null;
    openGangUnit = null;
  }

  /**
   * The first cycle after a restore issues again the notices in force and the reclaims under way: what the driver
   * knew of them (contracts with the application masters, kills not yet carried out) did not survive the failover.
   */
  private void reissue(List<Decision> decisions) {
    for (long id : reissueNotices) {
      ledger.notice(id).filter(h -> h.state() == CheckpointHandshake.State.NOTICED
          && !ledger.planOf(id).withdrawn()).ifPresent(h -> notice(h, null, decisions));
    }
    for (long id : reissueReclaims) {
      ledger.notice(id).filter(h -> h.state() == CheckpointHandshake.State.RECLAIMING && !h.allEnded())
          .ifPresent(h -> decisions.add(new Decision.Preempt(h.noticeId(), h.appId(), h.requestKey(),
              h.runningAllocationIds(), checkpointOf(h), h.reclaimReason() + "; reclaimed for "
              + describe(ledger.planOf(id).need()) + " (ordered again by a new leader)")));
    }
    reissueNotices.clear();
    reissueReclaims.clear();
  }

  private static String describe(DurableState.UnitState us) {
    return "unit " + us.unitId() + " of " + us.appId() + "/" + us.requestKey();
  }

  // ---------------------------------------------------------------- views

  OptionalLong nextDeadlineMillis() {
    return ledger.nextDeadlineMillis();
  }

  Optional<String> resumeFrom(String appId, String requestKey) {
    return Optional.ofNullable(resumeFrom.get(appId + "/" + requestKey));
  }

  // ---------------------------------------------------------------- internals

  private void open(Plan plan, DemandState d, List<Decision> decisions) {
    ReclaimLedger.InFlight p = ledger.open(plan, clock.nowMillis(), settings.checkpointGraceMillis(),
        this::maxExtensions, this::maxExtensionMillis, v -> v.queue().equals(d.app.leaf.path())
            ? "request " + d.key + " of application " + d.app.id + " (priority " + d.app.priority
                + ") outranks this application (priority " + v.priority() + ") in queue " + v.queue()
            : "queue " + d.app.leaf.path() + " is below its fair share and its request " + d.key + " of application "
                + d.app.id + " has waited " + starvation.waitedMillis(d.owner(), clock.nowMillis()) / 1000
                + " s; queue " + v.queue() + " is above its own");
    durableChanges++;
    for (Candidate v : p.victims()) {
      units.get(v.unitId()).victim = true;
    }
    for (CheckpointHandshake h : p.handshakes()) {
      notice(h, null, decisions);
    }
  }

  /** Takes a plan out of the ledger and re-queues its victims that were preempted. */
  private void finish(ReclaimLedger.InFlight p, List<Decision> decisions) {
    if (!ledger.remove(p)) {
      return;
    }
    durableChanges++;
    for (CheckpointHandshake h : p.handshakes()) {
      Unit u = units.get(h.unitId());
      if (u == null || h.state() == CheckpointHandshake.State.WITHDRAWN) {
        // A withdrawn victim was let go when it was withdrawn; by now it may be another reclaim's victim.
        continue;
      }
      u.victim = false;
      if (h.wasReclaimed()) {
        requeue(u, checkpointOf(h), decisions);
      }
      if (u.members.isEmpty()) {
        units.remove(u.id);
      }
    }
  }

  /**
   * The preempted request waits again under its own key, a gang whole. If the application has already asked again
   * under that key (its ask replaces, as every Demand does), single containers are added to it and a gang's ask is
   * left as the application stated it.
   */
  private void requeue(Unit u, String checkpoint, List<Decision> decisions) {
    AppState app = state.app(u.appId);
    if (app == null) {
      return;
    }
    DemandState existing = app.demands.get(u.requestKey);
    DemandState d = existing;
    if (existing == null) {
      d = new DemandState(app, u.requestKey, u.shape, u.unitCharge, u.size, u.spec, u.requiredDepth);
      app.demands.put(u.requestKey, d);
      app.leaf.addPending(d.pending());
    } else if (!existing.isGang() && !u.spec.gang() && existing.shape.equals(u.shape)) {
      existing.outstanding += u.size;
      app.leaf.addPending(existing.unitCharge.times(u.size));
    }
    app.leaf.waitingApps.add(app);
    if (checkpoint != null) {
      resumeFrom.put(d.owner(), checkpoint);
    }
    d.reportedReason = "re-queued after preemption" + (checkpoint == null ? "" : "; resumes from " + checkpoint);
    decisions.add(new Decision.Wait(app.id, d.key, d.reportedReason));
  }

  /**
   * Withdraws reclaims whose request no longer waits for them: placed, shrunk, replaced or gone. A request of
   * single containers keeps its oldest reclaims, as many as it still has containers waiting.
   */
  private void withdrawUnneeded(List<Decision> decisions) {
    Map<String, Integer> kept = new HashMap<>();
    for (ReclaimLedger.InFlight p : ledger.plans()) {
      if (p.withdrawn() || p.complete()) {
        continue;
      }
      DemandState d = demand(p.need());
      boolean needed;
      if (d == null) {
        needed = false;
      } else if (p.need().gang()) {
        needed = d.isGang() && d.outstanding == p.need().containers();
      } else {
        needed = !d.isGang() && kept.merge(d.owner(), 1, Integer::sum) <= d.outstanding;
      }
      if (!needed) {
        withdraw(p, "no longer needed: " + describe(p.need()) + " started or was withdrawn", decisions);
      }
    }
  }

  /**
   * Withdraws a plan: victims not yet reclaimed keep their containers (their notices are cancelled), held
   * containers are released, and a plan with nothing left to wait for leaves the ledger.
   */
  private void withdraw(ReclaimLedger.InFlight p, String why, List<Decision> decisions) {
    durableChanges++;
    for (CheckpointHandshake h : ledger.withdraw(p)) {
      decisions.add(new Decision.CancelCheckpoint(h.noticeId(), h.appId(), h.allocationIds(), why));
      Unit u = units.get(h.unitId());
      if (u != null) {
        u.victim = false;
        if (u.members.isEmpty()) {
          units.remove(u.id);
        }
      }
    }
    p.held().forEach(state::release);
    if (ReclaimLedger.settled(p)) {
      finish(p, decisions); // Victims already reclaimed still re-queue.
    }
  }

  private boolean anyDue(ReclaimLedger.InFlight p) {
    for (CheckpointHandshake h : p.handshakes()) {
      if (h.dueAt(clock.nowMillis())) {
        return true;
      }
    }
    return false;
  }

  /** Whether the plan's request would still be placed with every one of its victims gone. */
  private boolean stillFits(ReclaimLedger.InFlight p) {
    if (demand(p.need()) == null) {
      return false;
    }
    CapacityProbe probe = probe();
    for (Candidate v : p.victims()) {
      probe.free(v);
    }
    try {
      return probe.fits(p.need());
    } finally {
      for (Candidate v : p.victims()) {
        probe.restore(v);
      }
    }
  }

  private int activePlansFor(DemandState d) {
    int n = 0;
    for (ReclaimLedger.InFlight p : ledger.plans()) {
      if (!p.withdrawn() && p.need().appId().equals(d.app.id) && p.need().requestKey().equals(d.key)) {
        n++;
      }
    }
    return n;
  }

  private DemandState demand(Need n) {
    AppState app = state.app(n.appId());
    return app == null ? null : app.demands.get(n.requestKey());
  }

  private Need need(DemandState d, boolean crossQueue) {
    int containers = d.isGang() ? d.outstanding : 1;
    AppState app = d.app;
    return new Need(app.id, d.key, app.leaf.path(), app.user, app.priority, d.unitCharge.times(containers),
        containers, d.isGang(), crossQueue, app.leaf.userUsage.getOrDefault(app.user, ResourceVector.ZERO),
        userLimit(app.leaf));
  }

  /** CapacityScheduler's user limit as a vector (see Engine#userLimitExceeded); {@code null} when there is none. */
  private static ResourceVector userLimit(QueueState leaf) {
    double factor = leaf.config.userLimitFactor();
    if (factor < 0) {
      return null;
    }
    long[] limit = new long[ResourceVector.DIMENSIONS];
    for (int i = 0; i < limit.length; i++) {
      long g = leaf.share.guarantee().get(i);
      limit[i] = g > 0 ? (long) Math.floor(g * factor + 1e-9) : Long.MAX_VALUE;
    }
    return new ResourceVector(limit[0], limit[1], limit[2]);
  }

  /**
   * The planner's snapshot. A queue's usage is projected past the reclaims in flight: their victims count as gone
   * and their beneficiaries as placed, so a second plan neither takes the same capacity twice nor pushes a queue
   * past its fair share counting on capacity another reclaim already promised.
   */
  private PreemptionPlanner planner(Collection<QueueState> queues, long now) {
    Map<String, ResourceVector> projected = new LinkedHashMap<>();
    Map<String, QueueState> byPath = new LinkedHashMap<>();
    for (QueueState q : queues) {
      projected.put(q.path(), q.usage);
      byPath.put(q.path(), q);
    }
    queuesByPath = byPath;
    for (ReclaimLedger.InFlight p : ledger.plans()) {
      for (CheckpointHandshake h : p.handshakes()) {
        if (h.state() == CheckpointHandshake.State.WITHDRAWN) {
          continue;
        }
        Unit u = units.get(h.unitId());
        AppState app = u == null ? null : state.app(u.appId);
        if (app != null) {
          addAlongPath(projected, app.leaf, charge(u).times(-1));
        }
      }
      if (!p.withdrawn()) {
        QueueState leaf = byPath.get(p.need().queue());
        if (leaf != null) {
          addAlongPath(projected, leaf, p.need().charge());
        }
      }
    }
    List<QueueView> views = new ArrayList<>();
    for (QueueState q : queues) {
      views.add(new QueueView(q.path(), q.parent == null ? null : q.parent.path(),
          q.parent != null && q.parent.children.size() > 1, q.share.fairShare(), q.share.maximum(),
          projected.get(q.path())));
    }
    Set<Long> busy = ledger.victimUnits();
    List<Candidate> candidates = new ArrayList<>();
    for (Unit u : units.values()) {
      AppState app = state.app(u.appId);
      if (app == null || u.members.isEmpty() || busy.contains(u.id)) {
        continue;
      }
      Checkpoint c = checkpoints.get(u.appId);
      candidates.add(new Candidate(u.id, u.appId, u.requestKey, app.leaf.path(), app.user, app.priority, charge(u),
          u.startMillis, c == null ? Long.MIN_VALUE : c.atMillis(), new ArrayList<>(u.members)));
    }
    ResourceVector used = queues.iterator().next().usage; // Root comes first and holds everything.
    return new PreemptionPlanner(cluster.capacity(), views, cluster.capacity().minus(used), candidates, now);
  }

  private static void addAlongPath(Map<String, ResourceVector> usage, QueueState leaf, ResourceVector delta) {
    for (QueueState q = leaf; q != null; q = q.parent) {
      usage.merge(q.path(), delta, ResourceVector::plus);
    }
  }

  private ResourceVector charge(Unit u) {
    ResourceVector sum = ResourceVector.ZERO;
    for (long id : u.members) {
      Allocation a = state.allocation(id);
      if (a != null) {
        sum = sum.plus(a.placement().charge());
      }
    }
    return sum;
  }

  /** Frees and restores victims on the real cluster state, and asks the same placement code the engine uses. */
  /** As {@link #probe()}, for {@code d}: when it holds a reservation, only victims on its reserved nodes may help. */
  private CapacityProbe probe(DemandState d) {
    CapacityProbe all = probe();
    if (d.reservation == null) {
      return all;
    }
    return new CapacityProbe() {
      @Override
      public void free(Candidate victim) {
        all.free(victim);
      }

      @Override
      public void restore(Candidate victim) {
        all.restore(victim);
      }

      @Override
      public boolean fits(Need need) {
        return all.fits(need);
      }

      @Override
      public boolean mayHelp(Candidate victim) {
        Reservation r = d.reservation;
        for (long id : victim.allocationIds()) {
          Allocation a = state.allocation(id);
          if (r == null || (a != null && r.nodeIds().contains(a.placement().nodeId()))) {
            return true;
          }
        }
        return false;
      }
    };
  }

  private CapacityProbe probe() {
    return new CapacityProbe() {
      @Override
      public void free(Candidate victim) {
        for (long id : victim.allocationIds()) {
          Allocation a = state.allocation(id);
          if (a != null) { // Ended and released already: its capacity is free anyway.
            cluster.release(a.shape(), a.placement());
          }
        }
      }

      @Override
      public void restore(Candidate victim) {
        for (long id : victim.allocationIds()) {
          Allocation a = state.allocation(id);
          if (a != null) {
            cluster.commit(a.shape(), a.placement());
          }
        }
      }

      @Override
      public boolean fits(Need need) {
        DemandState d = demand(need);
        if (d == null) {
          return false;
        }
        if (!d.isGang()) {
          return cluster.find(d.shape) != null;
        }
        List<Placement> members =
            placer.place(d.shape, d.outstanding, d.requiredDepth, d.reservation);
        if (members == null || d.reservation == null) {
          return members != null;
        }
        // A gang holding nodes is served there: its nodes only drain, so what a plan counts on cannot be taken by
        // anyone else (free capacity elsewhere can — by normal placement, or by another gang's reservation).
        for (Placement m : members) {
          if (!d.reservation.nodeIds().contains(m.nodeId())) {
            return false;
          }
        }
        return true;
      }
    };
  }

  private String checkpointOf(CheckpointHandshake h) {
    if (h.checkpointLocation() != null) {
      return h.checkpointLocation();
    }
    Checkpoint c = checkpoints.get(h.appId());
    return c == null ? null : c.location();
  }

  private int maxExtensions(String leafPath) {
    for (QueueState q = leafOf(leafPath); q != null; q = q.parent) {
      QueuePreemption p = q.config.preemption();
      if (p.maxExtensions() != null) {
        return p.maxExtensions();
      }
    }
    return settings.maxExtensions();
  }

  private long maxExtensionMillis(String leafPath) {
    for (QueueState q = leafOf(leafPath); q != null; q = q.parent) {
      QueuePreemption p = q.config.preemption();
      if (p.maxExtensionMillis() != null) {
        return p.maxExtensionMillis();
      }
    }
    return settings.maxExtensionMillis();
  }

  private QueueState leafOf(String path) {
    return queuesByPath.get(path);
  }

  private static String describe(Need n) {
    return (n.gang() ? "the gang of " + n.containers() : "a container") + " of request " + n.requestKey()
        + " of application " + n.appId() + " in queue " + n.queue();
  }
}
