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
 *
 * <p>An elastic gang is several runs: its <em>core</em>, the members it started with (at most its minimum), and one
 * run per group of members it grew by ({@link #grownBy}), each with the same life. A grown group is what a reclaim
 * picks first, with a resize notice; when its reclaim completes the core asks for those members again as growth
 * ({@link #wanted}) instead of being re-queued. The core itself is a victim only once no grown group runs, so a gang
 * shrinks to its minimum before it is preempted whole. A core that restarts stops its grown groups with it.
 */
final class GangRun {

  /** Where a run is in its life; an elastic gang's core and grown groups each have one (class comment). */
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
  /** Whether a member's GPU failed under it ({@link #memberFaulted}). */
  boolean faulted;
  /** Members lost to the cluster; the first loss restarts it. */
  final List<Long> lost = new ArrayList<>();
  /** Members at start: a preempted or restarted gang waits again whole. */
  int size;
  /** For members an elastic gang grew by: the gang's core; {@code null} for a core or a rigid run. */
  GangRun core;
  /** For an elastic gang's core: the groups of members it grew by that still run or are being reclaimed. */
  final List<GangRun> grownBy = new ArrayList<>();
  /** For an elastic gang's core: members its application asks for beyond those running, to grow by when idle. */
  int wanted;
  /** For members an elastic gang grew by: their reclaim is complete, though they may not all have ended yet. */
  boolean givenBack;
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
    phase = lost.isEmpty() && !faulted ? Phase.RUNNING : Phase.RESTARTING;
  }

  /**
   * A member's GPU left service: the member still runs, but on hardware that cannot be trusted. Returns whether this
   * restarts the run, as {@link #memberLost} does; the member is stopped with the survivors, not counted lost.
   */
  boolean memberFaulted() {
    if (!restartsOnLoss) {
      return false;
    }
    boolean first = lost.isEmpty() && !faulted;
    faulted = true;
    if (first && phase == Phase.RUNNING) {
      phase = Phase.RESTARTING;
    }
    return first;
  }

  /**
   * A member was lost to the cluster. Returns whether this loss restarts the run: the first loss of a run that
   * restarts on loss.
   */
  boolean memberLost(long allocationId) {
    if (!restartsOnLoss) {
      return false;
    }
    boolean first = lost.isEmpty() && !faulted;
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

  /** For an elastic gang: the members that run and are not given back by a completed reclaim. */
  int sizeKept() {
    return gangSizeWithout(false);
  }

  /** Whether this is an elastic gang's core. */
  boolean elasticCore() {
    return core == null && spec.elastic();
  }

  /** For an elastic gang (its core or a grown group): the members that run, over all its runs. */
  int gangSize() {
    GangRun c = core != null ? core : this;
    int n = c.members.size();
    for (GangRun g : c.grownBy) {
      n += g.members.size();
    }
    return n;
  }

  /** For an elastic gang's core: the members its application asks for in all, running and wanted. */
  int asked() {
    int n = size + wanted;
    for (GangRun g : grownBy) {
      n += g.size;
    }
    return n;
  }

  /** For an elastic gang: the members it runs with once the grown groups a reclaim has picked are gone. */
  int sizeAfterReclaims() {
    return Math.max(1, gangSizeWithout(true));
  }

  /** {@link #gangSize} less the grown groups given back, and with {@code victimsToo} those a reclaim has picked. */
  private int gangSizeWithout(boolean victimsToo) {
    GangRun c = core != null ? core : this;
    int n = gangSize();
    for (GangRun g : c.grownBy) {
      if (g.givenBack || (victimsToo && g.phase == Phase.VICTIM)) {
        n -= g.members.size();
      }
    }
    return n;
  }

  /** What its members are charged now. */
  ResourceVector charge(EngineState state) {
    return state.chargeOf(members);
  }
}
