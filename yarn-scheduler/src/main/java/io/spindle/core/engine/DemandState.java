package io.spindle.core.engine;

import io.spindle.core.model.NodeId;
import io.spindle.core.model.RequestRef;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.Reservation;
import java.util.List;

/** Outstanding containers of one shape for one application request. */
final class DemandState {

  final AppState app;
  final String key;
  /** The request this is, for what is keyed by request: reservations, starvation, reclaims. */
  final RequestRef ref;
  final Resources shape;
  /** Charge of one container as counted in pending demand (a MIG instance at its cheapest model's charge). */
  final ResourceVector unitCharge;
  final PlacementSpec spec;
  /** For gangs: the highest topology level the gang may span (see ClusterState.depthOf). */
  final int requiredDepth;
  /** For gangs: nodes held while the gang waits, or {@code null}. */
  Reservation reservation;
  /** For gangs: what planning saw when {@link #reservation} was last planned (see Reservations#planVersion). */
  long reservationPlannedAt = -1;
  /** For gangs: after a reservation timed out, none is made again before this time, so others get a turn. */
  long noReservationBeforeMillis;
  int outstanding;
  /** The last reason told to drivers, so a Wait decision is emitted only when the reason changes. */
  String reportedReason;
  /**
   * A gang restarted after losing members to hardware: the nodes it ran on, so that its replacement starts inside
   * the domain it held (hot swap), near the data and the survivors' caches; {@code null} otherwise.
   */
  List<NodeId> restartNear;
  /** For such a gang: its members being stopped; it waits until they have ended, to count their room. */
  List<Long> stopping = List.of();
  /**
   * For an elastic gang: members asked beyond those it starts with ({@link #outstanding}, at most its minimum). They
   * are not pending demand: fair share and reservations count the minimum only, and the gang grows by them once it
   * runs ({@link ElasticGrowth}).
   */
  int growBy;

  DemandState(AppState app, String key, Resources shape, ResourceVector unitCharge, int outstanding,
      PlacementSpec spec, int requiredDepth) {
    this.app = app;
    this.spec = spec;
    this.requiredDepth = requiredDepth;
    this.key = key;
    this.ref = new RequestRef(app.id, key);
    this.shape = shape;
    this.unitCharge = unitCharge;
    this.outstanding = outstanding;
  }

  /**
   * A request for {@code asked} containers: all of them wait, or, for an elastic gang, the members it starts with, the
   * rest to grow by once it runs.
   */
  static DemandState asked(AppState app, String key, Resources shape, ResourceVector unitCharge, int asked,
      PlacementSpec spec, int requiredDepth) {
    int starting = spec.elasticity().startingMembers(asked);
    DemandState d = new DemandState(app, key, shape, unitCharge, starting, spec, requiredDepth);
    d.growBy = asked - starting;
    return d;
  }

  boolean isGang() {
    return spec.gang();
  }

  ResourceVector pending() {
    return unitCharge.times(outstanding);
  }
}
