package io.spindle.core.placement;

import io.spindle.core.model.Gpu;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;

/**
 * One MIG-mode GPU: the instances that exist (as its node last reported them), those that containers hold, and a
 * re-partition in flight.
 *
 * <p>A re-partition makes the GPU unavailable from the moment it is planned until both its node has reported the new
 * layout and the configured reconfiguration time has passed; only then do its new instances count. The scheduler
 * never re-partitions a GPU with an instance in use.
 */
final class MigGpuState {

  final Gpu gpu;
  private MigLayout configured;
  private MigLayout inUse;
  private MigLayout pending;
  private long availableAtMillis;
  private boolean reported = true;

  MigGpuState(Gpu gpu) {
    this.gpu = gpu;
    this.configured = gpu.migLayout();
    this.inUse = MigLayout.empty(gpu.model());
  }

  MigLayout configured() {
    return configured;
  }

  MigLayout inUse() {
    return inUse;
  }

  /** The layout asked for and not yet in force, or {@code null}. */
  MigLayout pending() {
    return pending;
  }

  boolean available() {
    return pending == null;
  }

  boolean idle() {
    return inUse.isEmpty() && available();
  }

  int usedSlices() {
    return Integer.bitCount(inUse.usedSliceMask());
  }

  /** The lowest-start free instance of the profile, or {@code null}. */
  MigPlacement freeInstance(String profileName) {
    if (!available()) {
      return null;
    }
    for (MigPlacement p : configured.placements()) {
      if (p.profile().name().equals(profileName) && !inUse.placements().contains(p)) {
        return p;
      }
    }
    return null;
  }

  int freeInstances(String profileName) {
    if (!available()) {
      return 0;
    }
    int n = 0;
    for (MigPlacement p : configured.placements()) {
      if (p.profile().name().equals(profileName) && !inUse.placements().contains(p)) {
        n++;
      }
    }
    return n;
  }

  boolean offers(MigProfile profile) {
    return gpu.model().profile(profile.name()).isPresent();
  }

  void take(MigPlacement p) {
    if (!configured.placements().contains(p)) {
      throw new IllegalStateException("GPU " + gpu.index() + " has no instance " + p + " in " + configured);
    }
    inUse = inUse.with(p);
  }

  void give(MigPlacement p) {
    if (inUse.placements().contains(p)) {
      inUse = inUse.without(p);
    }
  }

  void beginReconfigure(MigLayout desired, long availableAtMillis) {
    if (!inUse.isEmpty()) {
      throw new IllegalStateException("GPU " + gpu.index() + " has instances in use: " + inUse);
    }
    this.pending = desired;
    this.availableAtMillis = availableAtMillis;
    this.reported = false;
  }

  /**
   * The node's report of what exists on the GPU. Accepted only if it keeps every instance a container holds: a
   * report that drops one would hide running work from accounting.
   */
  void report(MigLayout layout) {
    for (MigPlacement p : inUse.placements()) {
      if (!layout.placements().contains(p)) {
        throw new InvalidInputException("gpu.migLayout", layout,
            "report for GPU " + gpu.index() + " drops instance " + p + " that a container holds");
      }
    }
    configured = layout;
    reported = true;
  }

  /** A re-partition in flight whose report has arrived and whose time has come. */
  boolean due(long nowMillis) {
    return pending != null && reported && nowMillis >= availableAtMillis;
  }

  /** Ends a re-partition that is {@link #due}: the reported layout is in force. */
  void activate() {
    pending = null;
  }
}
