package io.spindle.core.engine;

import io.spindle.core.model.AppId;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.RequestRef;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.Placement;
import io.spindle.core.preemption.Candidate;
import io.spindle.core.preemption.CheckpointHandshake;
import io.spindle.core.preemption.Plan;
import io.spindle.core.preemption.ReclaimLedger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * Preemption across a failover of the scheduler: exports the runs, the reclaims in flight, checkpoint reports,
 * resume locations and starvation for the durable state, and takes them over from an earlier leader — regrouping
 * the recovered containers into the runs it saved and putting its reclaims back into the ledger as they stood.
 */
final class PreemptionFailover {

  /** What a restore took over: runs regrouped and checkpoint notices in force. */
  record Restored(int units, int notices) {}

  private final EngineState state;
  private final ShapeCharges charges;
  private final ClusterState cluster;
  private final GangRuns runs;
  private final PreemptionState preemption;
  /** Runs a restore rebuilt, by id: containers recovered late (a node re-registered after it) may still join. */
  private final Set<Long> restoredRunIds = new LinkedHashSet<>();
  /** Notices restored as NOTICED, issued again in the next cycle: the driver's delivery state did not survive. */
  private final List<Long> reissueNotices = new ArrayList<>();
  /** Notices restored while their reclaim was under way: its kill may not have been carried out. */
  private final List<Long> reissueReclaims = new ArrayList<>();

  PreemptionFailover(EngineState state, ShapeCharges charges, GangRuns runs, PreemptionState preemption) {
    this.state = state;
    this.charges = charges;
    this.cluster = state.cluster();
    this.runs = runs;
    this.preemption = preemption;
  }

  // ---------------------------------------------------------------- export

  /** Every run a reclaim may pick, in id order; containers a reclaim holds after they ended are left to its notice. */
  List<DurableState.UnitState> unitStates(LongFunction<String> nameOf) {
    Set<Long> ended = new HashSet<>();
    for (ReclaimLedger.InFlight p : preemption.ledger.plans()) {
      for (CheckpointHandshake h : p.handshakes()) {
        ended.addAll(h.allocationIds());
        h.runningAllocationIds().forEach(ended::remove);
      }
    }
    List<DurableState.UnitState> out = new ArrayList<>();
    for (GangRun run : runs.all()) {
      if (!run.preemptible) {
        continue;
      }
      List<String> names = new ArrayList<>();
      for (long id : run.members) {
        String name = ended.contains(id) ? null : nameOf.apply(id);
        if (name != null) {
          names.add(name);
        }
      }
      out.add(new DurableState.UnitState(run.id, run.appId, run.requestKey, run.shape, run.spec, run.startMillis,
          run.size, names));
    }
    return out;
  }

  List<DurableState.ReclaimState> reclaimStates(LongFunction<String> nameOf) {
    List<DurableState.ReclaimState> out = new ArrayList<>();
    for (ReclaimLedger.InFlight p : preemption.ledger.plans()) {
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
    preemption.checkpoints.forEach((app, c) -> out.add(new DurableState.CheckpointState(app, c.atMillis(),
        c.location(), c.writeMillis())));
    return out;
  }

  List<DurableState.ResumeState> resumeStates() {
    List<DurableState.ResumeState> out = new ArrayList<>();
    preemption.resumeFrom.forEach((owner, location) ->
        out.add(new DurableState.ResumeState(owner.appId(), owner.requestKey(), location)));
    return out;
  }

  DurableState.StarvationState starvationState() {
    List<DurableState.WaitingSince> requests = new ArrayList<>();
    preemption.starvation.waitingSince().forEach((owner, since) ->
        requests.add(new DurableState.WaitingSince(owner.appId(), owner.requestKey(), since)));
    List<DurableState.BelowFairShareSince> queues = new ArrayList<>();
    preemption.starvation.belowSince().forEach((queue, since) ->
        queues.add(new DurableState.BelowFairShareSince(queue, since)));
    return new DurableState.StarvationState(requests, queues);
  }

  // ---------------------------------------------------------------- take-over

  /**
   * Takes over what an earlier leader saved: runs regrouped from the recovered containers, the reclaims in flight
   * with their handshakes as they stood, checkpoint reports, resume locations, starvation, the next notice id.
   *
   * @param recovered the allocation id a container has here, {@code null} if it was not recovered
   * @return runs and notices restored
   */
  Restored restore(DurableState saved, Function<String, Long> recovered, List<String> dropped) {
    preemption.durableChange();
    Set<Long> liveVictims = new HashSet<>();
    for (DurableState.ReclaimState r : saved.reclaims()) {
      for (DurableState.NoticeState n : r.notices()) {
        if (n.state() != CheckpointHandshake.State.WITHDRAWN) {
          liveVictims.add(n.unitId());
        }
      }
    }
    Map<Long, GangRun> restored = new LinkedHashMap<>();
    for (DurableState.UnitState us : saved.units()) {
      GangRun run;
      try {
        run = runs.restored(us.unitId(), us.appId(), us.requestKey(), us.shape(), us.spec(),
            charges.checkedUnitCharge(us.shape()), charges.requiredDepth(us.spec()), us.startMillis(), us.size());
      } catch (IllegalArgumentException bad) {
        dropped.add(describe(us) + ": " + bad.getMessage());
        continue;
      }
      List<String> missing = new ArrayList<>();
      for (String name : us.containers()) {
        Long id = recovered.apply(name);
        String refused = id == null ? null : joinable(id, us.appId(), restored.values());
        if (id == null) {
          missing.add(name);
        } else if (refused != null) {
          dropped.add(describe(us) + ": container " + name + " " + refused);
        } else {
          runs.move(id, run);
        }
      }
      if (!missing.isEmpty()) {
        dropped.add(describe(us) + ": containers " + missing
            + " not recovered (ended during the failover, or their node has not re-registered yet)");
      }
      if (run.members.isEmpty() && !liveVictims.contains(us.unitId())) {
        dropped.add(describe(us) + ": none of its containers was recovered");
        continue;
      }
      restored.put(run.id, run);
    }
    runs.renumber(restored, saved.nextUnitId());
    restoredRunIds.addAll(restored.keySet());

    int notices = 0;
    for (DurableState.ReclaimState r : saved.reclaims()) {
      notices += restore(r, restored, recovered, dropped);
    }
    preemption.ledger.skipNoticeIdsBelow(saved.nextNoticeId());

    for (DurableState.ResumeState r : saved.resumeFrom()) {
      if (state.hasApp(r.appId())) {
        preemption.resumeFrom.put(new RequestRef(r.appId(), r.requestKey()), r.location());
      } else {
        dropped.add("resume location of " + r.appId() + "/" + r.requestKey() + ": application not recovered");
      }
    }
    restoreStarvation(saved.starvation(), dropped);
    return new Restored(restored.size(), notices);
  }

  /**
   * The applications' checkpoint reports, with preemption on or off: the checkpoint interval advised to them is
   * computed with the write times they reported.
   */
  void restoreCheckpoints(List<DurableState.CheckpointState> saved, List<String> dropped) {
    for (DurableState.CheckpointState c : saved) {
      PreemptionState.Checkpoint mine = preemption.checkpoints.get(c.appId());
      if (!state.hasApp(c.appId())) {
        dropped.add("checkpoint report of " + c.appId() + ": application not recovered");
      } else if (mine == null || mine.atMillis() < c.atMillis()) {
        preemption.checkpoints.put(c.appId(), new PreemptionState.Checkpoint(c.atMillis(), c.location(),
            c.writeMillis().isPresent() || mine == null ? c.writeMillis() : mine.writeMillis()));
      }
    }
  }

  private void restoreStarvation(DurableState.StarvationState saved, List<String> dropped) {
    Map<RequestRef, Long> waiting = new LinkedHashMap<>();
    for (DurableState.WaitingSince w : saved.requests()) {
      if (state.hasApp(w.appId())) {
        waiting.put(new RequestRef(w.appId(), w.requestKey()), w.sinceMillis());
      } else {
        dropped.add("starvation of " + w.appId() + "/" + w.requestKey() + ": application not recovered");
      }
    }
    Map<String, Long> below = new LinkedHashMap<>();
    for (DurableState.BelowFairShareSince b : saved.queues()) {
      QueueState q = state.queue(b.queue());
      if (q != null && q.isLeaf()) {
        below.put(b.queue(), b.sinceMillis());
      } else {
        dropped.add("starvation of queue " + b.queue() + ": no longer a leaf queue");
      }
    }
    preemption.starvation.resume(waiting, below);
  }

  /** One reclaim plan back into the ledger; returns how many of its notices are in force. */
  private int restore(DurableState.ReclaimState r, Map<Long, GangRun> restored, Function<String, Long> recovered,
      List<String> dropped) {
    List<CheckpointHandshake> handshakes = new ArrayList<>();
    List<Candidate> victims = new ArrayList<>();
    List<Long> held = new ArrayList<>();
    int inForce = 0;
    for (DurableState.NoticeState n : r.notices()) {
      boolean live = n.state() != CheckpointHandshake.State.WITHDRAWN;
      GangRun run = live ? restored.get(n.unitId()) : null;
      List<Long> all = new ArrayList<>();
      List<Long> running = new ArrayList<>();
      for (DurableState.NoticeContainer c : n.containers()) {
        Long id = c.ended() ? null : recovered.apply(c.name());
        if (id != null && (!live || runs.of(id) == run)) {
          all.add(id);
          running.add(id);
        } else if (id == null && live && run != null && !r.withdrawn() && state.hasApp(n.appId())) {
          // Ended (or not back): the old leader held its capacity until the reclaim completes, and so does this one.
          try {
            long ghost = holdEnded(n.appId(), n.requestKey(), c);
            all.add(ghost);
            held.add(ghost);
            runs.join(ghost, run);
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
      if (live && run != null) {
        run.pickedAsVictim();
      }
      if (h.state() == CheckpointHandshake.State.NOTICED && !r.withdrawn()) {
        reissueNotices.add(h.noticeId());
        inForce++;
      } else if (h.state() == CheckpointHandshake.State.RECLAIM_DUE && !r.withdrawn()) {
        inForce++;
      } else if (h.state() == CheckpointHandshake.State.RECLAIMING) {
        reissueReclaims.add(h.noticeId());
      }
      victims.add(victim(n, run, all));
    }
    preemption.ledger.resume(new Plan(r.need(), victims), handshakes, held, r.withdrawn());
    return inForce;
  }

  /**
   * Charges, on its node, a stand-in for a victim's container that ended before or during the failover: the old
   * leader held such a container's capacity until its reclaim completed. Returns its allocation id.
   */
  private long holdEnded(AppId appId, String requestKey, DurableState.NoticeContainer c) {
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
  private Candidate victim(DurableState.NoticeState n, GangRun run, List<Long> containers) {
    AppState app = state.app(n.appId());
    return new Candidate(n.unitId(), n.appId(), n.requestKey(), app == null ? "" : app.leaf.path(),
        app == null ? "" : app.user, app == null ? 0 : app.priority, state.chargeOf(containers),
        run == null ? n.noticedAtMillis() : run.startMillis, preemption.lastCheckpointMillis(n.appId()), containers);
  }

  /**
   * A later restore of the same state: containers recovered since (their node re-registered late) join the runs
   * they ran in, if those still run here. Nothing else is taken over again. Returns the runs that grew.
   */
  int regroupLate(List<DurableState.UnitState> saved, Function<String, Long> recovered, List<String> dropped) {
    int grew = 0;
    for (DurableState.UnitState us : saved) {
      GangRun run = runs.get(us.unitId());
      if (run == null || !restoredRunIds.contains(run.id) || !run.appId.equals(us.appId())) {
        continue; // Ended, or re-queued after preemption: a late container does not bring it back.
      }
      boolean moved = false;
      for (String name : us.containers()) {
        Long id = recovered.apply(name);
        if (id == null || runs.of(id) == run) {
          continue;
        }
        GangRun current = runs.of(id);
        if (current == null || !runs.heldByRecovery(current)) {
          dropped.add(describe(us) + ": container " + name + " is not a recovered container waiting for its unit");
        } else if (run.members.size() >= run.size) {
          dropped.add(describe(us) + ": container " + name + " would make the unit larger than it started");
        } else {
          runs.move(id, run);
          moved = true;
        }
      }
      if (moved) {
        grew++;
        preemption.durableChange();
      }
    }
    return grew;
  }

  /** Why a recovered container cannot join a run of {@code appId}, or {@code null}. */
  private String joinable(long id, AppId appId, Collection<GangRun> restoredSoFar) {
    Allocation a = state.allocation(id);
    GangRun current = runs.of(id);
    if (!a.appId().equals(appId)) {
      return "is recovered as a container of " + a.appId();
    }
    if (current == null || !current.preemptible) {
      return "is recovered as not preemptible (an application master's)";
    }
    if (restoredSoFar.contains(current)) {
      return "is in another restored unit already";
    }
    return null;
  }

  /**
   * The first cycle after a restore issues again the notices in force and the reclaims under way: what the driver
   * knew of them (contracts with the application masters, kills not yet carried out) did not survive the failover.
   */
  void reissue(List<Decision> decisions) {
    ReclaimLedger ledger = preemption.ledger;
    for (long id : reissueNotices) {
      ledger.notice(id).filter(h -> h.state() == CheckpointHandshake.State.NOTICED
          && !ledger.planOf(id).withdrawn()).ifPresent(h -> decisions.add(preemption.notice(h, null)));
    }
    for (long id : reissueReclaims) {
      ledger.notice(id).filter(h -> h.state() == CheckpointHandshake.State.RECLAIMING && !h.allEnded())
          .ifPresent(h -> decisions.add(preemption.preempt(h, h.runningAllocationIds(), h.reclaimReason() + "; "
              + preemption.reclaimedFor(h) + " (ordered again by a new leader)")));
    }
    forgetReissues();
  }

  /** Nothing to reissue: no reclaim is in flight. */
  void forgetReissues() {
    reissueNotices.clear();
    reissueReclaims.clear();
  }

  private static String describe(DurableState.UnitState us) {
    return "unit " + us.unitId() + " of " + us.appId() + "/" + us.requestKey();
  }
}
