package io.spindle.core.engine;

import io.spindle.core.model.AppId;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.Reservation;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * The engine's side of a failover: what it exports for a standby ({@link DurableState}, with a version that moves
 * when it changes), and taking over what an earlier leader exported. Preemption's part of both is
 * {@link EnginePreemption}'s; this class owns the reservations, backoffs and declared ends, and the order of it all.
 */
final class EngineFailover {

  private final EngineState state;
  private final ClusterState cluster;
  private final EngineSettings settings;
  private final EnginePreemption preemption;
  private final Reservations reservations;
  private boolean restored;
  /** Reservations and backoffs restored for requests; they take hold with the asks of the next cycle. */
  private final List<DurableState.ReservationState> restoredReservations = new ArrayList<>();
  private final List<DurableState.ReservationBackoff> restoredBackoffs = new ArrayList<>();

  EngineFailover(EngineState state, EngineSettings settings, EnginePreemption preemption,
      Reservations reservations) {
    this.state = state;
    this.cluster = state.cluster();
    this.settings = settings;
    this.preemption = preemption;
    this.reservations = reservations;
  }

  /**
   * What a standby needs to take over from this engine and decide as it would (see {@link DurableState}), with
   * containers named by {@code containerName} (the driver's stable name for an allocation id, {@code null} for one
   * it does not know, which is then left out). Cheap enough to call after every cycle in which
   * {@link #durableVersion} moved.
   */
  DurableState durableState(LongFunction<String> containerName) {
    List<DurableState.ReservationState> held = new ArrayList<>(restoredReservations);
    for (Reservation r : cluster.reservations()) {
      DemandState d = reservations.owning(r);
      if (d != null && d.reservation == r) {
        held.add(new DurableState.ReservationState(d.app.id, d.key, r.subtree(), r.nodeIds(),
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
    List<DurableState.AttainedState> attained = new ArrayList<>();
    for (AppState app : state.apps()) {
      // Only where something depends on it: elsewhere it would make every start and end a change to save.
      if (state.keepsHistory(app)) {
        attained.add(new DurableState.AttainedState(app.id, app.attained.settledGpuUnitMillis(),
            app.attained.settledRanMillis(), app.attained.asOfMillis(), app.attained.submittedMillis(),
            app.declaredRuntimeMillis));
      }
    }
    List<DurableState.LearnedRuntime> learned = new ArrayList<>();
    for (RuntimeEstimates.Learned l : state.estimates().export()) {
      learned.add(new DurableState.LearnedRuntime(l.user(), l.kind(), l.runMillis()));
    }
    return new DurableState(preemption.nextNoticeId(), preemption.nextUnitId(), preemption.unitStates(containerName),
        held, backoffs, preemption.reclaimStates(containerName), preemption.checkpointStates(),
        preemption.resumeStates(), preemption.starvationState(), ends, attained, learned, cordons(),
        state.failures().saved());
  }

  /**
   * Moves whenever what {@link #durableState} would return changes (and sometimes when it does not): a driver saves
   * the state only after cycles that moved it.
   */
  long durableVersion() {
    return state.durableChanges() + preemption.durableChanges() + state.estimates().changes()
        + state.failures().changes() + state.usageHistory().changes();
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
   * resume locations, starvation and the run times containers declared carry on, and so do the GPU-hours and GPU
   * failures the cluster has seen (the time since the save counted at the GPUs the old leader had).
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
  RestoreReport restore(DurableState saved, Function<String, Long> allocationIdOf) {
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
    PreemptionFailover.Restored taken = preemption.restore(saved, recovered, dropped);
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
    saved.cordons().forEach(c -> cluster.restoreCordon(c.nodeId(), c.reason()));
    state.failures().restore(saved.failures(), state.nowMillis());
    // Queues and users that left the configuration keep their meters until the window forgets them, as on the leader.
    state.usageHistory().restore(saved.usageHistory());
    // Last: what preemption takes over charges held containers again, and what was run is counted on from the save.
    restoreHistory(saved, dropped);
    restored = true;
    return new RestoreReport(taken.units(), taken.notices(), restoredReservations.size(), dropped);
  }

  private List<DurableState.CordonState> cordons() {
    List<DurableState.CordonState> out = new ArrayList<>();
    cluster.cordons().forEach((node, reason) -> out.add(new DurableState.CordonState(node, reason)));
    return out;
  }

  /** Attained service of the applications that came back, and every learned run time. */
  private void restoreHistory(DurableState saved, List<String> dropped) {
    for (AppState app : state.apps()) {
      app.attained.lostBeforeFailover(); // Until its saved service says otherwise: then it is whole again.
    }
    List<AppId> gone = new ArrayList<>();
    for (DurableState.AttainedState a : saved.attained()) {
      AppState app = state.app(a.appId());
      if (app == null) {
        gone.add(a.appId());
      } else {
        app.attained.restore(a.gpuUnitMillis(), a.ranMillis(), a.asOfMillis(), a.submittedMillis());
        app.declared(a.declaredMillis());
      }
    }
    if (!gone.isEmpty()) {
      dropped.add("attained service of " + gone + ": application not recovered");
    }
    List<RuntimeEstimates.Learned> learned = new ArrayList<>();
    for (DurableState.LearnedRuntime l : saved.learnedRuntimes()) {
      learned.add(new RuntimeEstimates.Learned(l.user(), l.kind(), l.runMillis()));
    }
    state.estimates().restore(learned);
  }

  /** Restored reservations and backoffs meet the asks: after the events of the first cycle after a restore. */
  void settleRestored() {
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
          || Reservation.gangReservations(cluster.reservations()) >= settings.maxReservations()) {
        continue; // Not asked again as it was (or it holds nodes of this leader's choosing already).
      }
      try {
        d.reservation = cluster.reserveAgain(d.ref, r.subtree(), r.nodeIds(), r.createdMillis());
        d.reservation.projectedStartMillis(reservations.projectedStart(d));
      } catch (InvalidInputException gone) {
        // A node left in this cycle's events, or another gang holds it by now: the gang reserves afresh.
      }
    }
    restoredReservations.clear();
    restoredBackoffs.clear();
  }
}
