package io.spindle.core.engine;

import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Node;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.Reservation;
import io.spindle.core.queue.FairShareCalculator;
import io.spindle.core.queue.QueueLabels;
import io.spindle.core.queue.QueueShare;
import io.spindle.core.reliability.CheckpointAdvice;
import io.spindle.core.reliability.CheckpointAdvisor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.function.Function;

/** What the engine shows of itself: queue snapshots, reasons, figures for metrics, the status pages' view. */
final class EngineViews {

  static final String NOT_YET_CONSIDERED = "not yet considered by a scheduling cycle";

  private final EngineState state;
  private final ClusterState cluster;
  private final Clock clock;
  private final CheckpointAdvisor advisor;
  private final Function<AppId, OptionalLong> writeMillis;
  private final Function<DemandState, String> preemptionNote;

  /**
   * {@code writeMillis}: how long each application's checkpoints take to write, as it reported;
   * {@code preemptionNote}: what preemption waits for on a request's behalf, or {@code null}.
   */
  EngineViews(EngineState state, Clock clock, CheckpointAdvisor advisor, Function<AppId, OptionalLong> writeMillis,
      Function<DemandState, String> preemptionNote) {
    this.state = state;
    this.cluster = state.cluster();
    this.clock = clock;
    this.advisor = advisor;
    this.writeMillis = writeMillis;
    this.preemptionNote = preemptionNote;
  }

  /**
   * How often the application should checkpoint: for the GPUs its running containers hold, else (before its gang
   * starts) for those its requests ask for; empty for one with neither, or not known.
   */
  Optional<CheckpointAdvice> checkpointAdvice(AppId appId) {
    AppState app = state.app(appId);
    return app == null ? Optional.empty() : Optional.ofNullable(advice(app));
  }

  private CheckpointAdvice advice(AppState app) {
    long units = app.usage.gpuUnits();
    boolean held = units > 0;
    if (!held) {
      for (DemandState d : app.demands.values()) {
        units += d.unitCharge.gpuUnits() * d.outstanding;
      }
    }
    if (units <= 0) {
      return null;
    }
    // A slice or share fails with its GPU, but charges only its part: whole-GPU equivalents, rounded up.
    int gpus = (int) Math.min(Integer.MAX_VALUE, (units + ResourceVector.GPU_UNITS - 1) / ResourceVector.GPU_UNITS);
    return advisor.advise(state.failures(), clock.nowMillis(), gpus, held, writeMillis.apply(app.id));
  }

  /**
   * The outstanding requests as the applications would ask for them again after a failover, in the order the
   * engine keeps them. For tests that rebuild an engine from scratch and compare it with the original.
   */
  List<Demand> outstandingDemands() {
    List<Demand> out = new ArrayList<>();
    for (AppState app : state.apps()) {
      for (DemandState d : app.demands.values()) {
        out.add(new Demand(app.id, d.key, d.shape, d.outstanding, d.spec));
      }
    }
    return out;
  }

  /** Each queue as of the last cycle, parents before children. */
  List<QueueSnapshot> queueSnapshots() {
    ResourceVector whole = cluster.capacity(Node.DEFAULT_PARTITION);
    Map<String, QueueShare> shares = FairShareCalculator.compute(state.tree(), whole, state.leafDemands(),
        FairShareCalculator.resolveLimits(state.tree(), whole), state.usageHistory().weighting(clock.nowMillis()));
    Map<String, Map<String, QueueShare>> labelled = new LinkedHashMap<>();
    for (String label : cluster.labelledPartitions()) {
      ResourceVector capacity = cluster.capacity(label);
      labelled.put(label, FairShareCalculator.compute(state.tree(), capacity, state.leafDemands(label),
          QueueLabels.resolve(state.tree(), capacity, label)));
    }
    List<QueueSnapshot> out = new ArrayList<>();
    for (QueueState q : state.queues()) {
      QueueShare s = shares.get(q.path());
      Map<String, QueueSnapshot.Partition> partitions = new TreeMap<>();
      labelled.forEach((label, byQueue) -> {
        QueueShare ls = byQueue.get(q.path());
        partitions.put(label, new QueueSnapshot.Partition(ls.guarantee(), ls.maximum(), ls.fairShare(),
            q.usage(label), q.pending(label)));
      });
      UsageHistory history = state.usageHistory();
      long now = clock.nowMillis();
      Map<String, QueueSnapshot.Usage> users = new TreeMap<>();
      if (history.settings().enabled() && q.isLeaf()) {
        history.users(q.path(), now).forEach((user, v) -> users.put(user, QueueSnapshot.Usage.of(v)));
      }
      out.add(new QueueSnapshot(q.path(), s.guarantee(), s.maximum(), s.fairShare(), q.usage, q.pending,
          partitions, history.settings().enabled() ? QueueSnapshot.Usage.of(history.queue(q.path(), now)) : null,
          s.historyFactor(), users));
    }
    return out;
  }

  /** The reason each waiting request of the application was last given, by request key. */
  Map<String, String> pendingReasons(AppId appId) {
    AppState app = state.app(appId);
    if (app == null) {
      return Map.of();
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (DemandState d : app.demands.values()) {
      out.put(d.key, d.reportedReason == null ? NOT_YET_CONSIDERED : d.reportedReason);
    }
    return Collections.unmodifiableMap(out);
  }

  /** Containers asked for and not yet placed, over all applications. */
  long pendingContainers() {
    long n = 0;
    for (AppState app : state.apps()) {
      for (DemandState d : app.demands.values()) {
        n += d.outstanding;
      }
    }
    return n;
  }

  /**
   * The expected start of each waiting request of the applications (by application, then request key), forecast
   * for their queues only: what {@link #status} shows of them, for a driver that asks about a few (the simulator).
   */
  Map<AppId, Map<String, EngineStatus.ExpectedStart>> expectedStarts(Collection<AppId> appIds) {
    List<QueueState> leaves = new ArrayList<>();
    for (AppId id : appIds) {
      AppState app = state.app(id);
      if (app != null && !leaves.contains(app.leaf)) {
        leaves.add(app.leaf);
      }
    }
    Map<DemandState, EngineStatus.ExpectedStart> starts = new StartEstimates(state, clock).of(leaves);
    Map<AppId, Map<String, EngineStatus.ExpectedStart>> out = new LinkedHashMap<>();
    for (AppId id : appIds) {
      AppState app = state.app(id);
      if (app == null) {
        continue;
      }
      Map<String, EngineStatus.ExpectedStart> byKey = new LinkedHashMap<>();
      for (DemandState d : app.demands.values()) {
        if (d.outstanding > 0) {
          byKey.put(d.key, starts.getOrDefault(d, EngineStatus.ExpectedStart.UNKNOWN));
        }
      }
      out.put(id, byKey);
    }
    return out;
  }

  /** Figures for metrics as of now (call between cycles, on the thread that runs them). */
  EngineStats stats() {
    long now = clock.nowMillis();
    int gangs = 0;
    long oldestSubmit = Long.MAX_VALUE;
    for (AppState app : state.apps()) {
      for (DemandState d : app.demands.values()) {
        if (d.isGang() && d.outstanding > 0) {
          gangs++;
          oldestSubmit = Math.min(oldestSubmit, app.submitTimeMillis);
        }
      }
    }
    int freeWhole = 0;
    for (int n : cluster.freeWholeGpusByNode().values()) {
      freeWhole += n;
    }
    long oldestReservation = now;
    for (Reservation r : cluster.reservations()) {
      oldestReservation = r.spare() ? oldestReservation : Math.min(oldestReservation, r.createdMillis());
    }
    return new EngineStats(gangs, gangs == 0 ? 0 : Math.max(0, now - oldestSubmit),
        Reservation.gangReservations(cluster.reservations()),
        cluster.capacity().gpus(), freeWhole, cluster.freeMigInstancesByProfile(), cluster.migSlices(), pendingContainers(),
        state.allocationCount(), now - oldestReservation);
  }

  /** What status pages show, as of now (call between cycles, on the thread that runs them). */
  EngineStatus status(long cycles) {
    Map<DemandState, EngineStatus.ExpectedStart> starts = new StartEstimates(state, clock)
        .of(state.queues().stream().filter(QueueState::isLeaf).toList());
    List<EngineStatus.App> appViews = new ArrayList<>(state.apps().size());
    for (AppState app : state.apps()) {
      List<EngineStatus.Request> requests = new ArrayList<>(app.demands.size());
      for (DemandState d : app.demands.values()) {
        Reservation r = d.reservation;
        String note = preemptionNote.apply(d);
        String reason = d.reportedReason == null ? NOT_YET_CONSIDERED : d.reportedReason;
        requests.add(new EngineStatus.Request(d.key, d.shape, d.outstanding, d.spec,
            note == null ? reason : reason + "; " + note,
            r == null ? null : new EngineStatus.Held(r.subtree(), r.nodeIds(), r.createdMillis(),
                r.projectedStartMillis()), d.outstanding > 0 ? starts.get(d) : null));
      }
      appViews.add(new EngineStatus.App(app.id, app.leaf.path(), app.user, app.priority, app.submitTimeMillis,
          app.usage, app.allocations.size(), requests, app.leaf.ranked()
              ? new LeafOrder(app.leaf, state.estimates(), clock.nowMillis()).describe(app) : null, advice(app)));
    }
    List<EngineStatus.Container> containers = new ArrayList<>(state.allocationCount());
    for (Allocation a : state.allocations().stream().sorted(Comparator.comparingLong(Allocation::id)).toList()) {
      containers.add(new EngineStatus.Container(a.id(), a.appId(), a.requestKey(), a.placement().nodeId(), a.shape(),
          a.placement().gpus()));
    }
    return new EngineStatus(cycles, clock.nowMillis(), queueSnapshots(), appViews, cluster.nodeViews(), containers);
  }
}
