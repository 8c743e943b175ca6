package io.spindle.core.engine;

import io.spindle.core.engine.EngineEvent.CheckpointAnswered;
import io.spindle.core.engine.EngineEvent.CheckpointReported;
import io.spindle.core.model.AppId;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.RequestRef;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.GangPlacer;
import io.spindle.core.preemption.Candidate;
import io.spindle.core.preemption.CheckpointHandshake;
import io.spindle.core.preemption.Need;
import io.spindle.core.preemption.Plan;
import io.spindle.core.preemption.PreemptionPlanner;
import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.preemption.ReclaimLedger;
import io.spindle.core.queue.QueuePreemption;
import io.spindle.core.queue.QueueShare;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * The bridge the engine calls for preemption: it hears what starts, ends and answers, carries plans out through the
 * {@link ReclaimLedger} in each cycle, and re-queues what was preempted. The choices themselves are made in
 * {@code io.spindle.core.preemption}; the planner's snapshot is {@link PreemptionSnapshot}'s, the take-over after a
 * failover {@link PreemptionFailover}'s, and what runs as one piece is {@link GangRuns}'. With preemption off every
 * call returns at once, except that checkpoint reports are kept: the interval advised to applications needs them.
 */
final class EnginePreemption {

  private final PreemptionSettings settings;
  private final Clock clock;
  private final EngineState state;
  private final ClusterState cluster;
  private final GangRuns runs;
  private final PreemptionState preemption = new PreemptionState();
  private final ReclaimLedger ledger = preemption.ledger;
  private final PreemptionSnapshot snapshot;
  private final PreemptionFailover failover;
  /**
   * Counts starts, releases and checkpoint reports: with {@link #fruitless}, lets a cycle skip planning that could
   * not come out differently.
   */
  private long changes;
  /** What the last planning that found nothing saw, or {@code null}. */
  private PlanningInputs fruitless;
  /** When a run that planning left out for its minimum run time becomes a candidate: {@link #fruitless} ends then. */
  private long fruitlessUntil = Long.MAX_VALUE;
  /**
   * Starved requests the last planning found no plan for while some running work was too young to take, with when
   * the first of it comes of age: the status view says so ({@link #note}).
   */
  private final Map<RequestRef, Long> protectedFrom = new HashMap<>();

  EnginePreemption(PreemptionSettings settings, Clock clock, EngineState state, ShapeCharges charges,
      GangPlacer placer, GangRuns runs) {
    this.settings = settings;
    this.clock = clock;
    this.state = state;
    this.cluster = state.cluster();
    this.runs = runs;
    this.snapshot = new PreemptionSnapshot(settings, state, placer, runs, preemption);
    this.failover = new PreemptionFailover(state, charges, runs, preemption);
    preemption.targetSizeOf = unitId -> {
      GangRun run = runs.get(unitId);
      return run == null || run.core == null ? 0 : run.sizeAfterReclaims();
    };
  }

  boolean enabled() {
    return settings.enabled();
  }

  // ---------------------------------------------------------------- what runs

  /** Members of a run started; one a reclaim may pick changes what planning sees. */
  void started(GangRun run) {
    if (run != null && run.preemptible) {
      changes += run.members.size();
      preemption.durableChange();
    }
  }

  void recovered(AppId appId, String requestKey, Resources shape, ResourceVector charge,
      long allocationId, boolean preemptible) {
    if (runs.recovered(appId, requestKey, shape, charge, allocationId, preemptible)) {
      preemption.durableChange();
    }
  }

  /**
   * A container ended (the driver said so). {@code true}: it is a victim's, held charged until its reclaim
   * completes; {@code false}: the engine releases it now.
   */
  boolean holdsFinished(long allocationId) {
    if (enabled() && ledger.containerEnded(allocationId)) {
      preemption.durableChange();
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
    preemption.durableChange();
  }

  void appFinished(AppId appId) {
    preemption.durableChange();
    preemption.checkpoints.remove(appId);
    preemption.resumeFrom.keySet().removeIf(owner -> owner.appId().equals(appId));
    runs.appFinished(appId);
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
      preemption.durableChange();
    }
    switch (outcome) {
      case GRANTED -> decisions.add(preemption.notice(h, null));
      case REFUSED -> decisions.add(preemption.notice(h, clock.nowMillis() >= h.deadlineMillis()
          ? "the deadline has passed" : "no extensions left (" + h.maxExtensions() + " granted); the deadline holds"));
      default -> { }
    }
  }

  /** Kept with preemption off too: the checkpoint interval advised to the application uses its write time. */
  void reported(CheckpointReported e) {
    if (!state.hasApp(e.appId())) {
      throw new InvalidInputException("appId", e.appId(), "checkpoint reported by an application not running");
    }
    PreemptionState.Checkpoint before = preemption.checkpoints.get(e.appId());
    // A report that does not say (an older client, a write not timed) keeps the last write time that was said.
    OptionalLong write = e.writeMillis().isPresent() || before == null ? e.writeMillis() : before.writeMillis();
    preemption.checkpoints.put(e.appId(), new PreemptionState.Checkpoint(
        Math.min(e.lastCheckpointMillis(), clock.nowMillis()), e.location(), write));
    changes++; // Victim order changes with it.
    preemption.durableChange();
  }

  /** How long the application's checkpoints take to write, as it last said. */
  OptionalLong checkpointWriteMillis(AppId appId) {
    PreemptionState.Checkpoint c = preemption.checkpoints.get(appId);
    return c == null ? OptionalLong.empty() : c.writeMillis();
  }

  // ---------------------------------------------------------------- the cycle

  /**
   * Before placement: withdraws reclaims no longer needed, reclaims victims that answered DONE or whose deadline
   * came, and completes reclaims whose victims have all ended — their capacity is released and their victims
   * re-queued. Returns the requests to place first, before the walk down the queue tree, so that the capacity goes
   * where it was reclaimed for.
   */
  List<DemandState> beforePlacement(List<Decision> decisions) {
    if (!enabled() || ledger.isEmpty()) {
      failover.forgetReissues();
      return List.of();
    }
    withdrawUnneeded(decisions);
    List<DemandState> first = new ArrayList<>();
    for (ReclaimLedger.InFlight p : ledger.plans()) {
      if (!p.withdrawn() && anyDue(p) && !snapshot.stillFits(p)) {
        // Free capacity the plan counted on was taken meanwhile: killing its victims now would serve nobody.
        withdraw(p, "no longer enough: " + PreemptionState.describe(p.need())
            + " would not fit even with its victims gone", decisions);
      }
      if (!p.withdrawn()) {
        for (CheckpointHandshake h : p.handshakes()) {
          if (h.dueAt(clock.nowMillis())) {
            List<Long> running = h.runningAllocationIds();
            String why = h.reclaim();
            preemption.durableChange();
            if (why != null) {
              decisions.add(preemption.preempt(h, running, why + "; " + preemption.reclaimedFor(h)));
            }
          }
        }
        if (p.complete()) {
          List<Long> held = new ArrayList<>(p.held());
          finish(p, decisions);
          held.forEach(state::release);
          DemandState d = snapshot.demand(p.need());
          if (d != null) {
            first.add(d);
          }
        }
      } else if (ReclaimLedger.settled(p)) {
        finish(p, decisions);
      }
    }
    failover.reissue(decisions);
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
    List<RequestRef> waitingOwners = new ArrayList<>();
    Set<String> belowFair = new LinkedHashSet<>();
    for (DemandState d : waiting) {
      if (d.outstanding > 0 && d.app.demands.get(d.key) == d) {
        waitingOwners.add(d.ref);
        QueueState leaf = d.app.leaf;
        String partition = d.shape.partition();
        ResourceVector capacity = cluster.capacity(partition);
        QueueShare share = leaf.share(partition);
        if (share != null
            && leaf.usage(partition).dominantShare(capacity) < share.fairShare().dominantShare(capacity)) {
          belowFair.add(leaf.path());
        }
      }
    }
    if (preemption.starvation.observe(now, waitingOwners, belowFair)) {
      preemption.durableChange();
    }

    List<DemandState> starved = new ArrayList<>();
    Set<DemandState> seen = new LinkedHashSet<>();
    for (DemandState d : waiting) {
      if (!seen.add(d) || d.outstanding <= 0 || d.app.demands.get(d.key) != d
          || preemption.starvation.waitedMillis(d.ref, now) < snapshot.delayMillis(d)) {
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
    PlanningInputs seenNow = snapshot.inputs(changes, starved, queues, now);
    if (seenNow.equals(fruitless) && now < fruitlessUntil) {
      return;
    }
    snapshot.resetProtection();
    protectedFrom.clear();
    // Each partition's requests are planned against its own nodes, shares and runs.
    Map<String, PreemptionPlanner> planners = new HashMap<>();
    int budget = settings.maxVictimsPerCycle();
    boolean firstPlan = true;
    for (DemandState d : starved) {
      String partition = d.shape.partition();
      if (state.root().share(partition) == null) {
        continue; // No cycle has shared its partition yet.
      }
      PreemptionPlanner planner = planners.computeIfAbsent(partition, p -> snapshot.planner(queues, now, p));
      boolean cross = snapshot.starvedQueue(d, now) && planner.belowFairShare(d.app.leaf.path());
      int planned = activePlansFor(d);
      int wanted = d.isGang() ? (planned == 0 ? 1 : 0) : d.outstanding - planned;
      for (int i = 0; i < wanted && budget > 0; i++) {
        Need need = snapshot.need(d, cross, now);
        Optional<Plan> plan = planner.plan(need, snapshot.probe(d), firstPlan ? Integer.MAX_VALUE : budget);
        if (plan.isEmpty() && d.isGang() && d.reservation != null) {
          plan = elsewhere(planner, need, d, firstPlan ? Integer.MAX_VALUE : budget);
        }
        if (plan.isEmpty()) {
          if (snapshot.protectedUntilMillis() != Long.MAX_VALUE) {
            protectedFrom.put(d.ref, snapshot.protectedUntilMillis());
          }
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
    fruitlessUntil = snapshot.protectedUntilMillis();
  }

  /**
   * What preemption is waiting for on behalf of {@code d}, for the status view and {@code why}: its queue's preemption
   * delay, or running work too young to take; {@code null} when neither holds it back. Shown, not announced in a
   * {@code Wait}: the time left changes every cycle.
   */
  String note(DemandState d) {
    if (!enabled() || d.outstanding <= 0 || !preemption.starvation.waitingSince().containsKey(d.ref)) {
      return null;
    }
    long now = clock.nowMillis();
    long delay = snapshot.delayMillis(d);
    Long since = preemption.starvation.waitingSince().get(d.ref);
    if (now - since < delay) {
      return "nothing is preempted for it before " + java.time.Instant.ofEpochMilli(since + delay) + " (queue "
          + d.app.leaf.path() + " waits " + delay / 1000 + " s for capacity to free by itself)";
    }
    Long until = protectedFrom.get(d.ref);
    if (until != null && until > now) {
      return "no running work can be preempted for it now; work that has run less than its queue's minimum run time"
          + " before preemption is protected, the first until " + java.time.Instant.ofEpochMilli(until);
    }
    return null;
  }

  /**
   * A plan for a starved gang whose reserved nodes no plan can free (nothing there may be taken for it), on other
   * nodes: the reservation moves to where the plan's victims free room, so what the plan counts on is held for the
   * gang while the victims checkpoint. Without it such a gang waited for its reservation to time out and land, by
   * chance, on nodes with eligible work (the preemption property test's stable workloads found gangs starved for an
   * hour that way).
   */
  private Optional<Plan> elsewhere(PreemptionPlanner planner, Need need, DemandState d, int budget) {
    Optional<Plan> plan = planner.plan(need, snapshot.probeAnywhere(d), budget);
    if (plan.isEmpty()) {
      return plan;
    }
    List<NodeId> nodes = snapshot.nodesFreedBy(d, plan.get().victims());
    return !nodes.isEmpty() && reservationMover.test(d, nodes) ? plan : Optional.empty();
  }

  /** Moves a gang's reservation to exactly the given nodes; false, with nothing changed, when it cannot. */
  private java.util.function.BiPredicate<DemandState, List<NodeId>> reservationMover = (d, nodes) -> false;

  void reservationsMoveWith(java.util.function.BiPredicate<DemandState, List<NodeId>> mover) {
    this.reservationMover = mover;
  }

  /** Whether a reclaim is under way: elastic gangs do not grow meanwhile, into capacity it may be counting on. */
  boolean reclaiming() {
    if (!enabled()) {
      return false;
    }
    for (ReclaimLedger.InFlight p : ledger.plans()) {
      if (!p.withdrawn()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether {@code d}, waiting for room, may reclaim running work now (it has starved long enough): an elastic gang
   * that grew into its partition now would have to give the members back at once. With preemption off nothing is
   * ever given back, so any request that waits for room holds growth.
   */
  boolean mayReclaimFor(DemandState d) {
    return !enabled() || preemption.starvation.waitedMillis(d.ref, clock.nowMillis()) >= snapshot.delayMillis(d);
  }

  /**
   * Whether a reclaim is under way for this request: its reservation is then kept past the timeout (for at most the
   * handshake's bound, grace plus extensions), or the capacity reclaimed for the gang would go to someone else.
   */
  boolean reclaimingFor(DemandState d) {
    return enabled() && activePlansFor(d) > 0;
  }

  // ---------------------------------------------------------------- failover

  long durableChanges() {
    return preemption.durableChanges();
  }

  long nextNoticeId() {
    return ledger.nextNoticeId();
  }

  long nextUnitId() {
    return runs.nextId();
  }

  /** Whether this engine has issued checkpoint notices: a notice id an earlier leader issued may then be taken. */
  boolean issuedNotices() {
    return ledger.nextNoticeId() > 1;
  }

  List<DurableState.UnitState> unitStates(LongFunction<String> nameOf) {
    return failover.unitStates(nameOf);
  }

  List<DurableState.ReclaimState> reclaimStates(LongFunction<String> nameOf) {
    return failover.reclaimStates(nameOf);
  }

  List<DurableState.CheckpointState> checkpointStates() {
    return failover.checkpointStates();
  }

  List<DurableState.ResumeState> resumeStates() {
    return failover.resumeStates();
  }

  DurableState.StarvationState starvationState() {
    return failover.starvationState();
  }

  /** Takes over what an earlier leader saved (see {@link PreemptionFailover#restore}). */
  PreemptionFailover.Restored restore(DurableState saved, Function<String, Long> recovered, List<String> dropped) {
    failover.restoreCheckpoints(saved.checkpoints(), dropped);
    if (!enabled()) {
      if (!saved.units().isEmpty() || !saved.reclaims().isEmpty()) {
        dropped.add("preemption is off: " + saved.units().size() + " units and " + saved.reclaims().size()
            + " reclaims in flight not restored");
      }
      return new PreemptionFailover.Restored(0, 0);
    }
    return failover.restore(saved, recovered, dropped);
  }

  /** Containers recovered since a restore join the runs they ran in (see {@link PreemptionFailover#regroupLate}). */
  int regroupLate(List<DurableState.UnitState> saved, Function<String, Long> recovered, List<String> dropped) {
    return enabled() ? failover.regroupLate(saved, recovered, dropped) : 0;
  }

  /** Why a victim of the need's own queue is taken: a lower priority, or a later place in the queue's ordering. */
  private static String sameQueueReason(io.spindle.core.preemption.Need need, DemandState d, Candidate v) {
    String who = "request " + d.key + " of application " + d.app.id;
    if (v.elastic() && v.priority() >= need.priority()) {
      // Not outranked: what an elastic gang grew by into idle capacity goes back to anyone of its queue who waits.
      return "it grew into capacity that was idle; " + who + " (priority " + d.app.priority + ") waits for it in queue "
          + v.queue();
    }
    if (v.priority() < need.priority() || !need.reorders() || v.rank() <= need.rank()) {
      return who + " (priority " + d.app.priority + ") outranks this application (priority " + v.priority()
          + ") in queue " + v.queue();
    }
    if (need.rank() == io.spindle.core.preemption.Need.AGED) {
      return who + " has waited its queue's starvation bound of "
          + d.app.leaf.config.orderingRules().maxWaitMillis() / 1000 + " s in queue " + v.queue()
          + " and takes back what was submitted after it";
    }
    return switch (d.app.leaf.config.ordering()) {
      case LEAST_ATTAINED -> who + " has attained less GPU service (level " + need.rank() + ", this application "
          + v.rank() + ") in queue " + v.queue() + ", ordered least-attained";
      default -> who + " has less run time left (" + need.rank() / 1000 + " s, this application "
          + (v.rank() == LeafOrder.UNKNOWN ? "unknown" : v.rank() / 1000 + " s") + ") in queue " + v.queue()
          + ", ordered shortest-first";
    };
  }

  // ---------------------------------------------------------------- views

  OptionalLong nextDeadlineMillis() {
    return ledger.nextDeadlineMillis();
  }

  Optional<String> resumeFrom(AppId appId, String requestKey) {
    return Optional.ofNullable(preemption.resumeFrom.get(new RequestRef(appId, requestKey)));
  }

  // ---------------------------------------------------------------- carrying plans out

  private void open(Plan plan, DemandState d, List<Decision> decisions) {
    ReclaimLedger.InFlight p = ledger.open(plan, clock.nowMillis(), settings.checkpointGraceMillis(),
        this::maxExtensions, this::maxExtensionMillis, v -> v.queue().equals(d.app.leaf.path())
            ? sameQueueReason(plan.need(), d, v)
            : "queue " + d.app.leaf.path() + " is below its fair share and its request " + d.key + " of application "
                + d.app.id + " has waited " + preemption.starvation.waitedMillis(d.ref, clock.nowMillis()) / 1000
                + " s; queue " + v.queue() + " is above its own");
    preemption.durableChange();
    for (Candidate v : p.victims()) {
      runs.get(v.unitId()).pickedAsVictim();
    }
    for (CheckpointHandshake h : p.handshakes()) {
      decisions.add(preemption.notice(h, null));
    }
  }

  /** Takes a plan out of the ledger and re-queues its victims that were preempted. */
  private void finish(ReclaimLedger.InFlight p, List<Decision> decisions) {
    if (!ledger.remove(p)) {
      return;
    }
    preemption.durableChange();
    for (CheckpointHandshake h : p.handshakes()) {
      GangRun run = runs.get(h.unitId());
      if (run == null || h.state() == CheckpointHandshake.State.WITHDRAWN) {
        // A withdrawn victim was let go when it was withdrawn; by now it may be another reclaim's victim.
        continue;
      }
      if (h.wasReclaimed()) {
        requeue(run, preemption.checkpointOf(h), decisions);
      }
      runs.letGo(run);
    }
  }

  /**
   * The preempted request waits again under its own key, a gang whole. If the application has already asked again
   * under that key (its ask replaces, as every Demand does), single containers are added to it and a gang's ask is
   * left as the application stated it.
   */
  private void requeue(GangRun run, String checkpoint, List<Decision> decisions) {
    AppState app = state.app(run.appId);
    if (app == null) {
      return;
    }
    if (run.core != null) {
      shrunk(run, app, checkpoint, decisions);
      return;
    }
    DemandState existing = app.demands.get(run.requestKey);
    DemandState d = existing;
    if (existing == null) {
      d = DemandState.asked(app, run.requestKey, run.shape, run.unitCharge, run.elasticCore() ? run.asked() : run.size,
          run.spec, run.requiredDepth);
      app.demands.put(run.requestKey, d);
      app.leaf.addPending(d.shape.partition(), d.pending());
    } else if (!existing.isGang() && !run.spec.gang() && existing.shape.equals(run.shape)) {
      existing.outstanding += run.size;
      app.leaf.addPending(existing.shape.partition(), existing.unitCharge.times(run.size));
    }
    app.leaf.waitingApps.add(app);
    if (checkpoint != null) {
      preemption.resumeFrom.put(d.ref, checkpoint);
    }
    d.reportedReason = "re-queued after preemption" + (checkpoint == null ? "" : "; resumes from " + checkpoint);
    decisions.add(new Decision.Wait(app.id, d.key, d.reportedReason));
  }

  /**
   * Members an elastic gang grew by were reclaimed: the gang runs on, smaller, and asks for them again as growth,
   * which comes back when capacity is idle again.
   */
  private void shrunk(GangRun grown, AppState app, String checkpoint, List<Decision> decisions) {
    GangRun core = grown.core;
    if (core.members.isEmpty() || core.phase() == GangRun.Phase.RESTARTING) {
      return; // The gang stopped meanwhile; it waits again whole, growth included.
    }
    core.wanted += grown.size;
    if (checkpoint != null) {
      preemption.resumeFrom.put(new RequestRef(app.id, grown.requestKey), checkpoint);
    }
    grown.givenBack = true;
    int after = core.sizeKept(); // Its members may be released before or after this.
    decisions.add(new Decision.Resize(app.id, grown.requestKey, after + grown.size, after,
        List.copyOf(grown.members), "shrank by " + grown.size + " through a resize notice"
            + (checkpoint == null ? "" : " (checkpoint " + checkpoint + ")") + "; grows again when capacity is idle"));
  }

  /**
   * Withdraws reclaims whose request no longer waits for them: placed, shrunk, replaced or gone. A request of
   * single containers keeps its oldest reclaims, as many as it still has containers waiting.
   */
  private void withdrawUnneeded(List<Decision> decisions) {
    Map<RequestRef, Integer> kept = new HashMap<>();
    for (ReclaimLedger.InFlight p : ledger.plans()) {
      if (p.withdrawn() || p.complete()) {
        continue;
      }
      DemandState d = snapshot.demand(p.need());
      boolean needed;
      if (d == null) {
        needed = false;
      } else if (p.need().gang()) {
        needed = d.isGang() && d.outstanding == p.need().containers();
      } else {
        needed = !d.isGang() && kept.merge(d.ref, 1, Integer::sum) <= d.outstanding;
      }
      if (!needed) {
        withdraw(p, "no longer needed: " + PreemptionState.describe(p.need()) + " started or was withdrawn",
            decisions);
      }
    }
  }

  /**
   * Withdraws a plan: victims not yet reclaimed keep their containers (their notices are cancelled), held
   * containers are released, and a plan with nothing left to wait for leaves the ledger.
   */
  private void withdraw(ReclaimLedger.InFlight p, String why, List<Decision> decisions) {
    preemption.durableChange();
    for (CheckpointHandshake h : ledger.withdraw(p)) {
      decisions.add(new Decision.CancelCheckpoint(h.noticeId(), h.appId(), h.allocationIds(), why));
      GangRun run = runs.get(h.unitId());
      if (run != null) {
        runs.letGo(run);
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

  private int activePlansFor(DemandState d) {
    int n = 0;
    for (ReclaimLedger.InFlight p : ledger.plans()) {
      if (!p.withdrawn() && p.need().appId().equals(d.app.id) && p.need().requestKey().equals(d.key)) {
        n++;
      }
    }
    return n;
  }

  private int maxExtensions(String leafPath) {
    for (QueueState q = state.queue(leafPath); q != null; q = q.parent) {
      QueuePreemption p = q.config.preemption();
      if (p.maxExtensions() != null) {
        return p.maxExtensions();
      }
    }
    return settings.maxExtensions();
  }

  private long maxExtensionMillis(String leafPath) {
    for (QueueState q = state.queue(leafPath); q != null; q = q.parent) {
      QueuePreemption p = q.config.preemption();
      if (p.maxExtensionMillis() != null) {
        return p.maxExtensionMillis();
      }
    }
    return settings.maxExtensionMillis();
  }
}
