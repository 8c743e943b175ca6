package io.spindle.sim;

import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.EngineStatus.ExpectedStart;
import io.spindle.core.engine.ManualClock;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.Node;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Discrete-event replay of a trace on virtual time, through Spindle's engine. The simulator plays the part of the
 * YARN adapter and of the applications: it sends the engine the events the adapter sends (nodes, application
 * submitted, its container requests, containers finished, application finished, MIG layouts reported), runs one
 * {@link Engine#cycle} per instant at which something happens, and applies the decisions (a job runs for its
 * trace duration once it holds all its containers).
 *
 * <p>Events of one instant go into one cycle in a fixed order — job ends, MIG layout reports, checkpoints written on
 * notice, periodic checkpoints, arrivals in trace order — and the clock jumps straight to the next instant (the
 * engine's decisions depend only on events and the clock, so cycles in between would change nothing, except
 * reservations' deadlines and backoffs, MIG re-partitions coming into service, and under preemption a request's starvation delay and
 * checkpoint deadlines, for which the simulator schedules a wake-up). Nothing reads the wall clock; the same inputs
 * give the same result, bit for bit.
 *
 * <p>Under a preempting policy the simulator also plays the applications' side of the checkpoint handshake
 * ({@link PreemptionDriver}) and carries out {@code Preempt} decisions: the victim's containers end, the engine queues
 * it again itself, and it resumes from its last checkpoint when it is placed again.
 *
 * <p>An elastic job ({@code +elastic}) runs once it holds its minimum, at the speed {@link ElasticModel} gives its
 * size; it checkpoints and goes on at the new speed whenever the engine grows it, and a resize's {@code Preempt}
 * kills only the members named, the job running on.
 */
public final class Simulator {

  /** How far a run has got, for progress bars. */
  @FunctionalInterface
  public interface Progress {
    void update(int jobsSettled, int jobsTotal, long virtualMillis);
  }

  private final ClusterSpec cluster;
  private final SimPolicy policy;
  private final SimOptions options;

  public Simulator(ClusterSpec cluster, SimPolicy policy, SimOptions options) {
    this.cluster = cluster;
    this.policy = policy;
    this.options = options;
  }

  public RunResult run(Trace trace, Progress progress) {
    List<SimJob> jobs = trace.jobs();
    long start = jobs.isEmpty() ? 0 : jobs.get(0).submitMillis();
    ManualClock clock = new ManualClock(start);
    EngineSettings settings = policy.engineSettings();
    QueueTree queues = new QueueConfigParser().parse(policy.queueConf(cluster));
    Partitioning parts = new Partitioning(cluster, policy.isolatesPartitions());
    // Every node is known before the first job arrives: no registration window to wait out.
    Engine engine = new Engine(parts.catalog, queues, cluster.topology(), clock,
        settings.withRegistrationSettleMillis(0));
    MetricsCollector metrics = new MetricsCollector(cluster, start);
    JobGeometry geometry = new JobGeometry(cluster, options.memberGpus());
    long[] declared = DeclaredRuntimes.of(jobs, options.declaredRuntime(), options.seed());
    Timeline timeline = new Timeline();
    PreemptionDriver apps = new PreemptionDriver(policy.preemption(), options, timeline);
    boolean preempting = settings.preemption().enabled();
    StartForecasts forecasts = new StartForecasts();
    long starvation = settings.preemption().starvationMillis();

    Map<AppId, JobRun> runs = new HashMap<>();
    Map<Long, Decision.Allocate> allocations = new HashMap<>();
    List<EngineEvent> carried = new ArrayList<>();
    for (Node n : cluster.nodes()) {
      carried.add(new EngineEvent.NodeAdded(parts.node(n)));
    }
    int next = 0;
    int settled = 0;
    long now = start;
    long lastSettled = start;
    while (next < jobs.size() || !timeline.isEmpty()) {
      long t = Long.MAX_VALUE;
      if (next < jobs.size()) {
        t = jobs.get(next).submitMillis();
      }
      if (!timeline.isEmpty()) {
        t = Math.min(t, timeline.nextTime());
      }
      now = Math.max(now, t);
      metrics.advanceTo(now);
      clock.set(now);
      List<EngineEvent> events = carried;
      carried = new ArrayList<>();
      for (Timeline.Timed e = timeline.pollDue(now); e != null; e = timeline.pollDue(now)) {
        if (e.kind() == Timeline.END) {
          JobRun r = e.run();
          if (e.generation() != r.progress.generation()) {
            continue; // Its end moved (a checkpoint on notice) or it was preempted.
          }
          for (long id : r.allocationIds) {
            events.add(new EngineEvent.ContainerFinished(id));
            release(metrics, allocations.remove(id));
          }
          events.add(new EngineEvent.AppFinished(r.app));
          r.endMillis = now;
          apps.ended(r, now);
          metrics.ended(r, now);
          runs.remove(r.app);
          settled++;
          lastSettled = now;
        } else if (e.kind() == Timeline.MIG_REPORT) {
          events.add(e.event());
        } else if (e.kind() == Timeline.CHECKPOINT_WRITTEN) {
          apps.checkpointWritten(e, now, events);
        }
      }
      apps.reportCheckpoints(now, events);
      List<JobRun> arrived = new ArrayList<>();
      while (next < jobs.size() && jobs.get(next).submitMillis() <= now) {
        SimJob job = jobs.get(next);
        Members m = geometry.of(job);
        Resources shape = parts.shapeFor(m.shape(), job);
        m = new Members(m.count(), shape);
        JobRun r = new JobRun(job, next, m, unitDemand(shape));
        io.spindle.core.engine.PlacementSpec spec = policy.placement(job, m, geometry.gpusPerNode(), declared[next]);
        if (spec.elastic()) {
          r.minMembers = spec.elasticity().min();
        }
        runs.put(r.app, r);
        arrived.add(r);
        metrics.submitted(r);
        // The trace names no application: a job's kind, for learned run times, is its GPU count.
        events.add(new EngineEvent.AppSubmitted(r.app, policy.engineQueue(job), job.user(), 0, job.gpus() + " GPUs"));
        events.add(new EngineEvent.Demand(r.app, "workers", shape, m.count(), spec));
        next++;
      }
      CycleResult result = engine.cycle(events);
      java.util.Set<JobRun> grown = new java.util.LinkedHashSet<>();
      java.util.Set<JobRun> starting = new java.util.LinkedHashSet<>();
      for (Decision d : result.decisions()) {
        if (d instanceof Decision.Allocate a) {
          JobRun r = runs.get(a.appId());
          r.allocationIds.add(a.allocationId());
          r.charges.add(a.charge());
          r.allocatedAt.add(now);
          allocations.put(a.allocationId(), a);
          hold(metrics, a);
          metrics.allocated(r, a.charge());
          if (r.progress.running()) {
            metrics.grew(a.charge());
            grown.add(r);
          } else if (r.complete()) {
            starting.add(r); // Once every container of this cycle is counted: an elastic gang may start whole.
          }
        } else if (d instanceof Decision.Reject rej) {
          JobRun r = runs.remove(rej.appId());
          if (r != null) {
            r.rejectedReason = rej.reason();
            for (long id : r.allocationIds) {
              release(metrics, allocations.remove(id));
              }
            metrics.rejected(r);
            carried.add(new EngineEvent.AppFinished(rej.appId()));
            settled++;
            lastSettled = now;
          }
        } else if (d instanceof Decision.Reserve) {
          timeline.wake(now + settings.reservationTimeoutMillis());
        } else if (d instanceof Decision.Wait w && w.reason().startsWith("re-queued: reservation")) {
          timeline.wake(now + settings.reservationTimeoutMillis());
        } else if (d instanceof Decision.ReconfigureMig rc) {
          // The simulated NodeManager applies the layout at once and reports it; the engine serves the new
          // instances from availableAt on, so the report is delivered then (and wakes the engine).
          metrics.mig().reconfigure(rc.nodeId(), rc.gpuIndex(), rc.layout());
          metrics.repartitioned();
          timeline.add(Math.max(now, rc.availableAtMillis()), Timeline.MIG_REPORT, null,
              new EngineEvent.MigLayoutReported(rc.nodeId(), rc.gpuIndex(), rc.layout()), 0);
        } else if (d instanceof Decision.RequestCheckpoint rc) {
          int before = carried.size();
          apps.notice(rc, runs.get(rc.appId()), runs.get(rc.forAppId()), now, carried);
          if (carried.size() > before) {
            timeline.wakeOnce(now); // An answer goes back at once, before the deadline it is about.
          }
        } else if (d instanceof Decision.CancelCheckpoint cc) {
          apps.withdrawn(cc, runs.get(cc.appId()));
        } else if (d instanceof Decision.Preempt p && p.isResize()) {
          shrink(p, runs.get(p.appId()), now, apps, metrics, allocations, carried);
          timeline.wakeOnce(now);
        } else if (d instanceof Decision.Preempt p) {
          kill(p, runs.get(p.appId()), now, apps, metrics, allocations, carried);
          // The kills reach the engine in a cycle at this instant, which hands the capacity on and queues the
          // victim again; it waits from then, and may itself starve.
          timeline.wakeOnce(now);
          timeline.wakeOnce(now + starvation);
        }
      }
      OptionalLong reservationDue = engine.nextReservationDeadlineMillis();
      if (reservationDue.isPresent() && reservationDue.getAsLong() > now) {
        // A reservation lives as long as its nodes are expected to drain, which no decision announces.
        timeline.wakeOnce(reservationDue.getAsLong());
      }
      for (JobRun r : starting) {
        if (!r.started()) {
          r.startMillis = now;
          forecasts.started(r, now);
        } else if (r.preemptedAtMillis >= 0) {
          r.preemptedWaitMillis += now - r.preemptedAtMillis;
          r.preemptedAtMillis = -1;
        }
        metrics.started(r, now);
        apps.started(r, now);
      }
      for (JobRun r : grown) {
        apps.grew(r, now);
      }
      if (options.expectedStart()) {
        predict(engine, arrived, runs, forecasts);
      }
      if (preempting) {
        // Cycles run only when something happens; the engine also decides when a request has starved long enough
        // (waiting since it arrived here) and when a checkpoint deadline passes.
        for (JobRun r : arrived) {
          if (!r.complete() && runs.containsKey(r.app)) {
            timeline.wakeOnce(now + starvation);
          }
        }
        OptionalLong deadline = engine.nextPreemptionDeadlineMillis();
        if (deadline.isPresent() && deadline.getAsLong() > now) {
          timeline.wakeOnce(deadline.getAsLong());
        }
      }
      if (!carried.isEmpty() && timeline.isEmpty() && next >= jobs.size()) {
        timeline.wake(now); // Deliver the last clean-up events.
      }
      metrics.afterCycle();
      if (progress != null) {
        progress.update(settled, jobs.size(), now - start);
      }
    }
    int unfinished = runs.size();
    int partial = 0;
    for (JobRun r : runs.values()) {
      if (!r.allocationIds.isEmpty() && !r.complete()) {
        partial++;
      }
    }
    // The makespan ends with the last job; a wake-up after it (a reservation timeout) is not part of it. With jobs
    // that never ran (a deadlock of partial gangs), it ends at the last instant anything happened.
    return metrics.finish(policy, unfinished == 0 ? Math.max(lastSettled, jobs.isEmpty() ? start
        : jobs.get(jobs.size() - 1).submitMillis()) : now, unfinished, partial, options, apps.result(),
        options.expectedStart() ? forecasts.result() : RunResult.StartAccuracy.NONE);
  }

  /**
   * The expected start the status views show, as of the end of this cycle, for each job that arrived in it and waits:
   * its first prediction, which is what a user reads when they first ask.
   */
  private static void predict(Engine engine, List<JobRun> arrived, Map<AppId, JobRun> runs,
      StartForecasts forecasts) {
    List<AppId> waiting = new ArrayList<>();
    for (JobRun r : arrived) {
      if (!r.started() && runs.containsKey(r.app)) {
        waiting.add(r.app);
      }
    }
    if (waiting.isEmpty()) {
      return;
    }
    Map<AppId, Map<String, ExpectedStart>> starts = engine.expectedStarts(waiting);
    for (AppId id : waiting) {
      Map<String, ExpectedStart> byKey = starts.getOrDefault(id, Map.of());
      forecasts.predicted(runs.get(id), byKey.getOrDefault("workers",
          ExpectedStart.UNKNOWN));
    }
  }

  /**
   * Carries out a {@link Decision.Preempt}: the victim's containers are killed and reported ended at the next cycle.
   * The engine preempts a job whole (a gang, or its one container), so every container it holds must be named.
   */
  private static void kill(Decision.Preempt p, JobRun r, long now, PreemptionDriver apps, MetricsCollector metrics,
      Map<Long, Decision.Allocate> allocations, List<EngineEvent> carried) {
    if (r == null || !new HashSet<>(p.allocationIds()).equals(new HashSet<>(r.allocationIds))) {
      throw new IllegalStateException("preemption of " + p.allocationIds() + " of application " + p.appId()
          + " is not the whole of a running job: " + (r == null ? "not running" : r.allocationIds));
    }
    apps.preempted(p, r, now);
    metrics.preempted(r);
    r.preemptedAtMillis = now;
    for (long id : r.allocationIds) {
      carried.add(new EngineEvent.ContainerFinished(id));
      release(metrics, allocations.remove(id));
    }
    r.forgetContainers();
  }

  /** Carries out an elastic job's resize: only the members named are killed; the job runs on without them. */
  private static void shrink(Decision.Preempt p, JobRun r, long now, PreemptionDriver apps, MetricsCollector metrics,
      Map<Long, Decision.Allocate> allocations, List<EngineEvent> carried) {
    if (r == null || !r.allocationIds.containsAll(p.allocationIds()) || !r.progress.running()) {
      throw new IllegalStateException("resize of " + p.allocationIds() + " of application " + p.appId()
          + " names containers the running job does not hold: " + (r == null ? "not running" : r.allocationIds));
    }
    double gpusBefore = r.heldGpus();
    for (long id : p.allocationIds()) {
      carried.add(new EngineEvent.ContainerFinished(id));
      Decision.Allocate a = allocations.remove(id);
      release(metrics, a);
      metrics.shrank(r, a.charge());
    }
    r.forget(p.allocationIds());
    apps.shrunk(r, gpusBefore, now);
  }

  private static void hold(MetricsCollector metrics, Decision.Allocate a) {
    for (GpuSlot s : a.gpus()) {
      if (s.mig() != null) {
        metrics.mig().hold(a.nodeId(), s.gpuIndex(), s.mig());
      }
    }
  }

  private static void release(MetricsCollector metrics, Decision.Allocate a) {
    for (GpuSlot s : a.gpus()) {
      if (s.mig() != null) {
        metrics.mig().release(a.nodeId(), s.gpuIndex(), s.mig());
      }
    }
  }

  /** What one waiting container counts as in its queue's demand: its whole GPUs, or its MIG profile's charge. */
  private ResourceVector unitDemand(Resources shape) {
    if (!shape.wantsMig()) {
      return shape.baseVector();
    }
    long units = Long.MAX_VALUE;
    for (GpuModel m : cluster.catalog().modelsOffering(shape.migProfile())) {
      units = Math.min(units, m.profile(shape.migProfile()).orElseThrow().gpuUnits());
    }
    return shape.baseVector().plus(new ResourceVector(0, 0, units * shape.migInstances()));
  }

  /**
   * Isolated queues (the HeliosArtifact rule that every VC has its own machines) on an engine that has no node
   * labels: each partition's GPUs get a model of their own, named {@code <model>@<queue>}, and each job asks for
   * its queue's model, so the engine's per-model placement index keeps every job on its own queue's nodes.
   */
  private static final class Partitioning {
    final GpuModelCatalog catalog;
    private final ClusterSpec cluster;
    private final boolean active;
    private final Map<String, GpuModel> models = new LinkedHashMap<>();

    Partitioning(ClusterSpec cluster, boolean isolate) {
      this.cluster = cluster;
      this.active = isolate && !cluster.partitions().isEmpty();
      if (!active) {
        catalog = cluster.catalog();
        return;
      }
      List<GpuModel> all = new ArrayList<>(cluster.catalog().models());
      for (Node n : cluster.nodes()) {
        String p = cluster.partitions().get(n.id().value());
        GpuModel base = n.gpuModel();
        if (p != null && base != null) {
          String name = base.name() + "@" + p;
          if (!models.containsKey(name)) {
            GpuModel m = new GpuModel(name, base.memoryGb(), base.memorySlices(), base.computeSlices(),
                base.profiles(), List.of());
            models.put(name, m);
            all.add(m);
          }
        }
      }
      catalog = GpuModelCatalog.of(all);
    }

    Node node(Node n) {
      String p = active ? cluster.partitions().get(n.id().value()) : null;
      if (p == null || n.gpus().isEmpty()) {
        return n;
      }
      GpuModel m = models.get(n.gpuModel().name() + "@" + p);
      List<Gpu> gpus = new ArrayList<>();
      for (Gpu g : n.gpus()) {
        gpus.add(g.migEnabled() ? Gpu.mig(g.index(), m, g.nvlinkIsland(), MigLayout.of(m, g.migLayout().placements()))
            : new Gpu(g.index(), m, g.nvlinkIsland(), false));
      }
      return new Node(n.id(), n.location(), n.memoryMb(), n.vcores(), gpus);
    }

    /** A job of a partitioned queue asks for its partition's model (whatever model the trace named). */
    Resources shapeFor(Resources shape, SimJob job) {
      if (!active || (shape.gpus() == 0 && !shape.wantsMig())) {
        return shape;
      }
      for (Map.Entry<String, GpuModel> e : models.entrySet()) {
        if (e.getKey().endsWith("@" + job.queue())) {
          return shape.withGpuModel(e.getKey());
        }
      }
      return shape;
    }
  }
}
