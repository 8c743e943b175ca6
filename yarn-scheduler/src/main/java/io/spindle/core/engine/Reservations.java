package io.spindle.core.engine;

import io.spindle.core.model.NodeId;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.GangPlacer;
import io.spindle.core.placement.Reservation;
import java.util.ArrayList;
import java.util.List;

/**
 * Nodes held for gangs that do not fit yet: made when a gang cannot start (while slots are free), dropped when it
 * starts, leaves or times out (then it backs off for as long), and each given a projected start from the declared
 * run times of what runs on its nodes.
 */
final class Reservations {

  private final EngineState state;
  private final ClusterState cluster;
  private final GangPlacer placer;
  private final EngineSettings settings;
  private final Clock clock;
  private final EnginePreemption preemption;

  Reservations(EngineState state, GangPlacer placer, EngineSettings settings, Clock clock,
      EnginePreemption preemption) {
    this.state = state;
    this.cluster = state.cluster();
    this.placer = placer;
    this.settings = settings;
    this.clock = clock;
    this.preemption = preemption;
  }

  /**
   * Why the gang waits, reserving nodes for it first when it has none and a reservation slot is free (fewer than the
   * configured number of gangs hold reservations, and its backoff after a timed-out one has passed).
   */
  Refusal reserveFor(DemandState d, List<Decision> decisions) {
    String level = d.spec.required() ? "one " + d.spec.topologyLevel() : "the cluster";
    if (d.reservation != null) {
      return new Refusal.ReservationDraining(d.outstanding, d.reservation.subtree(),
          d.reservation.projectedStartMillis());
    }
    long now = clock.nowMillis();
    if (cluster.reservations().size() >= settings.maxReservations() || now < d.noReservationBeforeMillis) {
      return new Refusal.NoReservationSlot(d.outstanding, level);
    }
    Reservation r = placer.reserve(d.ref, d.shape, d.outstanding, d.requiredDepth, now);
    if (r == null) {
      return new Refusal.NodesHeldForOthers(d.outstanding, level);
    }
    d.reservation = r;
    state.durableChange();
    r.projectedStartMillis(projectedStart(r));
    decisions.add(new Decision.Reserve(d.app.id, d.key, r.subtree(), r.nodeIds(), r.projectedStartMillis()));
    return new Refusal.ReservationDraining(d.outstanding, r.subtree(), r.projectedStartMillis());
  }

  /** The last declared end of what runs on the reserved nodes: when the gang is due to fit at the latest. */
  long projectedStart(Reservation r) {
    long latest = clock.nowMillis();
    for (NodeId node : r.nodeIds()) {
      for (long id : state.onNode(node)) {
        latest = Math.max(latest, state.allocation(id).endsAtMillis());
      }
    }
    return latest;
  }

  /** Drops reservations held longer than the timeout; their gangs re-queue and may not reserve again for as long. */
  void expire(List<Decision> decisions) {
    long now = clock.nowMillis();
    for (Reservation r : new ArrayList<>(cluster.reservations())) {
      DemandState d = owning(r);
      if (d == null) {
        cluster.releaseReservation(r);
        state.durableChange();
      } else if (now - r.createdMillis() >= settings.reservationTimeoutMillis() && !preemption.reclaimingFor(d)) {
        drop(d);
        d.noReservationBeforeMillis = now + settings.reservationTimeoutMillis();
        d.reportedReason = "re-queued: reservation on " + r.subtree() + " timed out after "
            + settings.reservationTimeoutMillis() / 1000 + " s";
        decisions.add(new Decision.Wait(d.app.id, d.key, d.reportedReason));
      } else {
        r.projectedStartMillis(projectedStart(r));
      }
    }
  }

  /** The request holding the reservation, or {@code null} when its application or request is gone. */
  DemandState owning(Reservation r) {
    AppState app = state.app(r.owner().appId());
    return app == null ? null : app.demands.get(r.owner().requestKey());
  }

  /** Gives up the request's reservation, if it holds one. */
  void drop(DemandState d) {
    if (d.reservation != null) {
      cluster.releaseReservation(d.reservation);
      d.reservation = null;
      state.durableChange();
    }
  }
}
