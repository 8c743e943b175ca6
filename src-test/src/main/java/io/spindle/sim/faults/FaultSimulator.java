package io.spindle.sim.faults;

import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.ManualClock;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.HealthEvidence;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.reliability.HealthSettings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Failure injection on virtual time through the engine the ResourceManager runs: large training gangs and background
 * work on a racked cluster, GPUs that fail ({@code GpuHealthReported(FAILED)}) and come back after repair, and the
 * jobs' side of it — a training gang makes progress only while all its members run ({@link TrainingRun}), a
 * background job runs its duration from the start and is started again from scratch when its GPU fails.
 *
 * <p>Randomness is the run's own: one seeded generator per process (hardware faults and which GPU, repair times,
 * soft interruptions per job, background work), so two runs with the same options decide the same, and variants of
 * one seed see the same hardware faults at the same instants on the same GPUs (common random numbers).
 *
 * <p>Injected: interruptions at {@code perGpuHour} per GPU-hour over every GPU of the cluster; a share
 * {@code hardwareShare} are GPU faults (the GPU leaves service; the engine stops and restarts what ran there), the rest
 * are soft (software, network, host) and restart a training job where it runs. Soft interruptions of background work
 * are not modelled.
 */
public final class FaultSimulator {

  private static final GpuHealth FAILED = new GpuHealth(GpuHealth.State.FAILED,
      List.of(new HealthEvidence(HealthEvidence.Kind.XID, 79, "injected: Xid 79, GPU has fallen off the bus")));
  static final String TRAIN = "train";
  static final String BATCH = "batch";

  private enum Kind { CONTAINER_END, REPAIR, FAILURE, SOFT, ARRIVAL, JOB_END, WAKE }

  private record Event(long at, Kind kind, long seq, long a, int b) {}

  /** A job the simulator plays: a training gang or a piece of background work. */
  static final class Job {
    final int index;
    final AppId app;
    final String queue;
    final int members;
    final int gpusPerMember;
    final long durationMillis;
    final long submitMillis;
    final TrainingRun training;
    final Set<Long> held = new LinkedHashSet<>();
    boolean running;
    long startedAt = -1;
    long firstStart = -1;
    int epoch;
    int requests;
    boolean resubmit;
    /** Containers stopped and not yet ended: no longer the job's, still on their GPUs. */
    int stopping;
    boolean done;
    boolean rejected;
    long killedMillis;

    Job(int index, AppId app, String queue, int members, int gpusPerMember, long durationMillis, long submitMillis,
        TrainingRun training) {
      this.index = index;
      this.app = app;
      this.queue = queue;
      this.members = members;
      this.gpusPerMember = gpusPerMember;
      this.durationMillis = durationMillis;
      this.submitMillis = submitMillis;
      this.training = training;
    }

    int gpus() {
      return members * gpusPerMember;
    }
  }

  private final FaultOptions o;
  private final List<BackgroundWork.Sample> mix;
  private final PriorityQueue<Event> events = new PriorityQueue<>((x, y) -> x.at != y.at ? Long.compare(x.at, y.at)
      : x.kind != y.kind ? x.kind.compareTo(y.kind) : Long.compare(x.seq, y.seq));
  private final List<Job> jobs = new ArrayList<>();
  private final Map<AppId, Job> byApp = new HashMap<>();
  private final Map<Long, Job> ofAllocation = new HashMap<>();
  private final Map<Long, NodeId> nodeOf = new HashMap<>();
  private final Set<Long> wakes = new java.util.HashSet<>();
  private final List<NodeId> nodeIds = new ArrayList<>();
  private final boolean[] failed;
  private final SplittableRandom faults;
  private final SplittableRandom repairs;
  private final SplittableRandom soft;
  private final SplittableRandom background;
  /**
   * Background arrivals and ends happen on this grid (rounded up): tens of thousands of jobs a day would otherwise
   * each cost a cycle, and a waiting gang's reservation is re-planned every cycle. Faults, repairs, stops and the
   * training jobs' own events keep their exact times.
   */
  static final long TICK_MILLIS = 60_000;
  private long seq;
  /** The exact time of the next background arrival (its event is at the tick that follows). */
  private long arrivalExact;
  private long engineNanos;
  private long cycles;
  private long hardwareFaults;
  private long faultsOnTraining;
  private int rejected;

  public FaultSimulator(FaultOptions options, List<BackgroundWork.Sample> backgroundMix) {
    this.o = options;
    this.mix = backgroundMix;
    this.failed = new boolean[options.totalGpus()];
    SplittableRandom root = new SplittableRandom(options.seed());
    this.faults = root.split();
    this.repairs = root.split();
    this.soft = root.split();
    this.background = root.split();
  }

  /** Runs the options' days; returns what the jobs and the cluster went through. */
  public FaultResult run() {
    ManualClock clock = new ManualClock(0);
    GpuModelCatalog catalog = GpuModelCatalog.builtIn();
    Topology.Builder topo = Topology.builder("rack");
    int racks = (o.nodes() + o.nodesPerRack() - 1) / o.nodesPerRack();
    for (int r = 0; r < racks; r++) {
      topo.location(rackPath(r));
    }
    EngineSettings settings = EngineSettings.defaults().withRegistrationSettleMillis(0)
        .withHealth(HealthSettings.DEFAULT.withRestartInDomain(o.restartInDomain()));
    Engine engine = new Engine(catalog, new QueueConfigParser().parse(queueConf()), topo.build(), clock, settings);
    GpuModel h100 = catalog.require("model", "H100-80GB");
    List<EngineEvent> first = new ArrayList<>();
    for (int i = 0; i < o.nodes(); i++) {
      List<Gpu> gpus = new ArrayList<>();
      for (int g = 0; g < o.gpusPerNode(); g++) {
        gpus.add(new Gpu(g, h100, 0, false));
      }
      NodeId id = NodeId.of(String.format(Locale.ROOT, "n%05d", i));
      nodeIds.add(id);
      first.add(new EngineEvent.NodeAdded(new Node(id, rackPath(i / o.nodesPerRack()), 2_048_000, 192, gpus)));
    }
    long horizon = Math.round(o.days() * 86_400_000);
    int trainingGpus = 0;
    for (int gpus : o.trainingGpus()) {
      int k = jobs.size();
      TrainingRun run = new TrainingRun("train-" + k, gpus, o.intervalFor(gpus), o.writeMillis(),
          o.startupMillis(), 0);
      Job j = add(new Job(k, AppId.of("train-" + k), TRAIN, gpus / o.gpusPerNode(), o.gpusPerNode(), horizon, 0,
          run));
      first.addAll(submit(j));
      trainingGpus += gpus;
    }
    BackgroundWork work = new BackgroundWork(mix, background, o.gpusPerNode(), o.backgroundGpuScale());
    double bgGpus = Math.max(0, o.totalGpus() - trainingGpus) * o.backgroundLoad();
    for (BackgroundWork.Job b : work.initial(bgGpus)) {
      schedule(0, Kind.ARRIVAL, add(background(b, 0)).index, 0);
    }
    double arrivalsPerMs = work.arrivalsPerMillis(bgGpus);
    if (arrivalsPerMs > 0) {
      arrivalExact = exp(background, arrivalsPerMs);
      schedule(tick(arrivalExact), Kind.ARRIVAL, -1, 0);
    }
    double faultsPerMs = o.perGpuHour() * o.hardwareShare() * o.totalGpus() / 3_600_000.0;
    if (faultsPerMs > 0) {
      schedule(exp(faults, faultsPerMs), Kind.FAILURE, 0, 0);
    }
    long now = 0;
    List<EngineEvent> batch = first;
    while (true) {
      clock.set(now);
      long t0 = System.nanoTime();
      CycleResult r = engine.cycle(batch);
      engineNanos += System.nanoTime() - t0;
      cycles++;
      apply(r, now);
      engine.nextReservationDeadlineMillis().ifPresent(d -> {
        if (d > clock.nowMillis() && wakes.add(d)) {
          schedule(d, Kind.WAKE, 0, 0);
        }
      });
      Event next = events.peek();
      if (next == null || next.at > horizon) {
        break;
      }
      now = next.at;
      batch = new ArrayList<>();
      while (!events.isEmpty() && events.peek().at == now) {
        handle(events.poll(), now, work, arrivalsPerMs, faultsPerMs, batch);
      }
    }
    for (Job j : jobs) {
      if (j.training != null) {
        j.training.end(horizon);
      }
    }
    return FaultResult.of(o, jobs, horizon, hardwareFaults, faultsOnTraining, rejected, engine.hotSparesHeld(),
        cycles, engineNanos);
  }

  private static String rackPath(int rack) {
    return String.format(Locale.ROOT, "/rack%03d", rack);
  }

  private Map<String, String> queueConf() {
    int train = 0;
    for (int g : o.trainingGpus()) {
      train += g;
    }
    long pct = Math.min(100, Math.round(100.0 * train / o.totalGpus()));
    Map<String, String> c = new HashMap<>();
    String p = QueueConfigParser.PREFIX;
    c.put(p + "root.queues", TRAIN + "," + BATCH);
    c.put(p + "root." + TRAIN + ".capacity", String.valueOf(pct));
    c.put(p + "root." + BATCH + ".capacity", String.valueOf(100 - pct));
    c.put(p + "root." + TRAIN + ".user-limit-factor", "-1");
    c.put(p + "root." + BATCH + ".user-limit-factor", "-1");
    c.put(p + "root." + TRAIN + "." + QueueConfigParser.HOT_SPARES_PER_RACK, String.valueOf(o.sparesPerRack()));
    return c;
  }

  private Job add(Job j) {
    jobs.add(j);
    byApp.put(j.app, j);
    return j;
  }

  private Job background(BackgroundWork.Job b, long at) {
    int k = jobs.size();
    return new Job(k, AppId.of("bg-" + k), BATCH, b.members(), b.gpusPerMember(), b.durationMillis(), at, null);
  }

  private List<EngineEvent> submit(Job j) {
    return List.of(new EngineEvent.AppSubmitted(j.app, j.queue, "u-" + j.queue, 0, null), demand(j));
  }

  private EngineEvent demand(Job j) {
    boolean gang = j.members > 1;
    // Training gangs are not preemptible and declare no end; background work declares its run time exactly, is
    // preemptible (so short work may borrow spares), and a gang of it restarts whole when it loses a member.
    PlacementSpec spec = j.training != null ? new PlacementSpec(true, null, false, 0, false)
        : new PlacementSpec(gang, null, false, j.durationMillis, true);
    Resources shape = Resources.of(1024L * j.gpusPerMember, 2 * j.gpusPerMember).withGpus(j.gpusPerMember);
    return new EngineEvent.Demand(j.app, "r" + (j.requests++), shape, j.members, spec);
  }

  private void handle(Event e, long now, BackgroundWork work, double arrivalsPerMs, double faultsPerMs,
      List<EngineEvent> batch) {
    switch (e.kind) {
      case CONTAINER_END -> {
        Job j = ofAllocation.remove(e.a);
        nodeOf.remove(e.a);
        if (j != null) {
          j.stopping--;
          batch.add(new EngineEvent.ContainerFinished(e.a));
          if (j.resubmit && j.stopping == 0) {
            j.resubmit = false;
            batch.add(demand(j));
          }
        }
      }
      case REPAIR -> {
        failed[(int) e.a] = false;
        batch.add(new EngineEvent.GpuHealthReported(nodeIds.get((int) e.a / o.gpusPerNode()),
            (int) e.a % o.gpusPerNode(), GpuHealth.HEALTHY));
      }
      case FAILURE -> {
        if (e.b == 1) { // Scripted (tests): GPU 0 of the node training job e.a's first member runs on.
          Job j = jobs.get((int) e.a);
          int g = nodeIds.indexOf(nodeOf.get(j.held.iterator().next())) * o.gpusPerNode();
          failed[g] = true;
          hardwareFaults++;
          batch.add(new EngineEvent.GpuHealthReported(nodeIds.get(g / o.gpusPerNode()), 0, FAILED));
          schedule(now + o.repair().draw(repairs), Kind.REPAIR, g, 0);
          return;
        }
        int g = faults.nextInt(failed.length);
        if (!failed[g]) { // A GPU already out cannot fail again: the per-GPU processes of the healthy ones remain.
          failed[g] = true;
          hardwareFaults++;
          batch.add(new EngineEvent.GpuHealthReported(nodeIds.get(g / o.gpusPerNode()), g % o.gpusPerNode(), FAILED));
          schedule(now + o.repair().draw(repairs), Kind.REPAIR, g, 0);
        }
        schedule(now + exp(faults, faultsPerMs), Kind.FAILURE, 0, 0);
      }
      case SOFT -> {
        Job j = jobs.get((int) e.a);
        if (j.training.running() && j.training.segment == e.b) {
          j.training.restartedInPlace(now);
          scheduleSoft(j, now);
        }
      }
      case ARRIVAL -> {
        if (e.a >= 0) {
          batch.addAll(submit(jobs.get((int) e.a)));
          return;
        }
        // Every arrival whose exact time falls in this tick arrives now, in order; the chain of exact times goes on.
        while (arrivalExact <= now) {
          batch.addAll(submit(add(background(work.next(), now))));
          arrivalExact += exp(background, arrivalsPerMs);
        }
        schedule(tick(arrivalExact), Kind.ARRIVAL, -1, 0);
      }
      case JOB_END -> {
        Job j = jobs.get((int) e.a);
        if (j.running && j.epoch == e.b) {
          j.running = false;
          j.done = true;
          for (long id : j.held) {
            ofAllocation.remove(id);
            nodeOf.remove(id);
            batch.add(new EngineEvent.ContainerFinished(id));
          }
          j.held.clear();
          batch.add(new EngineEvent.AppFinished(j.app));
        }
      }
      case WAKE -> wakes.remove(e.at);
      default -> throw new IllegalStateException("unknown event " + e);
    }
  }

  private void apply(CycleResult r, long now) {
    for (Decision d : r.decisions()) {
      if (d instanceof Decision.Allocate a) {
        Job j = byApp.get(a.appId());
        j.held.add(a.allocationId());
        ofAllocation.put(a.allocationId(), j);
        nodeOf.put(a.allocationId(), a.nodeId());
        if (!j.running && j.held.size() == j.members) {
          start(j, now);
        }
      } else if (d instanceof Decision.RestartGang g) {
        Job j = byApp.get(g.appId());
        if (j.training != null && j.running) {
          faultsOnTraining++;
        }
        stop(j, g.allocationIds(), now, false);
      } else if (d instanceof Decision.StopContainers s) {
        stop(byApp.get(s.appId()), s.allocationIds(), now, true);
      } else if (d instanceof Decision.Reject x) {
        Job j = byApp.get(x.appId());
        j.rejected = true;
        rejected++;
      }
    }
  }

  private void start(Job j, long now) {
    j.running = true;
    j.startedAt = now;
    j.epoch++;
    if (j.firstStart < 0) {
      j.firstStart = now;
    }
    if (j.training != null) {
      j.training.started(now);
      scheduleSoft(j, now);
    } else {
      schedule(tick(now + j.durationMillis), Kind.JOB_END, j.index, j.epoch);
    }
  }

  /**
   * The engine stops containers of {@code j}: it stops running (a background job loses what it ran, a training gang
   * what it trained since its last checkpoint) and the containers end {@code stopMillis} later. A gang is re-queued by
   * the engine itself; single containers are asked for again once they have ended ({@code resubmit}).
   */
  private void stop(Job j, List<Long> ids, long now, boolean resubmit) {
    if (j.running) {
      j.running = false;
      j.epoch++;
      if (j.training != null) {
        j.training.interrupted(now);
      } else {
        j.killedMillis += now - j.startedAt;
      }
    }
    for (long id : ids) {
      if (j.held.remove(id)) {
        j.stopping++;
        schedule(now + o.stopMillis(), Kind.CONTAINER_END, id, 0);
      }
    }
    j.resubmit |= resubmit;
  }

  private void scheduleSoft(Job j, long now) {
    double rate = o.perGpuHour() * (1 - o.hardwareShare()) * j.gpus() / 3_600_000.0;
    if (rate > 0) {
      schedule(now + exp(soft, rate), Kind.SOFT, j.index, j.training.segment);
    }
  }

  /** Fails GPU 0 of the node under training job {@code job}'s first member at {@code atMillis} (tests). */
  void failTrainingAt(long atMillis, int job) {
    schedule(atMillis, Kind.FAILURE, job, 1);
  }

  /** The nodes training job {@code job} holds now, in the order it got them (tests). */
  List<NodeId> nodesOf(int job) {
    List<NodeId> out = new ArrayList<>();
    for (long id : jobs.get(job).held) {
      out.add(nodeOf.get(id));
    }
    return out;
  }

  /** The rack of a node, as this simulator lays them out. */
  String rackOf(NodeId node) {
    return rackPath(nodeIds.indexOf(node) / o.nodesPerRack());
  }

  private void schedule(long at, Kind kind, long a, int b) {
    events.add(new Event(at, kind, seq++, a, b));
  }

  private static long tick(long millis) {
    return (millis + TICK_MILLIS - 1) / TICK_MILLIS * TICK_MILLIS;
  }

  /** An exponential draw with {@code perMilli} events per millisecond; at least 1 ms. */
  static long exp(SplittableRandom random, double perMilli) {
    return Math.max(1, Math.round(-Math.log(1 - random.nextDouble()) / perMilli));
  }
}
