package io.spindle.core.engine;

import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.GangPlacer;
import io.spindle.core.placement.Placement;
import io.spindle.core.placement.Reservation;
import io.spindle.core.preemption.Candidate;
import io.spindle.core.preemption.CapacityProbe;
import io.spindle.core.preemption.CheckpointHandshake;
import io.spindle.core.preemption.Need;
import io.spindle.core.preemption.PreemptionPlanner;
import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.preemption.QueueView;
import io.spindle.core.preemption.ReclaimLedger;
import io.spindle.core.queue.QueueShare;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns the engine's state into what {@code io.spindle.core.preemption} decides on: the planner with its queues
 * and candidates, the needs of starved requests, capacity probes over the real cluster state, and the
 * {@link PlanningInputs} that tell whether planning could come out differently from the last time.
 */
final class PreemptionSnapshot {

  private final PreemptionSettings settings;
  private final EngineState state;
  private final ClusterState cluster;
  private final GangPlacer placer;
  private final GangRuns runs;
  private final PreemptionState preemption;

  PreemptionSnapshot(PreemptionSettings settings, EngineState state, GangPlacer placer, GangRuns runs,
      PreemptionState preemption) {
    this.settings = settings;
    this.state = state;
    this.cluster = state.cluster();
    this.placer = placer;
    this.runs = runs;
    this.preemption = preemption;
  }

  /** What planning for {@code starved} would see now; {@code changes} counts starts, releases and reports. */
  PlanningInputs inputs(long changes, List<DemandState> starved, Collection<QueueState> queues, long now) {
    List<PlanningInputs.QueueFigures> figures = new ArrayList<>();
    for (QueueState q : queues) {
      figures.add(new PlanningInputs.QueueFigures(q.usage, q.share));
    }
    List<PlanningInputs.Held> held = new ArrayList<>();
    for (Reservation r : cluster.reservations()) {
      held.add(new PlanningInputs.Held(r.owner(), r.nodeIds()));
    }
    List<PlanningInputs.Reclaim> reclaims = new ArrayList<>();
    for (ReclaimLedger.InFlight p : preemption.ledger.plans()) {
      reclaims.add(new PlanningInputs.Reclaim(p.id(), p.withdrawn()));
    }
    List<PlanningInputs.Starved> waiting = new ArrayList<>();
    for (DemandState d : starved) {
      waiting.add(new PlanningInputs.Starved(d.ref, d.outstanding, starvedQueue(d, now)));
    }
    return new PlanningInputs(changes, now / Math.max(1_000, settings.starvationMillis()), cluster.capacity(Node.DEFAULT_PARTITION),
        queues.iterator().next().pending, figures, held, reclaims, waiting);
  }

  /** Whether the request's queue has been below its fair share long enough for reclaims across queues. */
  boolean starvedQueue(DemandState d, long now) {
    // Below its fair share at all, first: with a delay of 0, "below for 0 ms" is also what a queue at its share reads.
    return preemption.starvation.belowSince().containsKey(d.app.leaf.path())
        && preemption.starvation.belowMillis(d.app.leaf.path(), now) >= delayMillis(d);
  }

  /** The request's preemption delay: its queue's {@code spindle.preemption.delay-seconds}, else the cluster's. */
  long delayMillis(DemandState d) {
    return d.app.leaf.preemptionDelayMillis(settings.starvationMillis());
  }

  /**
   * The earliest instant at which a run that the planners built since {@link #resetProtection} left out for a
   * minimum run time (its queue's, or its ordering's) becomes a candidate; {@link Long#MAX_VALUE} if none was. Planning
   * that found nothing must run again then, although nothing else changed.
   */
  long protectedUntilMillis() {
    return protectedUntil;
  }

  void resetProtection() {
    protectedUntil = Long.MAX_VALUE;
  }

  private long protectedUntil = Long.MAX_VALUE;

  /**
   * The planner's snapshot of one partition (node label; {@code ""} the default): its queues' figures and the runs
   * there. A queue's usage is projected past the reclaims in flight: their victims count as gone and their
   * beneficiaries as placed, so a second plan neither takes the same capacity twice nor pushes a queue past its fair
   * share counting on capacity another reclaim already promised.
   */
  PreemptionPlanner planner(Collection<QueueState> queues, long now, String partition) {
    Map<String, ResourceVector> projected = new LinkedHashMap<>();
    for (QueueState q : queues) {
      projected.put(q.path(), q.usage(partition));
    }
    for (ReclaimLedger.InFlight p : preemption.ledger.plans()) {
      for (CheckpointHandshake h : p.handshakes()) {
        if (h.state() == CheckpointHandshake.State.WITHDRAWN) {
          continue;
        }
        GangRun run = runs.get(h.unitId());
        AppState app = run == null ? null : state.app(run.appId);
        if (app != null && partitionOf(run).equals(partition)) {
          addAlongPath(projected, app.leaf, run.charge(state).times(-1));
        }
      }
      DemandState beneficiary = demand(p.need());
      if (!p.withdrawn() && (beneficiary == null ? partition.isEmpty()
          : beneficiary.shape.partition().equals(partition))) {
        QueueState leaf = state.queue(p.need().queue());
        if (leaf != null) {
          addAlongPath(projected, leaf, p.need().charge());
        }
      }
    }
    List<QueueView> views = new ArrayList<>();
    for (QueueState q : queues) {
      QueueShare share = q.share(partition);
      views.add(new QueueView(q.path(), q.parent == null ? null : q.parent.path(),
          q.parent != null && q.parent.children.size() > 1, share.fairShare(), share.maximum(),
          projected.get(q.path())));
    }
    Set<Long> busy = preemption.ledger.victimUnits();
    List<Candidate> candidates = new ArrayList<>();
    for (GangRun run : runs.all()) {
      AppState app = state.app(run.appId);
      if (!run.preemptible || app == null || run.members.isEmpty() || busy.contains(run.id)
          || app.leaf.preemptionDisabled() || !partitionOf(run).equals(partition)) {
        continue;
      }
      if (run.startMillis >= now) {
        // Placed in this very cycle: reclaiming it at once would only churn (its application has not even been told
        // of its containers yet); the request waits for the next cycle's plan.
        continue;
      }
      if (!run.grownBy.isEmpty() || (run.core != null && run.core.phase() == GangRun.Phase.RESTARTING)) {
        // An elastic gang gives back what it grew by before it can be taken whole; a restarting one stops anyway.
        continue;
      }
      long minRuntime = app.leaf.preemptionMinRuntimeMillis();
      if (run.core == null && now - run.startMillis < minRuntime) {
        // Too young to be taken by anything (spindle.preemption.min-runtime-seconds): killing a job minutes after it
        // started loses its start-up for nothing. Members an elastic gang grew by are not protected: they borrowed
        // idle capacity, give it back by a resize, and the gang runs on.
        protectedUntil = Math.min(protectedUntil, run.startMillis + minRuntime);
        continue;
      }
      LeafOrder order = new LeafOrder(app.leaf, state.estimates(), now);
      long orderingMinRuntime = app.leaf.config.orderingRules().minRuntimeMillis();
      boolean reorderable = reordering(app.leaf) && !order.aged(app) && now - run.startMillis >= orderingMinRuntime;
      if (reordering(app.leaf) && now - run.startMillis < orderingMinRuntime) {
        protectedUntil = Math.min(protectedUntil, run.startMillis + orderingMinRuntime);
      }
      candidates.add(new Candidate(run.id, run.appId, run.requestKey, app.leaf.path(), app.user, app.priority,
          run.charge(state), run.startMillis, preemption.lastCheckpointMillis(run.appId),
          new ArrayList<>(run.members), run.core != null, reorderable ? order.rank(app) : 0, reorderable,
          app.attained.submittedMillis()));
    }
    ResourceVector used = queues.iterator().next().usage(partition); // Root comes first and holds everything.
    ResourceVector capacity = cluster.capacity(partition);
    return new PreemptionPlanner(capacity, views, capacity.minus(used), candidates, now);
  }

  /**
   * Where a run's containers count: its request's partition, or the non-exclusive label whose idle nodes a request of
   * the default partition borrowed.
   */
  private String partitionOf(GangRun run) {
    Allocation a = run.members.isEmpty() ? null : state.allocation(run.members.iterator().next());
    return a == null ? run.shape.partition() : a.shape().partition();
  }

  private static void addAlongPath(Map<String, ResourceVector> usage, QueueState leaf, ResourceVector delta) {
    for (QueueState q = leaf; q != null; q = q.parent) {
      usage.merge(q.path(), delta, ResourceVector::plus);
    }
  }

  /** What {@code d} needs of one plan at {@code now}: a gang whole, else one container. */
  Need need(DemandState d, boolean crossQueue, long now) {
    int containers = d.isGang() ? d.outstanding : 1;
    AppState app = d.app;
    boolean reorders = reordering(app.leaf);
    return new Need(app.id, d.key, app.leaf.path(), app.user, app.priority, d.unitCharge.times(containers),
        containers, d.isGang(), crossQueue, app.leaf.userUsage(d.shape.partition()).getOrDefault(app.user,
            ResourceVector.ZERO), UserLimits.limit(app.leaf, d.shape.partition(), app.user), reorders,
        reorders ? new LeafOrder(app.leaf, state.estimates(), now).preemptionRank(app) : 0,
        reorders ? app.attained.submittedMillis() : 0);
  }

  /** Whether work of {@code leaf} may be taken by a queue-mate its ordering puts first. */
  private static boolean reordering(QueueState leaf) {
    return leaf.ranked() && leaf.config.orderingRules().preempt();
  }

  /** The request of a plan's need, if it still waits. */
  DemandState demand(Need n) {
    AppState app = state.app(n.appId());
    return app == null ? null : app.demands.get(n.requestKey());
  }

  /** Whether the plan's request would still be placed with every one of its victims gone. */
  boolean stillFits(ReclaimLedger.InFlight p) {
    if (demand(p.need()) == null) {
      return false;
    }
    CapacityProbe probe = probe();
    for (Candidate v : p.victims()) {
      probe.free(v);
    }
    try {
      return probe.fits(p.need());
    } finally {
      for (Candidate v : p.victims()) {
        probe.restore(v);
      }
    }
  }

  /**
   * As {@link #probe()}, for {@code d}: only victims on nodes of its partition may help, and when it holds a
   * reservation only those on its reserved nodes, or members an elastic gang grew by anywhere (see {@link #probe()}).
   */
  CapacityProbe probe(DemandState d) {
    return probe(d, false);
  }

  /**
   * As {@link #probe(DemandState)} for a gang that holds a reservation, but as if it held none: victims anywhere in
   * its partition may help, and it fits wherever placement would put it. For a gang whose reserved nodes no plan can
   * free (their work is not eligible), so that it moves its reservation to where a plan can.
   */
  CapacityProbe probeAnywhere(DemandState d) {
    return probe(d, true);
  }

  private CapacityProbe probe(DemandState d, boolean anywhere) {
    CapacityProbe all = probe();
    Reservation r = anywhere ? null : d.reservation;
    return new CapacityProbe() {
      @Override
      public void free(Candidate victim) {
        all.free(victim);
      }

      @Override
      public void restore(Candidate victim) {
        all.restore(victim);
      }

      @Override
      public boolean fits(Need need) {
        return anywhere ? placer.place(d.shape, d.outstanding, d.requiredDepth, null) != null : all.fits(need);
      }

      @Override
      public boolean mayHelp(Candidate victim) {
        for (long id : victim.allocationIds()) {
          Allocation a = state.allocation(id);
          if (a == null) {
            if (r == null) {
              return true; // Ended already: what it held is free, wherever it was.
            }
            continue;
          }
          NodeId node = a.placement().nodeId();
          io.spindle.core.model.Node registered = cluster.nodeOf(node);
          if (registered != null && d.shape.partition().equals(registered.partition())
              && (r == null || victim.elastic() || r.nodeIds().contains(node))) {
            return true;
          }
        }
        return false;
      }
    };
  }

  /** The nodes the gang would be placed on once {@code victims} are gone, as if it held no reservation; or none. */
  List<NodeId> nodesFreedBy(DemandState d, List<Candidate> victims) {
    CapacityProbe p = probe();
    victims.forEach(p::free);
    List<Placement> members = placer.place(d.shape, d.outstanding, d.requiredDepth, null);
    victims.forEach(p::restore);
    return members == null ? List.of()
        : members.stream().map(Placement::nodeId).distinct().toList();
  }

  /**
   * Frees and restores victims on the real cluster state, and asks the same placement code the engine uses. A gang
   * that holds a reservation is served on its reserved nodes, unless members an elastic gang grew by are among the
   * victims: those go first wherever they run (they cost a resize, not a restart), and what they free goes to the gang
   * before anyone else ({@link EnginePreemption#beforePlacement}), so it may be placed off its reservation.
   */
  private CapacityProbe probe() {
    return new CapacityProbe() {
      private int elasticFreed;

      @Override
      public void free(Candidate victim) {
        if (victim.elastic()) {
          elasticFreed++;
        }
        for (long id : victim.allocationIds()) {
          Allocation a = state.allocation(id);
          if (a != null) { // Ended and released already: its capacity is free anyway.
            cluster.release(a.shape(), a.placement());
          }
        }
      }

      @Override
      public void restore(Candidate victim) {
        if (victim.elastic()) {
          elasticFreed--;
        }
        for (long id : victim.allocationIds()) {
          Allocation a = state.allocation(id);
          if (a != null) {
            cluster.commit(a.shape(), a.placement());
          }
        }
      }

      @Override
      public boolean fits(Need need) {
        DemandState d = demand(need);
        if (d == null) {
          return false;
        }
        if (!d.isGang()) {
          return cluster.find(d.shape) != null;
        }
        List<Placement> members = placer.place(d.shape, d.outstanding, d.requiredDepth, d.reservation);
        if (members == null || d.reservation == null || elasticFreed > 0) {
          return members != null;
        }
        // A gang holding nodes is served there: its nodes only drain, so what a plan counts on cannot be taken by
        // anyone else (free capacity elsewhere can — by normal placement, or by another gang's reservation).
        for (Placement m : members) {
          if (!d.reservation.nodeIds().contains(m.nodeId())) {
            return false;
          }
        }
        return true;
      }
    };
  }
}
