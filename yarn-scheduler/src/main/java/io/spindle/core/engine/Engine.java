package io.spindle.core.engine;

import io.spindle.core.engine.EngineEvent.AppFinished;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.MigLayoutReported;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.engine.EngineEvent.NodeRemoved;
import io.spindle.core.model.AppId;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Topology;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.FragmentationAwareSlots;
import io.spindle.core.placement.GangPlacer;
import io.spindle.core.placement.MigSlotPolicy;
import io.spindle.core.placement.Reservation;
import io.spindle.core.placement.SparePool;
import io.spindle.core.queue.QueueTree;
import io.spindle.core.reliability.CheckpointAdvice;
import io.spindle.core.reliability.FailureObservations;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * The scheduling engine: events in, decisions out.
 *
 * <p>One {@link #cycle} applies the events, computes every queue's fair share, and then places containers one at a
 * time, each time serving the queue furthest below its fair share (walking down the tree: at each level the child
 * with the lowest usage-to-fair-share ratio), and inside a leaf the application with the highest priority, then the
 * oldest. A request that cannot be placed this cycle is skipped with a reason, so it never blocks the requests
 * behind it; the cycle ends when nothing more can be placed. A gang is placed whole or not at all; one that does not
 * fit has nodes reserved for it, which then only drain. With preemption on, requests that starve get running work
 * reclaimed for them after a checkpoint handshake ({@link EnginePreemption}, {@code io.spindle.core.preemption}).
 * Elastic gangs start at their minimum and grow into what the cycle left idle ({@link ElasticGrowth}); what they grew
 * by is the first thing reclaimed, through resize notices.
 *
 * <p>Single-threaded and deterministic: the same events in the same order, on the same clock, give the same
 * decisions. Drivers serialise calls.
 */
public final class Engine {

  private final Clock clock;
  private final EngineSettings settings;
  private final MigRepartitioning migRepartitioning;
  private final ClusterState cluster;
  private final GangPlacer gangPlacer;
  private final EnginePreemption preemption;
  private final EngineState state;
  private final GangRuns gangRuns;
  private final Reservations reservations;
  private final Admission admission;
  private final ElasticGrowth growth;
  private final EngineFailover failover;
  private final EngineViews views;
  private final GpuFaults faults;
  private final SparePool spares;
  private long cycles;

  public Engine(GpuModelCatalog catalog, QueueTree tree, Topology topology, Clock clock) {
    this(catalog, tree, topology, clock, EngineSettings.defaults());
  }

  public Engine(GpuModelCatalog catalog, QueueTree tree, Topology topology, Clock clock, EngineSettings settings) {
    this(catalog, tree, topology, clock, settings, new FragmentationAwareSlots());
  }

  /**
   * An engine whose re-partitioned GPUs get their new MIG instances where {@code migSlots} puts them. The
   * ResourceManager always uses {@link FragmentationAwareSlots}; the packing benchmarks compare it with others on
   * this same engine.
   */
  public Engine(GpuModelCatalog catalog, QueueTree tree, Topology topology, Clock clock, EngineSettings settings,
      MigSlotPolicy migSlots) {
    this.settings = settings;
    this.clock = clock;
    this.cluster = new ClusterState(topology, settings.shareCandidates());
    this.migRepartitioning = new MigRepartitioning(cluster, settings, clock, migSlots);
    this.gangPlacer = new GangPlacer(cluster);
    this.state = new EngineState(cluster, tree, clock);
    if (settings.reservationLearnedRuntimes()) {
      state.keepHistoryEverywhere();
    }
    state.keepUsageHistory(settings.usage());
    ShapeCharges charges = new ShapeCharges(catalog, cluster);
    this.gangRuns = new GangRuns(settings.preemption().enabled(), clock);
    this.preemption = new EnginePreemption(settings.preemption(), clock, state, charges, gangPlacer, gangRuns);
    this.reservations = new Reservations(state, gangPlacer, settings, clock, preemption,
        settings.reservationLearnedRuntimes() ? ExpectedEnd.declaredOrLearned(state, clock) : ExpectedEnd.DECLARED);
    preemption.reservationsMoveWith(reservations::relocate);
    this.admission = new Admission(state, catalog, charges, gangPlacer, clock, settings, migRepartitioning,
        reservations, preemption, gangRuns);
    this.growth = new ElasticGrowth(state, gangPlacer, gangRuns, preemption, clock);
    this.failover = new EngineFailover(state, settings, preemption, reservations);
    this.views = new EngineViews(state, clock, settings.checkpointAdvice(), preemption::checkpointWriteMillis,
        preemption::note);
    this.faults = new GpuFaults(cluster, state, gangRuns, settings.health());
    this.spares = new SparePool(cluster);
    state.onRelease(gangRuns::released);
    state.onRelease(preemption::released);
  }

  /** Applies the events in order, then schedules. An invalid event throws. */
  public CycleResult cycle(List<? extends EngineEvent> events) {
    return cycle(events, null);
  }

  /** Receives an event the engine could not apply, and why; the event changed nothing. */
  @FunctionalInterface
  public interface BadEventHandler {
    void rejected(EngineEvent event, IllegalArgumentException problem);
  }

  /**
   * Applies the events in order, then schedules. An event that cannot be applied (a duplicate node, a demand for an
   * unknown application, …) goes to {@code onBadEvent} and the rest of the batch still applies — what a driver that
   * must not lose other events wants.
   */
  public CycleResult cycle(List<? extends EngineEvent> events, BadEventHandler onBadEvent) {
    List<Decision> decisions = new ArrayList<>();
    admission.settleRegistration(decisions);
    for (EngineEvent e : events) {
      try {
        apply(e, decisions);
      } catch (IllegalArgumentException problem) {
        if (onBadEvent == null) {
          throw problem;
        }
        onBadEvent.rejected(e, problem);
      }
    }
    state.countGpusInService();
    failover.settleRestored();
    cluster.activateReconfiguredGpus(clock.nowMillis());
    faults.expire(clock.nowMillis(), this::reservationBroken, decisions);
    spares.refresh(hotSparesWanted(), clock.nowMillis());
    reservations.expire(decisions);
    List<DemandState> reclaimedFor = preemption.beforePlacement(decisions);
    PlacementPass pass = new PlacementPass(state, gangPlacer, settings, clock, migRepartitioning, reservations,
        preemption, gangRuns, admission, growth, spares);
    List<DemandState> waiting = pass.run(reclaimedFor, decisions);
    preemption.afterPlacement(waiting, state.queues(), decisions);
    growth.run(pass, waiting, decisions);
    state.usageHistory().settle(clock.nowMillis(), state.queues(), () -> io.spindle.core.queue.FairShareCalculator
        .resolveLimits(state.tree(), cluster.capacity(io.spindle.core.model.Node.DEFAULT_PARTITION)));
    return new CycleResult(++cycles, clock.nowMillis(), decisions);
  }

  /**
   * Replaces the queue configuration. Refused, with the previous configuration kept, if an application still
   * runs or waits in a leaf the new tree lacks.
   */
  public void reconfigure(QueueTree newTree) {
    state.reconfigure(newTree);
    admission.limitsChanged();
  }

  // ---------------------------------------------------------------- events

  /** A reservation the cluster gave up (its node left or was cordoned): its gang waits again, told {@code why}. */
  /** Spares per rack by leaf, for the leaves that keep any ({@code spindle.hot-spares-per-rack}). */
  private Map<String, Integer> hotSparesWanted() {
    Map<String, Integer> wanted = new java.util.TreeMap<>();
    for (QueueState q : state.queues()) {
      if (q.isLeaf() && q.config.hotSparesPerRack() > 0) {
        wanted.put(q.path(), q.config.hotSparesPerRack());
      }
    }
    return wanted;
  }

  /** Nodes held as hot spares now, over every leaf and rack (call between cycles). */
  public int hotSparesHeld() {
    return spares.nodesHeld();
  }

  private void reservationBroken(Reservation broken, String why, List<Decision> decisions) {
    if (broken == null) {
      return;
    }
    state.durableChange();
    DemandState d = reservations.owning(broken);
    if (d != null) {
      d.reservation = null;
      d.reportedReason = "re-queued: its reservation on " + broken.subtree() + " was given up: " + why;
      decisions.add(new Decision.Wait(d.app.id, d.key, d.reportedReason));
    }
  }

  private void apply(EngineEvent event, List<Decision> decisions) {
    if (event instanceof NodeAdded e) {
      cluster.addNode(e.node());
      faults.nodeAdded(e.node().id(), clock.nowMillis(), this::reservationBroken, decisions);
      admission.limitsChanged();
    } else if (event instanceof NodeRemoved e) {
      reservationBroken(cluster.removeNode(e.nodeId()), "node " + e.nodeId() + " of it left", decisions);
      admission.limitsChanged();
      List<GangRun> torn = new ArrayList<>();
      for (long id : state.onNode(e.nodeId())) {
        GangRun run = gangRuns.lost(id);
        if (run != null) {
          torn.add(run);
        }
        state.release(id);
      }
      state.nodeLeft(e.nodeId());
      for (GangRun run : torn) {
        gangRuns.restart(run, "node " + e.nodeId() + " left", state, settings.health().restartInDomain(),
            decisions);
      }
    } else if (event instanceof EngineEvent.NodeCordonChanged e) {
      state.durableChange();
      if (e.reason() == null) {
        cluster.uncordon(e.nodeId());
      } else {
        reservationBroken(cluster.cordon(e.nodeId(), e.reason()),
            "node " + e.nodeId() + " of it was cordoned (" + e.reason() + ")", decisions);
      }
    } else if (event instanceof EngineEvent.GpuHealthReported e) {
      faults.reported(e.nodeId(), e.gpuIndex(), e.health(), clock.nowMillis(), this::reservationBroken, decisions);
    } else if (event instanceof EngineEvent.GpuCordonChanged e) {
      faults.cordon(e.nodeId(), e.gpuIndex(), e.reason(), clock.nowMillis(), this::reservationBroken, decisions);
    } else if (event instanceof EngineEvent.NodePartitionChanged e) {
      Reservation held = cluster.changePartition(e.nodeId(), e.partition(), e.sharesIdle());
      DemandState d = held == null ? null : reservations.owning(held);
      if (d != null && !d.shape.partition().equals(e.partition())) {
        reservations.drop(d);
        d.reportedReason = "re-queued: node " + e.nodeId() + " of its reservation on " + held.subtree()
            + " moved to partition '" + e.partition() + "'";
        decisions.add(new Decision.Wait(d.app.id, d.key, d.reportedReason));
      }
      admission.limitsChanged();
    } else if (event instanceof AppSubmitted e) {
      admission.submit(e, decisions);
    } else if (event instanceof AppFinished e) {
      admission.finish(e.appId());
    } else if (event instanceof EngineEvent.AppPriorityChanged e) {
      admission.reprioritize(e);
    } else if (event instanceof Demand e) {
      admission.demand(e, decisions);
    } else if (event instanceof ContainerFinished e) {
      if (!preemption.holdsFinished(e.allocationId())) {
        state.release(e.allocationId());
      }
    } else if (event instanceof EngineEvent.ContainerLost e) {
      GangRun run = state.hasAllocation(e.allocationId()) ? gangRuns.lost(e.allocationId()) : null;
      if (!preemption.holdsFinished(e.allocationId())) {
        state.release(e.allocationId());
      }
      if (run != null) {
        gangRuns.restart(run, "container " + e.allocationId() + " was lost: " + e.reason(), state,
            settings.health().restartInDomain(), decisions);
      }
    } else if (event instanceof EngineEvent.CheckpointAnswered e) {
      preemption.answered(e, decisions);
    } else if (event instanceof EngineEvent.CheckpointReported e) {
      preemption.reported(e);
    } else if (event instanceof EngineEvent.ContainerRecovered e) {
      admission.recover(e);
    } else if (event instanceof MigLayoutReported e) {
      cluster.reportMigLayout(e.nodeId(), e.gpuIndex(), e.layout());
    } else {
      throw new IllegalArgumentException("unknown event " + event);
    }
  }

  // ---------------------------------------------------------------- failover

  /**
   * What a standby needs to take over from this engine and decide as it would (see {@link DurableState}), with
   * containers named by {@code containerName} (the driver's stable name for an allocation id, {@code null} for one
   * it does not know, which is then left out). Cheap enough to call after every cycle in which
   * {@link #durableVersion} moved.
   */
  public DurableState durableState(LongFunction<String> containerName) {
    return failover.durableState(containerName).withGpuFaults(faults.export())
        .withUsageHistory(state.usageHistory().export());
  }

  /**
   * Moves whenever what {@link #durableState} would return changes (and sometimes when it does not): a driver saves
   * the state only after cycles that moved it.
   */
  public long durableVersion() {
    return failover.durableVersion();
  }

  /**
   * Takes over from an earlier leader: see {@link EngineFailover#restore} for what is restored, in which order, and
   * what is dropped with a reason in the report.
   *
   * @throws InvalidInputException when {@code saved} or {@code allocationIdOf} is missing
   * @throws IllegalStateException when this engine has issued checkpoint notices of its own already
   */
  public RestoreReport restore(DurableState saved, Function<String, Long> allocationIdOf) {
    RestoreReport report = failover.restore(saved, allocationIdOf);
    // What ran on a GPU out of service was stopped by the predecessor; stopping it again would say nothing new.
    faults.restore(saved.gpuFaults(), clock.nowMillis(), this::reservationBroken, new ArrayList<>());
    return report;
  }

  /** Every GPU that is not simply healthy and in service, as of now (call between cycles). */
  public List<GpuFaultView> gpuFaults() {
    return faults.views(clock.nowMillis());
  }


  /**
   * The outstanding requests as the applications would ask for them again after a failover, in the order the
   * engine keeps them. For tests that rebuild an engine from scratch and compare it with the original.
   */
  List<Demand> outstandingDemands() {
    return views.outstandingDemands();
  }

  // ---------------------------------------------------------------- views

  /** Each queue as of the last cycle, parents before children. */
  public List<QueueSnapshot> queueSnapshots() {
    return views.queueSnapshots();
  }

  /** The reason each waiting request of the application was last given, by request key. */
  public Map<String, String> pendingReasons(AppId appId) {
    return views.pendingReasons(appId);
  }

  /** Containers asked for and not yet placed, over all applications. */
  public long pendingContainers() {
    return views.pendingContainers();
  }

  /** Figures for metrics as of now (call between cycles, on the thread that runs them). */
  public EngineStats stats() {
    return views.stats().withGpuService(faults.counts(clock.nowMillis()));
  }

  /** What status pages show, as of now (call between cycles, on the thread that runs them). */
  public EngineStatus status() {
    return views.status(cycles);
  }

  /**
   * The expected start of each waiting request of {@code appIds}, by application and request key, as {@link #status}
   * shows it (call between cycles, on the thread that runs them).
   */
  public Map<AppId, Map<String, EngineStatus.ExpectedStart>> expectedStarts(Collection<AppId> appIds) {
    return views.expectedStarts(appIds);
  }

  public Optional<ResourceVector> appUsage(AppId appId) {
    return Optional.ofNullable(state.app(appId)).map(a -> a.usage);
  }

  public ClusterState cluster() {
    return cluster;
  }

  public QueueTree queueTree() {
    return state.tree();
  }

  public int runningContainers() {
    return state.allocationCount();
  }

  /**
   * The earliest deadline of a checkpoint notice still awaiting its answer: a driver that runs cycles only when
   * something happens (the simulator) should run one then, so the silent victim is reclaimed on time.
   */
  public OptionalLong nextPreemptionDeadlineMillis() {
    return preemption.nextDeadlineMillis();
  }

  /**
   * When the first reservation held now is due to be dropped if its gang has not started: a driver that runs cycles
   * only when something happens (the simulator) should run one then. Empty when no gang holds a reservation.
   */
  public OptionalLong nextReservationDeadlineMillis() {
    return reservations.nextDeadlineMillis();
  }

  /**
   * How often the application should checkpoint to lose the least work to GPU failures (Daly's interval for the GPUs
   * it holds, or asks for before it starts, at the failure rate this cluster has seen and the write time it
   * reported); empty for an application the engine does not know or that has no GPU.
   */
  public Optional<CheckpointAdvice> checkpointAdvice(AppId appId) {
    return views.checkpointAdvice(appId);
  }

  /** The cluster's GPU exposure and failures; the GPU health handling counts failures in it. */
  FailureObservations failureObservations() {
    return state.failures();
  }

  /** Where a request re-queued after preemption should resume from, as its application last said. */
  public Optional<String> resumeCheckpoint(AppId appId, String requestKey) {
    return preemption.resumeFrom(appId, requestKey);
  }
}
