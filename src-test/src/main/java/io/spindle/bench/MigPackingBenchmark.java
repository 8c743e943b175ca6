package io.spindle.bench;

import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.ManualClock;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.placement.FirstFitSlots;
import io.spindle.core.placement.FragmentationAwareSlots;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.placement.MigSlotPolicy;
import io.spindle.core.placement.RandomSlots;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongFunction;

/**
 * MIG packing: the same seeded stream of single-container MIG requests run through the real {@link Engine} once per
 * MIG slot policy — Spindle's {@link FragmentationAwareSlots} and the baselines {@link FirstFitSlots} and
 * {@link RandomSlots} — on a cluster of H100-80GB GPUs, all in MIG mode with empty layouts at start.
 *
 * <p>A discrete-event simulation on a {@link ManualClock} with a scheduling cycle every simulated second (a tick):
 * the events that fell due since the previous tick (container completions, the NodeManager's layout reports,
 * arrivals) are handed to one {@link Engine#cycle}, and the engine's decisions are applied: an {@code Allocate}
 * starts the container (it ends after its drawn run time, delivered at the first tick at or after that instant);
 * a {@code ReconfigureMig} is applied by the simulated NodeManager, which reports the new layout
 * ({@code MigLayoutReported}) {@code apply} seconds later. The engine puts the new instances in service at the
 * first cycle at or after both the report and {@code availableAtMillis}; since a cycle runs every second and
 * {@code availableAtMillis} falls on a tick, that is exactly {@code max(report, availableAtMillis)}.
 *
 * <p>The harness mirrors every GPU (layout as reported, instances held, re-partition in flight) from the decisions
 * alone, checks each {@code Allocate} against the mirror (the instance must exist, be free and be in service or
 * kept by the re-partition in flight) and each {@code ReconfigureMig} (it must keep every held instance), and
 * integrates the slice categories of {@link MigSliceLedger} over a measurement window after a warm-up.
 *
 * <p>Run: {@code scripts/bench-mig [--key=value ...]}; see {@link Config#parse} for the keys. Output on stdout is a
 * function of the configuration alone (two runs with the same seed print the same); wall-clock times go to stderr.
 */
public final class MigPackingBenchmark {

  static final String MODEL = "H100-80GB";
  static final long TICK_MILLIS = 1_000;
  static final String QUEUE = "default";
  static final int TOP_LAYOUTS = 8;

  /** One profile of the request mix and its share of requests. */
  record Share(String profile, double fraction) {}

  /**
   * Default mix, by number of requests: many small inference and notebook slices (1g.10gb 35%, 1g.20gb 10%),
   * mid-size fine-tuning and serving slices (2g.20gb 20%, 3g.40gb 20%), a few 4g.40gb (5%, the profile that only
   * starts at slice 0) and whole-GPU 7g.80gb training jobs (10%). Weighted by slices, 1g is 20% of the demand,
   * 2g 15%, 3g 29%, 4g 7% and 7g 29%: every size matters, so a packer that strands big slots is punished.
   */
  static final List<Share> DEFAULT_MIX = List.of(
      new Share("1g.10gb", 0.35), new Share("1g.20gb", 0.10), new Share("2g.20gb", 0.20),
      new Share("3g.40gb", 0.20), new Share("4g.40gb", 0.05), new Share("7g.80gb", 0.10));

  /**
   * @param seed the workload seed (and {@link RandomSlots}' seed); with {@code seeds > 1} also seeds
   *     {@code seed+1 .. seed+seeds-1}
   * @param loads offered loads, each a fraction of the cluster's memory slices: arrival rate x mean run time x mean
   *     memory slices per request / total memory slices
   */
  record Config(long seed, int seeds, int nodes, int gpusPerNode, List<Double> loads, double meanRunMinutes,
      double warmupHours, double measureHours, long applyMillis, long reconfigureMillis, List<Share> mix,
      int threads) {

    static Config defaults() {
      return new Config(42, 1, 125, 8, List.of(0.9, 1.0), 30, 4, 12, 20_000,
          EngineSettings.DEFAULT_MIG_RECONFIGURE_MILLIS, DEFAULT_MIX, Runtime.getRuntime().availableProcessors());
    }

    long warmupMillis() {
      return Math.round(warmupHours * 3_600_000);
    }

    long endMillis() {
      return warmupMillis() + Math.round(measureHours * 3_600_000);
    }

    /**
     * Keys: {@code --seed=42 --seeds=1 --nodes=125 --gpus-per-node=8 --loads=0.9,1.0 --mean-run-min=30
     * --warmup-h=4 --measure-h=12 --apply-s=20 --reconfigure-s=30 --mix=1g.10gb:35,1g.20gb:10,...
     * --threads=N} (mix weights are normalised; threads default to the CPUs).
     */
    static Config parse(String[] args) {
      Config d = defaults();
      long seed = d.seed;
      int seeds = d.seeds;
      int nodes = d.nodes;
      int gpusPerNode = d.gpusPerNode;
      List<Double> loads = d.loads;
      double meanRun = d.meanRunMinutes;
      double warmup = d.warmupHours;
      double measure = d.measureHours;
      long apply = d.applyMillis;
      long reconfigure = d.reconfigureMillis;
      List<Share> mix = d.mix;
      int threads = d.threads;
      for (String arg : args) {
        int eq = arg.indexOf('=');
        if (!arg.startsWith("--") || eq < 0) {
          throw new IllegalArgumentException("arguments are --key=value; got '" + arg + "'");
        }
        String key = arg.substring(2, eq);
        String v = arg.substring(eq + 1);
        switch (key) {
          case "seed" -> seed = Long.parseLong(v);
          case "seeds" -> seeds = Integer.parseInt(v);
          case "nodes" -> nodes = Integer.parseInt(v);
          case "gpus-per-node" -> gpusPerNode = Integer.parseInt(v);
          case "loads", "load" -> loads = java.util.Arrays.stream(v.split(",")).map(x -> Double.valueOf(x.strip()))
              .toList();
          case "mean-run-min" -> meanRun = Double.parseDouble(v);
          case "warmup-h" -> warmup = Double.parseDouble(v);
          case "measure-h" -> measure = Double.parseDouble(v);
          case "apply-s" -> apply = Math.round(Double.parseDouble(v) * 1000);
          case "reconfigure-s" -> reconfigure = Math.round(Double.parseDouble(v) * 1000);
          case "mix" -> mix = parseMix(v);
          case "threads" -> threads = Integer.parseInt(v);
          default -> throw new IllegalArgumentException("unknown key --" + key);
        }
      }
      if (loads.isEmpty() || loads.stream().anyMatch(l -> !(l > 0)) || meanRun <= 0 || measure <= 0 || warmup < 0
          || nodes <= 0 || gpusPerNode <= 0 || apply < 0 || reconfigure < 0 || seeds <= 0 || threads <= 0) {
        throw new IllegalArgumentException("loads, run time, window, nodes, GPUs, seeds and threads must be positive");
      }
      return new Config(seed, seeds, nodes, gpusPerNode, loads, meanRun, warmup, measure, apply, reconfigure, mix,
          threads);
    }
  }

  /** {@code 1g.10gb:35,3g.40gb:20} into shares summing to 1. */
  static List<Share> parseMix(String text) {
    List<Share> raw = new ArrayList<>();
    double sum = 0;
    for (String part : text.split(",")) {
      String[] kv = part.strip().split(":");
      if (kv.length != 2) {
        throw new IllegalArgumentException("mix entries are profile:weight; got '" + part + "'");
      }
      double w = Double.parseDouble(kv[1]);
      if (w < 0) {
        throw new IllegalArgumentException("negative weight in mix: " + part);
      }
      raw.add(new Share(kv[0].strip(), w));
      sum += w;
    }
    if (sum <= 0) {
      throw new IllegalArgumentException("mix weights sum to 0: " + text);
    }
    List<Share> out = new ArrayList<>();
    for (Share s : raw) {
      out.add(new Share(s.profile(), s.fraction() / sum));
    }
    return List.copyOf(out);
  }

  /** One request: arrives, asks for one instance of {@code profile}, runs {@code runMillis} once placed. */
  record Request(int id, long arrivalMillis, MigProfile profile, long runMillis) {}

  /** Mean memory slices per request under the mix. */
  static double meanSlices(List<Share> mix, GpuModel model) {
    double s = 0;
    for (Share sh : mix) {
      s += sh.fraction() * profile(model, sh.profile()).memorySlices();
    }
    return s;
  }

  static MigProfile profile(GpuModel model, String name) {
    return model.profile(name).orElseThrow(() -> new IllegalArgumentException(
        "model " + model.name() + " has no MIG profile '" + name + "'; profiles: "
            + model.profiles().stream().map(MigProfile::name).toList()));
  }

  /**
   * The seeded request stream: Poisson arrivals at the rate that offers {@code load} of the cluster's memory
   * slices, profiles drawn from the mix, exponential run times. Drawn once, before any policy runs, so every policy
   * sees the very same requests.
   */
  static List<Request> workload(Config c, double load, long seed, GpuModel model) {
    double meanRunMillis = c.meanRunMinutes() * 60_000;
    double totalSlices = (double) c.nodes() * c.gpusPerNode() * model.memorySlices();
    double ratePerMilli = load * totalSlices / (meanSlices(c.mix(), model) * meanRunMillis);
    MigProfile[] profiles = c.mix().stream().map(s -> profile(model, s.profile())).toArray(MigProfile[]::new);
    double[] cumulative = new double[profiles.length];
    double acc = 0;
    for (int i = 0; i < profiles.length; i++) {
      acc += c.mix().get(i).fraction();
      cumulative[i] = acc;
    }
    Random rnd = new Random(seed);
    List<Request> out = new ArrayList<>();
    double t = 0;
    long end = c.endMillis();
    while (true) {
      t += -Math.log(1 - rnd.nextDouble()) / ratePerMilli;
      if (t >= end) {
        break;
      }
      double u = rnd.nextDouble() * acc;
      int k = 0;
      while (k < profiles.length - 1 && u >= cumulative[k]) {
        k++;
      }
      long run = Math.max(1, Math.round(-Math.log(1 - rnd.nextDouble()) * meanRunMillis));
      out.add(new Request(out.size(), (long) t, profiles[k], run));
    }
    return out;
  }

  /** The slot policies compared, in table order; each run gets a fresh instance. */
  record Policy(String name, java.util.function.Supplier<MigSlotPolicy> create) {}

  static List<Policy> policies(long seed) {
    return List.of(
        new Policy("Spindle FragmentationAwareSlots", FragmentationAwareSlots::new),
        new Policy("FirstFitSlots", FirstFitSlots::new),
        new Policy("RandomSlots(seed=" + seed + ")", () -> new RandomSlots(seed)));
  }

  /** What one policy's run measured in the window. */
  record Result(String policy, double load, long seed, MigSliceLedger.Window window, long arrivedInWindow,
      long placedInWindow,
      long completedInWindow, long unplacedAtEnd, long[] waitsMillis, long repartitionsInWindow,
      long repartitionsTotal, Map<String, double[]> waitByProfile, long cycles, Map<String, Integer> plannedLayouts) {

    double meanWaitSeconds() {
      return Arrays.stream(waitsMillis).average().orElse(Double.NaN) / 1000;
    }

    double p99WaitSeconds() {
      return percentile(waitsMillis, 0.99) / 1000.0;
    }
  }

  /** Nearest-rank percentile of {@code values} (sorted in place); 0 for none. */
  static long percentile(long[] values, double p) {
    if (values.length == 0) {
      return 0;
    }
    Arrays.sort(values);
    int rank = (int) Math.ceil(p * values.length);
    return values[Math.max(0, Math.min(values.length - 1, rank - 1))];
  }

  // ------------------------------------------------------------------ simulation

  /** One MIG GPU as the harness knows it from the decisions and reports. */
  private static final class GpuMirror {
    final int id;
    final String nodeId;
    final int index;
    MigLayout layout;
    int heldMask;
    MigLayout pending;
    /** While a re-partition is in flight: the instances of the layout before it that it keeps, which still serve. */
    List<MigPlacement> kept = List.of();
    long availableAt;
    boolean reported = true;

    GpuMirror(int id, String nodeId, int index, MigLayout layout) {
      this.id = id;
      this.nodeId = nodeId;
      this.index = index;
      this.layout = layout;
    }

    boolean repartitioning() {
      return pending != null;
    }
  }

  private record Running(long endMillis, long allocationId, Request request, int gpu, MigPlacement instance) {}

  private record Report(long atMillis, int gpu, MigLayout layout) {}

  /** Runs one policy over the request stream. */
  static Result simulate(Config c, double load, long seed, List<Request> requests, String policyName,
      MigSlotPolicy policy) {
    GpuModelCatalog catalog = GpuModelCatalog.builtIn();
    GpuModel model = catalog.require("model", MODEL);
    ManualClock clock = new ManualClock(0);
    EngineSettings settings = EngineSettings.defaults()
        .withMigReconfigureMillis(c.reconfigureMillis()).withRegistrationSettleMillis(0); // Nodes known up front.
    Engine engine = new Engine(catalog, queues(), Topology.singleRack(), clock, settings, policy);

    int gpuCount = c.nodes() * c.gpusPerNode();
    GpuMirror[] gpus = new GpuMirror[gpuCount];
    Map<NodeId, Integer> firstGpuOfNode = new HashMap<>();
    List<EngineEvent> setup = new ArrayList<>();
    for (int n = 0; n < c.nodes(); n++) {
      String id = String.format(Locale.ROOT, "mig%04d", n);
      List<Gpu> list = new ArrayList<>();
      for (int g = 0; g < c.gpusPerNode(); g++) {
        list.add(new Gpu(g, model, 0, true));
        gpus[n * c.gpusPerNode() + g] = new GpuMirror(n * c.gpusPerNode() + g, id, g, MigLayout.empty(model));
      }
      firstGpuOfNode.put(NodeId.of(id), n * c.gpusPerNode());
      // CPU and memory far beyond what 56 containers per node (8 GPUs x 7 instances) ask: GPUs are the bottleneck.
      setup.add(new EngineEvent.NodeAdded(new Node(NodeId.of(id), Topology.DEFAULT_RACK, 1L << 20, 128, list)));
    }
    engine.cycle(setup);

    MigSliceLedger ledger = new MigSliceLedger(gpuCount, model.memorySlices());
    Map<MigLayout, Integer> coverage = new HashMap<>();
    Map<String, Integer> plannedLayouts = new HashMap<>();
    long totalUnits = (long) gpuCount * ResourceVector.GPU_UNITS;
    MigSliceLedger.Window window = new MigSliceLedger.Window(c.warmupMillis(), c.endMillis(), ledger.totalSlices(),
        totalUnits);
    Map<String, Resources> shapes = new HashMap<>();
    for (MigProfile p : model.profiles()) {
      shapes.put(p.name(), Resources.of(8_192, 1).withMig(p.name(), 1));
    }

    PriorityQueue<Running> completions = new PriorityQueue<>((a, b) -> a.endMillis != b.endMillis
        ? Long.compare(a.endMillis, b.endMillis) : Long.compare(a.allocationId, b.allocationId));
    ArrayDeque<Report> reports = new ArrayDeque<>(); // apply delay is constant, so reports fall due in order
    List<GpuMirror> inFlight = new ArrayList<>();
    Map<AppId, Request> waitingById = new LinkedHashMap<>();
    int[] waitingBySlices = new int[model.memorySlices() + 1];
    long heldUnits = 0;
    List<Long> waits = new ArrayList<>();
    Map<String, double[]> waitByProfile = new LinkedHashMap<>(); // profile -> {sum ms, count}
    for (Share s : c.mix()) {
      waitByProfile.put(s.profile(), new double[2]);
    }
    long arrived = 0;
    long placed = 0;
    long completed = 0;
    long repartitionsInWindow = 0;
    long repartitionsTotal = 0;
    long cycles = 0;
    int next = 0;
    long start = c.warmupMillis();
    long end = c.endMillis();

    // Before the first tick nothing has arrived (an arrival is seen at the first tick at or after it).
    window.accumulate(0, TICK_MILLIS, ledger.totals(), 0, Integer.MAX_VALUE, 0);
    for (long t = TICK_MILLIS; t <= end; t += TICK_MILLIS) {
      clock.set(t);
      List<EngineEvent> events = new ArrayList<>();
      while (!completions.isEmpty() && completions.peek().endMillis <= t) {
        Running r = completions.poll();
        events.add(new EngineEvent.ContainerFinished(r.allocationId));
        events.add(new EngineEvent.AppFinished(appId(r.request)));
        GpuMirror g = gpus[r.gpu];
        g.heldMask &= ~r.instance.sliceMask();
        update(ledger, g, coverage);
        heldUnits -= r.instance.profile().gpuUnits();
        if (t >= start) {
          completed++;
        }
      }
      while (!reports.isEmpty() && reports.peekFirst().atMillis <= t) {
        Report rep = reports.pollFirst();
        GpuMirror g = gpus[rep.gpu];
        events.add(new EngineEvent.MigLayoutReported(NodeId.of(g.nodeId), g.index, rep.layout));
        g.layout = rep.layout;
        g.reported = true;
      }
      while (next < requests.size() && requests.get(next).arrivalMillis() <= t) {
        Request r = requests.get(next++);
        events.add(new EngineEvent.AppSubmitted(appId(r), QUEUE, "user", 0));
        events.add(new EngineEvent.Demand(appId(r), "c", shapes.get(r.profile().name()), 1));
        waitingById.put(appId(r), r);
        waitingBySlices[r.profile().memorySlices()]++;
        if (r.arrivalMillis() >= start) {
          arrived++;
        }
      }
      // The engine puts re-partitioned GPUs back in service at the start of the cycle, by the same rule.
      for (int i = inFlight.size() - 1; i >= 0; i--) {
        GpuMirror g = inFlight.get(i);
        if (g.reported && t >= g.availableAt) {
          g.pending = null;
          g.kept = List.of();
          inFlight.remove(i);
          update(ledger, g, coverage);
        }
      }

      CycleResult result = engine.cycle(events);
      cycles++;
      for (Decision d : result.decisions()) {
        if (d instanceof Decision.Allocate a) {
          Request r = waitingById.remove(a.appId());
          if (r == null || a.gpus().size() != 1) {
            throw new IllegalStateException("unexpected allocation " + a);
          }
          GpuSlot slot = a.gpus().get(0);
          GpuMirror g = gpus[firstGpuOfNode.get(a.nodeId()) + slot.gpuIndex()];
          MigPlacement inst = slot.mig();
          if ((g.repartitioning() && !g.kept.contains(inst)) || !g.layout.placements().contains(inst)
              || (g.heldMask & inst.sliceMask()) != 0) {
            throw new IllegalStateException("engine placed " + a + " on " + g.nodeId + "/gpu" + g.index
                + " but the harness sees layout " + g.layout + ", held " + Integer.toBinaryString(g.heldMask)
                + (g.repartitioning() ? ", re-partitioning" : ""));
          }
          g.heldMask |= inst.sliceMask();
          update(ledger, g, coverage);
          heldUnits += inst.profile().gpuUnits();
          waitingBySlices[r.profile().memorySlices()]--;
          completions.add(new Running(t + r.runMillis(), a.allocationId(), r, g.id, inst));
          if (r.arrivalMillis() >= start) {
            placed++;
            long wait = t - r.arrivalMillis();
            waits.add(wait);
            double[] w = waitByProfile.computeIfAbsent(r.profile().name(), k -> new double[2]);
            w[0] += wait;
            w[1]++;
          }
        } else if (d instanceof Decision.ReconfigureMig rc) {
          GpuMirror g = gpus[firstGpuOfNode.get(rc.nodeId()) + rc.gpuIndex()];
          if (g.repartitioning() || rc.layout().equals(g.layout)) {
            throw new IllegalStateException("engine re-partitions a GPU already being re-partitioned, or to the "
                + "layout it has: " + rc);
          }
          List<MigPlacement> kept = new ArrayList<>();
          for (MigPlacement inst : g.layout.placements()) {
            if (rc.layout().placements().contains(inst)) {
              kept.add(inst);
            } else if ((g.heldMask & inst.sliceMask()) != 0) {
              throw new IllegalStateException("engine re-partition destroys " + inst + ", which a container holds: "
                  + rc);
            }
          }
          g.kept = List.copyOf(kept);
          g.pending = rc.layout();
          g.availableAt = rc.availableAtMillis();
          g.reported = false;
          inFlight.add(g);
          reports.addLast(new Report(t + c.applyMillis(), g.id, rc.layout()));
          update(ledger, g, coverage);
          if (t >= start) {
            plannedLayouts.merge(describe(rc.layout()), 1, Integer::sum);
          }
          repartitionsTotal++;
          if (t >= start) {
            repartitionsInWindow++;
          }
        } else if (d instanceof Decision.Reject rj) {
          throw new IllegalStateException("engine rejected a request that every node could hold: " + rj);
        }
      }
      window.accumulate(t, t + TICK_MILLIS, ledger.totals(), heldUnits, minWaiting(waitingBySlices),
          waitingById.size());
    }

    // Requests that arrived in the window and still wait at its end count with the wait they have had so far.
    long unplaced = 0;
    for (Request r : waitingById.values()) {
      if (r.arrivalMillis() >= start) {
        unplaced++;
        long wait = end - r.arrivalMillis();
        waits.add(wait);
        double[] w = waitByProfile.computeIfAbsent(r.profile().name(), k -> new double[2]);
        w[0] += wait;
        w[1]++;
      }
    }
    long[] waitArray = waits.stream().mapToLong(Long::longValue).toArray();
    return new Result(policyName, load, seed, window, arrived, placed, completed, unplaced, waitArray,
        repartitionsInWindow,
        repartitionsTotal, waitByProfile, cycles, plannedLayouts);
  }

  private static void update(MigSliceLedger ledger, GpuMirror g, Map<MigLayout, Integer> coverage) {
    int coverable = g.heldMask == 0 || g.repartitioning() ? 0 : coverage.computeIfAbsent(g.layout,
        MigPackingBenchmark::coverableSlices);
    ledger.update(g.id, g.layout.usedSliceMask(), g.heldMask, g.repartitioning(), coverable);
  }

  /**
   * The most memory slices outside the layout that new instances could cover while the existing ones stay (an
   * exhaustive search: a GPU has at most 8 slices).
   */
  static int coverableSlices(MigLayout layout) {
    int outside = layout.freeMemorySlices();
    int best = 0;
    for (MigProfile p : layout.model().profiles()) {
      for (int start : p.legalStarts()) {
        MigPlacement add = new MigPlacement(p, start);
        if (layout.canAdd(add)) {
          best = Math.max(best, p.memorySlices() + coverableSlices(layout.with(add)));
          if (best == outside) {
            return best;
          }
        }
      }
    }
    return best;
  }

  /** A layout as {@code 1g.10gb@0 + 3g.40gb@4}. */
  static String describe(MigLayout layout) {
    return layout.placements().isEmpty() ? "(empty)"
        : String.join(" + ", layout.placements().stream().map(MigPlacement::toString).toList());
  }

  private static int minWaiting(int[] waitingBySlices) {
    for (int s = 1; s < waitingBySlices.length; s++) {
      if (waitingBySlices[s] > 0) {
        return s;
      }
    }
    return Integer.MAX_VALUE;
  }

  private static AppId appId(Request r) {
    return AppId.of("r" + r.id());
  }

  /** One leaf with the whole cluster and no per-user limit: the benchmark measures packing, not fair share. */
  static QueueTree queues() {
    Map<String, String> conf = new HashMap<>();
    String p = QueueConfigParser.PREFIX;
    conf.put(p + "root.queues", QUEUE);
    conf.put(p + "root." + QUEUE + ".capacity", "100");
    conf.put(p + "root." + QUEUE + ".user-limit-factor", "-1");
    return new QueueConfigParser().parse(conf);
  }

  // ------------------------------------------------------------------ main and report

  public static void main(String[] args) throws Exception {
    Config c = Config.parse(args);
    GpuModel model = GpuModelCatalog.builtIn().require("model", MODEL);
    long t0 = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(c.threads(), r -> {
      Thread t = new Thread(r);
      t.setDaemon(true); // a failed run must not leave the JVM waiting on idle workers
      return t;
    });
    Map<String, Integer> requestCounts = new LinkedHashMap<>();
    List<Future<Result>> futures = new ArrayList<>();
    for (int k = 0; k < c.seeds(); k++) {
      long seed = c.seed() + k;
      for (double load : c.loads()) {
        List<Request> requests = workload(c, load, seed, model);
        requestCounts.put(load + "/" + seed, requests.size());
        for (Policy p : policies(seed)) {
          futures.add(pool.submit(() -> {
            long s = System.nanoTime();
            Result r = simulate(c, load, seed, requests, p.name(), p.create().get());
            System.err.printf(Locale.ROOT, "[timing] load %.2f seed %d %s: %.1f s wall, %d cycles%n", load, seed,
                p.name(), (System.nanoTime() - s) / 1e9, r.cycles());
            return r;
          }));
        }
      }
    }
    List<Result> results = new ArrayList<>();
    for (Future<Result> f : futures) {
      results.add(f.get());
    }
    pool.shutdown();
    System.out.print(report(c, model, requestCounts, results));
    System.err.printf(Locale.ROOT, "[timing] total %.1f s wall on %d thread(s)%n", (System.nanoTime() - t0) / 1e9,
        c.threads());
  }

  static String report(Config c, GpuModel model, Map<String, Integer> requestCounts, List<Result> all) {
    StringBuilder out = new StringBuilder();
    LongFunction<String> n = v -> String.format(Locale.ROOT, "%,d", v);
    int gpus = c.nodes() * c.gpusPerNode();
    long slices = (long) gpus * model.memorySlices();
    double meanSlices = meanSlices(c.mix(), model);
    double meanUnits = 0;
    for (Share s : c.mix()) {
      meanUnits += s.fraction() * profile(model, s.profile()).gpuUnits();
    }
    out.append(String.format(Locale.ROOT,
        "Spindle MIG packing benchmark (seed %d%s)%n"
            + "cluster: %d nodes x %d %s = %s GPUs, all in MIG mode with empty layouts at start; %s memory slices;"
            + " 128 vcores and 1 TiB per node (GPUs are the bottleneck)%n"
            + "workload: Poisson arrivals of single-container requests (one MIG instance each), exponential run time"
            + " mean %.0f min%n"
            + "  mix (share of requests): %s%n"
            + "  mean %.3f memory slices (%.3f GPU-equivalents) per request%n",
        c.seed(), c.seeds() > 1 ? ", summary over seeds " + c.seed() + ".." + (c.seed() + c.seeds() - 1) : "",
        c.nodes(), c.gpusPerNode(), model.name(), n.apply(gpus), n.apply(slices), c.meanRunMinutes(),
        mixText(c.mix()), meanSlices, meanUnits / ResourceVector.GPU_UNITS));
    for (double load : c.loads()) {
      double rate = load * slices / (meanSlices * c.meanRunMinutes() * 60);
      out.append(String.format(Locale.ROOT,
          "  offered load %.2f of memory slices (= %.2f of GPU-equivalents): %.3f arrivals/s, %s requests in %.1f h%n",
          load, load * meanUnits / ResourceVector.GPU_UNITS * slices / meanSlices / gpus, rate,
          n.apply(requestCounts.get(load + "/" + c.seed())), c.endMillis() / 3.6e6));
    }
    out.append(String.format(Locale.ROOT,
        "  warm-up %.1f h discarded, measured %.1f h%n"
            + "engine: one cycle every %d ms of simulated time; re-partition: the NodeManager reports the new layout"
            + " %.0f s after the decision, instances usable %.0f s after it (migReconfigureMillis); at most %d GPUs"
            + " re-partitioned per cycle%n%n",
        c.warmupHours(), c.measureHours(), TICK_MILLIS, c.applyMillis() / 1000.0, c.reconfigureMillis() / 1000.0,
        EngineSettings.DEFAULT_MAX_MIG_RECONFIGURATIONS_PER_CYCLE));

    List<Result> results = all.stream().filter(r -> r.seed() == c.seed()).toList();
    out.append("Table 1: packing over the measured window (seed ").append(c.seed()).append(")\n");
    String h1 = String.format(Locale.ROOT,
        "| %4s | %-31s | %17s | %9s | %10s | %11s | %9s | %8s | %9s | %9s | %13s |%n",
        "load", "policy", "stranded slices", "stranding", "slice util", "GPU-eq util", "completed", "unplaced",
        "mean wait", "p99 wait", "re-partitions");
    out.append(h1);
    out.append(h1.replaceAll("[^|\n]", "-"));
    for (Result r : results) {
      MigSliceLedger.Window w = r.window();
      out.append(String.format(Locale.ROOT,
          "| %4.2f | %-31s | %7.1f (%6.2f%%) | %8.1f%% | %9.2f%% | %10.2f%% | %9s | %8s | %8.1fs | %8.1fs | %13s |%n",
          r.load(), r.policy(), w.strandedSlices(), 100 * w.strandedSlices() / slices, 100 * w.strandingShare(),
          100 * w.sliceUtilisation(), 100 * w.unitUtilisation(), n.apply(r.completedInWindow()),
          n.apply(r.unplacedAtEnd()), r.meanWaitSeconds(), r.p99WaitSeconds(), n.apply(r.repartitionsInWindow())));
    }

    out.append("\nTable 2: stranded slices by where they are (time-averaged over the window, 0 when not stranding);"
        + " all free slices and waiting requests (time-averaged over the whole window)\n");
    String h2 = String.format(Locale.ROOT, "| %4s | %-31s | %13s | %13s | %6s | %8s | %15s | %11s | %12s |%n",
        "load", "policy", "free instance", "unpartitioned", "dead", "idle GPU", "re-partitioning", "free slices",
        "waiting reqs");
    out.append(h2);
    out.append(h2.replaceAll("[^|\n]", "-"));
    for (Result r : results) {
      MigSliceLedger.Window w = r.window();
      double free = 0;
      for (int k = 1; k < MigSliceLedger.CATEGORIES; k++) {
        free += w.averageByCategory(k);
      }
      out.append(String.format(Locale.ROOT,
          "| %4.2f | %-31s | %13.1f | %13.1f | %6.1f | %8.1f | %15.1f | %11.1f | %12.1f |%n",
          r.load(), r.policy(), w.strandedByCategory(MigSliceLedger.FREE_INSTANCE),
          w.strandedByCategory(MigSliceLedger.UNPARTITIONED), w.strandedByCategory(MigSliceLedger.DEAD),
          w.strandedByCategory(MigSliceLedger.IDLE_GPU), w.strandedByCategory(MigSliceLedger.REPARTITIONING), free,
          w.averageWaiting()));
    }

    out.append("\nTable 3: mean wait by profile (s), requests that arrived in the window\n");
    StringBuilder h3 = new StringBuilder(String.format(Locale.ROOT, "| %4s | %-31s |", "load", "policy"));
    for (Share s : c.mix()) {
      h3.append(String.format(Locale.ROOT, " %8s |", s.profile()));
    }
    h3.append('\n');
    out.append(h3);
    out.append(h3.toString().replaceAll("[^|\n]", "-"));
    for (Result r : results) {
      out.append(String.format(Locale.ROOT, "| %4.2f | %-31s |", r.load(), r.policy()));
      for (Share s : c.mix()) {
        double[] w = r.waitByProfile().get(s.profile());
        out.append(String.format(Locale.ROOT, " %8.1f |", w == null || w[1] == 0 ? Double.NaN : w[0] / w[1] / 1000));
      }
      out.append('\n');
    }

    out.append("\nTable 4: layouts the re-partitions created (decided in the window), most frequent first (top "
        + TOP_LAYOUTS + ")\n");
    for (Result r : results) {
      long total = r.plannedLayouts().values().stream().mapToLong(Integer::longValue).sum();
      out.append(String.format(Locale.ROOT, "  load %.2f, %s: %s re-partitions%n", r.load(), r.policy(),
          n.apply(total)));
      List<Map.Entry<String, Integer>> top = new ArrayList<>(r.plannedLayouts().entrySet());
      top.sort((a, b) -> a.getValue().equals(b.getValue()) ? a.getKey().compareTo(b.getKey())
          : Integer.compare(b.getValue(), a.getValue()));
      for (Map.Entry<String, Integer> e : top.subList(0, Math.min(TOP_LAYOUTS, top.size()))) {
        out.append(String.format(Locale.ROOT, "    %6s  %5.1f%%  %s%n", n.apply(e.getValue()),
            100.0 * e.getValue() / total, e.getKey()));
      }
    }
    out.append("\nrequests that arrived in the window / were placed in it:\n");
    for (Result r : results) {
      out.append(String.format(Locale.ROOT, "  load %.2f, %s: %s / %s%n", r.load(), r.policy(),
          n.apply(r.arrivedInWindow()), n.apply(r.placedInWindow())));
    }

    if (c.seeds() > 1) {
      out.append(String.format(Locale.ROOT, "%nTable 5: over seeds %d..%d, mean [min .. max]%n", c.seed(),
          c.seed() + c.seeds() - 1));
      String h5 = String.format(Locale.ROOT, "| %4s | %-31s | %-26s | %-26s | %-26s | %-26s |%n", "load", "policy",
          "stranded slices", "slice util %", "mean wait s", "p99 wait s");
      out.append(h5);
      out.append(h5.replaceAll("[^|\n]", "-"));
      for (double load : c.loads()) {
        for (Policy p : policies(c.seed())) {
          List<Result> rs = all.stream().filter(r -> r.load() == load && samePolicy(r.policy(), p.name())).toList();
          String name = p.name().startsWith("RandomSlots") ? "RandomSlots(seed = run's seed)" : p.name();
          out.append(String.format(Locale.ROOT, "| %4.2f | %-31s | %s | %s | %s | %s |%n", load, name,
              spread(rs, r -> r.window().strandedSlices()), spread(rs, r -> 100 * r.window().sliceUtilisation()),
              spread(rs, Result::meanWaitSeconds), spread(rs, Result::p99WaitSeconds)));
        }
      }
      out.append("seeds where Spindle's packer strands fewer slices than FirstFitSlots:");
      for (double load : c.loads()) {
        int wins = 0;
        for (int k = 0; k < c.seeds(); k++) {
          long seed = c.seed() + k;
          Result fa = find(all, load, seed, "Spindle");
          Result ff = find(all, load, seed, "FirstFit");
          if (fa.window().strandedSlices() < ff.window().strandedSlices()) {
            wins++;
          }
        }
        out.append(String.format(Locale.ROOT, " load %.2f: %d of %d;", load, wins, c.seeds()));
      }
      out.append('\n');
    }
    return out.toString();
  }

  private static boolean samePolicy(String a, String b) {
    return a.equals(b) || (a.startsWith("RandomSlots") && b.startsWith("RandomSlots"));
  }

  private static Result find(List<Result> all, double load, long seed, String prefix) {
    return all.stream().filter(r -> r.load() == load && r.seed() == seed && r.policy().startsWith(prefix))
        .findFirst().orElseThrow();
  }

  private static String spread(List<Result> rs, java.util.function.ToDoubleFunction<Result> f) {
    double[] v = rs.stream().mapToDouble(f).toArray();
    return String.format(Locale.ROOT, "%7.1f [%7.1f..%7.1f]", Arrays.stream(v).average().orElse(Double.NaN),
        Arrays.stream(v).min().orElse(Double.NaN), Arrays.stream(v).max().orElse(Double.NaN));
  }

  private static String mixText(List<Share> mix) {
    List<String> parts = new ArrayList<>();
    for (Share s : mix) {
      parts.add(String.format(Locale.ROOT, "%s %.1f%%", s.profile(), 100 * s.fraction()));
    }
    return String.join(", ", parts);
  }
}
