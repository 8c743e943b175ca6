package io.spindle.core.engine;

import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;

/** Outstanding containers of one shape for one application request. */
final class DemandState {

  final AppState app;
  final String key;
  final Resources shape;
  /** Charge of one container as counted in pending demand (a MIG instance at its cheapest model's charge). */
  final ResourceVector unitCharge;
  int outstanding;
  /** The last reason told to drivers, so a Wait decision is emitted only when the reason changes. */
  String reportedReason;
  /** The cycle in which this request was last found unplaceable, and why; skipped for the rest of that cycle. */
  long waitingInCycle = -1;
  String waitingReason;

  DemandState(AppState app, String key, Resources shape, ResourceVector unitCharge, int outstanding) {
    this.app = app;
    this.key = key;
    this.shape = shape;
    this.unitCharge = unitCharge;
    this.outstanding = outstanding;
  }

  ResourceVector pending() {
    return unitCharge.times(outstanding);
  }
}
