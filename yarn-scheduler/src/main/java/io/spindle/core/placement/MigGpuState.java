package io.spindle.core.placement;

import io.spindle.core.model.Gpu;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import java.util.ArrayList;
import java.util.List;

/**
 * One MIG-mode GPU: the instances that exist (as its node last reported them), those that containers hold, and a
 * re-partition in flight.
 *
 * <p>A re-partition keeps every instance in use; it destroys only unused instances and creates new ones, which MIG
 * allows beside running work. From the moment it is planned until both its node has reported the new layout and the
 * configured reconfiguration time has passed, the GPU hands out only the instances the change keeps: what it destroys
 * or creates does not exist for certain until then.
 */
final class MigGpuState {

  final Gpu gpu;
  private MigLayout configured;
  private MigLayout inUse;
  private MigLayout pending;
  /** While a re-partition is in flight: instances of the layout before it that it keeps. */
  private List<MigPlacement> kept = List.of();
  private long availableAtMillis;
  private boolean reported = true;
  /** Out of service (failed, quarantined or cordoned): no instance of it is handed out. */
  boolean out;

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

  /** No re-partition in flight. */
  boolean available() {
    return pending == null;
  }

  boolean idle() {
    return inUse.isEmpty() && available();
  }

  int usedSlices() {
    return Integer.bitCount(inUse.usedSliceMask());
  }

  /** Whether a container may be given {@code p} now. */
  boolean allocatable(MigPlacement p) {
    return !out && (inUse.usedSliceMask() & p.sliceMask()) == 0 && configured.placements().contains(p)
        && (pending == null || kept.contains(p));
  }

  /** The lowest-start free instance of the profile, or {@code null}. */
  MigPlacement freeInstance(String profileName) {
    for (MigPlacement p : configured.placements()) {
      if (p.profile().name().equals(profileName) && allocatable(p)) {
        return p;
      }
    }
    return null;
  }

  int freeInstances(String profileName) {
    int n = 0;
    for (MigPlacement p : configured.placements()) {
      if (p.profile().name().equals(profileName) && allocatable(p)) {
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

  /** Starts a re-partition to {@code desired}, which must keep every instance in use. */
  void beginReconfigure(MigLayout desired, long availableAtMillis) {
    if (pending != null) {
      throw new IllegalStateException("GPU " + gpu.index() + " is already being re-partitioned to " + pending);
    }
    for (MigPlacement p : inUse.placements()) {
      if (!desired.placements().contains(p)) {
        throw new IllegalStateException("GPU " + gpu.index() + ": re-partition to " + desired
            + " would destroy instance " + p + ", which a container holds");
      }
    }
    List<MigPlacement> keep = new ArrayList<>();
    for (MigPlacement p : configured.placements()) {
      if (desired.placements().contains(p)) {
        keep.add(p);
      }
    }
    this.kept = List.copyOf(keep);
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
    kept = List.of();
  }
}
