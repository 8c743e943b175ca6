package io.spindle.core.engine;

import io.spindle.core.model.AppId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One start of a request that runs as one piece: a gang's members, or one container. It is what a reclaim picks as
 * a victim, what a lost member tears down, and what a failover regroups; {@link GangRuns} holds every one.
 *
 * <p>Its life (docs/architecture.md, "The gang lifecycle"):
 *
 * <pre>
 *   (placed) ──► RUNNING ──member lost──► RESTARTING ──last member ends──► (gone; re-queued whole at the loss)
 *                 │   ▲
 *     picked by a │   │ reclaim withdrawn, or completed with no reclaim of it
 *       reclaim   ▼   │
 *                VICTIM ──reclaim completes──► (gone; re-queued whole, resuming from its checkpoint)
 * </pre>
 *
 * A victim that loses a member is told to restart at once (its survivors stop, it is re-queued) but stays a
 * victim: its reclaim still holds what it freed until the reclaim completes. A run with no members left leaves the
 * registry unless it is a victim; a victim leaves when its reclaim is done with it.
 */
final class GangRun {

  /** Where a run is in its life. Adding a phase (an elastic gang's growing, say) is a change to this class. */
  enum Phase {
    /** Its members run. */
    RUNNING,
    /** Picked by a reclaim in flight: asked to checkpoint, then reclaimed; kept until the reclaim is done with it. */
    VICTIM,
    /** Lost a member: its survivors are being stopped and its request waits again, whole. */
    RESTARTING
  }

  /**
   * For a run a reclaim may pick: increases with start order, changed only by a restore, which renumbers the runs it
   * did not restore. 0 for a run that only restarts on member loss.
   */
  long id;
  final AppId appId;
  final String requestKey;
  final Resources shape;
  final PlacementSpec spec;
  final ResourceVector unitCharge;
  final int requiredDepth;
  final long startMillis;
  /** Whether a reclaim may pick it: preemption is on and its request is preemptible. */
  final boolean preemptible;
  /** Whether losing a member restarts it: a gang that asked for it, started here (not regrouped by a failover). */
  final boolean restartsOnLoss;
  final Set<Long> members = new LinkedHashSet<>();
  /** Members lost to the cluster; the first loss restarts it. */
  final List<Long> lost = new ArrayList<>();
  /** Members at start: a preempted or restarted gang waits again whole. */
  int size;
  private Phase phase = Phase.RUNNING;

  GangRun(long id, AppId appId, String requestKey, Resources shape, PlacementSpec spec, ResourceVector unitCharge,
      int requiredDepth, long startMillis, boolean preemptible, boolean restartsOnLoss) {
    this.id = id;
    this.appId = appId;
    this.requestKey = requestKey;
    this.shape = shape;
    this.spec = spec;
    this.unitCharge = unitCharge;
    this.requiredDepth = requiredDepth;
    this.startMillis = startMillis;
    this.preemptible = preemptible;
    this.restartsOnLoss = restartsOnLoss;
  }

  Phase phase() {
    return phase;
  }

  /** A reclaim picked it. */
  void pickedAsVictim() {
    phase = Phase.VICTIM;
  }

  /** Its reclaim is done with it (withdrawn, or complete): it runs on, or restarts, as it did before. */
  void letGo() {
    phase = lost.isEmpty() ? Phase.RUNNING : Phase.RESTARTING;
  }

  /**
   * A member was lost to the cluster. Returns whether this loss restarts the run: the first loss of a run that
   * restarts on loss.
   */
  boolean memberLost(long allocationId) {
    if (!restartsOnLoss) {
      return false;
    }
    boolean first = lost.isEmpty();
    lost.add(allocationId);
    if (first && phase == Phase.RUNNING) {
      phase = Phase.RESTARTING;
    }
    return first;
  }

  /** Whether it should leave the registry: nothing of it runs and no reclaim holds it. */
  boolean done() {
    return members.isEmpty() && phase != Phase.VICTIM;
  }

  /** What its members are charged now. */
  ResourceVector charge(EngineState state) {
    return state.chargeOf(members);
  }
}
