package io.spindle.core.engine;

import io.spindle.core.model.NodeId;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.GangPlacer;
import io.spindle.core.placement.Reservation;
import io.spindle.core.placement.RunningWork;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Nodes held for gangs that do not fit yet: made when a gang cannot start (while slots are free), on the nodes
 * expected to hold it soonest; dropped when it starts, leaves, or its lifetime ends (then it backs off for the
 * timeout). A reservation lives as long as its nodes are expected to take to drain for the gang (its projected
 * start, {@link ReservationLifetime}), and is re-planned when that estimate changes: its projected start and deadline
 * follow what runs on its nodes each cycle, and when work ended somewhere it moves to other nodes that are expected to
 * hold the gang sooner.
 *
 * <p>Every estimate comes from {@link ExpectedEnd}: declared run times, else run times learned from finished work of
 * the same kind. When a learned estimate changes, reservations are re-planned as when work ends early. Nothing new is
 * kept for a failover: the deadline is derived from the reservation's creation time (kept), the allocations' declared
 * ends (kept) and the learned run times (kept).
 */
final class Reservations {

  private final EngineState state;
  private final ClusterState cluster;
  private final GangPlacer placer;
  private final EngineSettings settings;
  private final Clock clock;
  private final EnginePreemption preemption;
  private final ExpectedEnd expectedEnd;
  private final ReservationLifetime lifetime;
  /** Each leaf's head gang ({@link #headGangOf}), found at most once a cycle unless it starts. */
  private final Map<QueueState, DemandState> heads = new java.util.IdentityHashMap<>();
  /** Reservations given up, which leaves their nodes to be planned again (see {@link #planVersion}). */
  private long released;

  Reservations(EngineState state, GangPlacer placer, EngineSettings settings, Clock clock,
      EnginePreemption preemption, ExpectedEnd expectedEnd) {
    this.state = state;
    this.cluster = state.cluster();
    this.placer = placer;
    this.settings = settings;
    this.clock = clock;
    this.preemption = preemption;
    this.expectedEnd = expectedEnd;
    this.lifetime = ReservationLifetime.of(settings);
  }

  /**
   * Why the gang waits, reserving nodes for it first when it has none and a reservation slot is free (fewer than the
   * configured number of gangs hold reservations, and its backoff after a dropped one has passed). A gang that holds
   * a reservation re-plans it here when what planning sees changed: at its turn in the placement pass, so that older
   * gangs (earlier in their queue) get the first pick of nodes that drain sooner, before younger ones reserve them.
   */
  Refusal reserveFor(DemandState d, List<Decision> decisions) {
    String level = d.spec.required() ? "one " + d.spec.topologyLevel() : "the cluster";
    if (d.reservation != null) {
      if (d.reservationPlannedAt != planVersion() && !preemption.reclaimingFor(d)) {
        replan(d, decisions);
      }
      return new Refusal.ReservationDraining(d.outstanding, d.reservation.subtree(),
          d.reservation.projectedStartMillis());
    }
    long now = clock.nowMillis();
    if (Reservation.gangReservations(cluster.reservations()) >= settings.maxReservations()
        || now < d.noReservationBeforeMillis) {
      return new Refusal.NoReservationSlot(d.outstanding, level);
    }
    Reservation r = placer.reserve(d.ref, d.shape, d.outstanding, d.requiredDepth, now, work());
    if (r == null) {
      return new Refusal.NodesHeldForOthers(d.outstanding, level);
    }
    if (!headGangOf(d.app.leaf, d) && placer.fitsAtMillis(r, d.shape, d.outstanding, work(ExpectedEnd.DECLARED))
        == Long.MAX_VALUE) {
      cluster.releaseReservation(r);
      return new Refusal.BehindHeadGang(d.outstanding, level);
    }
    d.reservation = r;
    d.reservationPlannedAt = planVersion();
    state.durableChange();
    r.projectedStartMillis(projectedStart(d));
    decisions.add(new Decision.Reserve(d.app.id, d.key, r.subtree(), r.nodeIds(), r.projectedStartMillis()));
    return new Refusal.ReservationDraining(d.outstanding, r.subtree(), r.projectedStartMillis());
  }

  /**
   * When the gang is due to fit on its reserved nodes (not before now): once the containers there expected to end
   * first have left room for it; {@code Long.MAX_VALUE} when one that declared no run time must end first.
   */
  long projectedStart(DemandState d) {
    return Math.max(clock.nowMillis(), fitsAt(d, d.reservation));
  }

  private long fitsAt(DemandState d, Reservation r) {
    return placer.fitsAtMillis(r, d.shape, d.outstanding, work());
  }

  /**
   * Drops reservations whose lifetime has ended (their gangs re-queue and may not reserve again for the timeout),
   * and brings the others' projected starts up to date with what runs on their nodes.
   */
  void expire(List<Decision> decisions) {
    heads.clear(); // A new cycle: arrivals and ranks may have changed which gang each queue serves first.
    long now = clock.nowMillis();
    for (Reservation r : new ArrayList<>(cluster.reservations())) {
      if (r.spare()) {
        continue; // Hot spares have no gang and no lifetime (SparePool).
      }
      DemandState d = owning(r);
      if (d == null) {
        cluster.releaseReservation(r);
        released++;
        state.durableChange();
        continue;
      }
      if (preemption.reclaimingFor(d)) {
        r.projectedStartMillis(projectedStart(d)); // Kept, and where it is: the reclaim frees these nodes.
        continue;
      }
      long fits = fitsAt(d, r);
      long due = dueMillis(r, fits);
      long deadline = lifetime.deadlineMillis(r.createdMillis(), due);
      if (now >= deadline) {
        drop(d);
        d.noReservationBeforeMillis = now + settings.reservationTimeoutMillis();
        d.reportedReason = "re-queued: reservation on " + r.subtree() + " " + whyDropped(r, due, deadline);
        decisions.add(new Decision.Wait(d.app.id, d.key, d.reportedReason));
        continue;
      }
      if (fits != Long.MIN_VALUE) { // Else its nodes hold it now: it starts in this cycle, with the start it had.
        r.projectedStartMillis(Math.max(now, fits));
      }
    }
  }

  /**
   * Changes whenever a node may have come to drain sooner than a reservation was planned for: a container ended (or
   * its declared end changed), a run time was learned (where drains are planned with them), or a reservation was
   * given up. Where nothing changed a re-plan would choose the same.
   */
  private long planVersion() {
    return state.drainChanges() + (expectedEnd == ExpectedEnd.DECLARED ? 0 : state.estimates().changes()) + released;
  }

  /**
   * When the gang was due on its nodes, for its deadline: {@code fits}, or once its nodes hold it (then {@code fits}
   * is {@code Long.MIN_VALUE}), the projected start it had until then — so a reservation whose drain came as expected
   * is not dropped at that very moment (before its gang's turn in the cycle), yet one whose gang still cannot start
   * (a queue limit) is dropped a margin later.
   */
  private static long dueMillis(Reservation r, long fits) {
    return fits == Long.MIN_VALUE ? r.projectedStartMillis() : fits;
  }

  private String whyDropped(Reservation r, long fits, long deadline) {
    if (!lifetime.extended(r.createdMillis(), deadline)) {
      return "timed out after " + settings.reservationTimeoutMillis() / 1000 + " s";
    }
    String held = "held " + (deadline - r.createdMillis()) / 1000 + " s";
    String expected = "its nodes were expected to hold the gang by " + Instant.ofEpochMilli(fits);
    return deadline - r.createdMillis() >= settings.reservationMaxDrainMillis()
        ? held + ", the most a reservation waits for a drain (" + expected + ")"
        : held + ": " + expected;
  }

  /**
   * Moves the gang's reservation to nodes expected to hold it at least a margin sooner, if any (a move is a new
   * {@code Reserve}); one whose nodes are about to hold the gang stays.
   */
  private void replan(DemandState d, List<Decision> decisions) {
    d.reservationPlannedAt = planVersion();
    Reservation r = d.reservation;
    long fits = fitsAt(d, r);
    if (fits != Long.MAX_VALUE && fits - clock.nowMillis() <= ReservationLifetime.DEFAULT_MARGIN_MILLIS) {
      return;
    }
    Reservation moved = placer.replan(r, d.shape, d.outstanding, d.requiredDepth, work(),
        ReservationLifetime.DEFAULT_MARGIN_MILLIS);
    if (moved != r) {
      d.reservation = moved;
      state.durableChange();
      moved.projectedStartMillis(projectedStart(d));
      decisions.add(new Decision.Reserve(d.app.id, d.key, moved.subtree(), moved.nodeIds(),
          moved.projectedStartMillis()));
    }
  }

  /** When the reservation that is due first must be dropped (a driver that runs cycles only on events wakes then). */
  OptionalLong nextDeadlineMillis() {
    long next = Long.MAX_VALUE;
    for (Reservation r : cluster.reservations()) {
      DemandState d = owning(r);
      if (d != null && d.reservation == r) {
        next = Math.min(next, lifetime.deadlineMillis(r.createdMillis(), dueMillis(r, fitsAt(d, r))));
      }
    }
    return next == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(next);
  }

  /**
   * Whether {@code d} is the gang its leaf serves first among those waiting. Only that gang may hold a reservation
   * whose drain no declared run time bounds: such a reservation idles every GPU that frees on its nodes until the gang
   * fits (nothing may backfill a drain of unknown length), and it only pays where it protects the gang that the queue
   * would serve next from smaller work overtaking it for ever. When every waiting gang of an overloaded queue held one,
   * a quarter of a VC's nodes idled on guesses and every wait grew, the longest too (benchmarks.md). Where declared
   * run times bound the drain, work that ends in time backfills the nodes, so any gang may reserve.
   */
  private boolean headGangOf(QueueState leaf, DemandState d) {
    DemandState head = heads.get(leaf);
    if (head == null || head.outstanding == 0 || head.app.demands.get(head.key) != head) {
      head = headGang(leaf); // None found yet this cycle, or the one found has started since.
      heads.put(leaf, head);
    }
    return head == d;
  }

  private DemandState headGang(QueueState leaf) {
    List<AppState> withGangs = new ArrayList<>();
    for (AppState app : leaf.waitingApps) {
      DemandState gang = gangOf(app);
      if (gang != null) {
        if (!leaf.ranked()) {
          return gang; // Unranked, waitingApps is in the leaf's order (priority, then age).
        }
        withGangs.add(app);
      }
    }
    AppState first = new LeafOrder(leaf, state.estimates(), clock.nowMillis()).first(withGangs);
    return first == null ? null : gangOf(first);
  }

  /** The application's first waiting gang request, or {@code null}. */
  private static DemandState gangOf(AppState app) {
    for (DemandState x : app.demands.values()) {
      if (x.isGang() && x.outstanding > 0) {
        return x;
      }
    }
    return null;
  }

  /** What runs on each node and when it is expected to end, as {@link ExpectedEnd} says. */
  private RunningWork work() {
    return work(expectedEnd);
  }

  private RunningWork work(ExpectedEnd expectedEnd) {
    return node -> {
      List<Long> ids = state.onNode(node);
      List<RunningWork.Running> out = new ArrayList<>(ids.size());
      for (long id : ids) {
        Allocation a = state.allocation(id);
        out.add(new RunningWork.Running(a.shape(), a.placement(), expectedEnd.of(a)));
      }
      return out;
    };
  }

  /** The request holding the reservation, or {@code null} when its application or request is gone. */
  DemandState owning(Reservation r) {
    AppState app = state.app(r.owner().appId());
    return app == null ? null : app.demands.get(r.owner().requestKey());
  }

  /**
   * Moves the gang's reservation to exactly {@code nodes}, where a reclaim is about to free room for it, keeping its
   * creation time; false, with the reservation where it was, when one of them is held for another gang.
   */
  boolean relocate(DemandState d, List<NodeId> nodes) {
    Reservation old = d.reservation;
    if (old == null) {
      return false;
    }
    cluster.releaseReservation(old);
    Reservation moved = placer.reserveOn(d.ref, nodes, old.createdMillis());
    if (moved == null) {
      d.reservation = cluster.reserveAgain(old.owner(), old.subtree(), old.nodeIds(), old.createdMillis());
      d.reservation.projectedStartMillis(old.projectedStartMillis());
      return false;
    }
    d.reservation = moved;
    released++;
    d.reservationPlannedAt = planVersion();
    state.durableChange();
    moved.projectedStartMillis(projectedStart(d));
    return true;
  }

  /** Gives up the request's reservation, if it holds one. */
  void drop(DemandState d) {
    if (d.reservation != null) {
      cluster.releaseReservation(d.reservation);
      d.reservation = null;
      released++;
      state.durableChange();
    }
  }
}
