package io.spindle.bench;

import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.ManualClock;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuIsolation;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Core engine throughput: how many placement decisions per second one engine makes, and the heap it needs.
 *
 * <p>Cluster: N nodes x 8 H100 (one NVLink island), 128 vcores, 1 TiB, on 50 racks. Queues: a 3-level tree,
 * root -> 4 organisations -> 5 teams each = 20 leaves. Workload: 100,000 pending single containers from 2,000
 * applications (10 users per leaf); 55% ask 1 GPU, 5% 2 GPUs, 2.5% 4 GPUs, the rest CPU only (0.75 GPU per
 * container on average, so 10,000 nodes can hold nearly all of them and 1,000 nodes hold about a tenth).
 *
 * <p>Two phases per size: <b>fill</b> (one cycle sees all 100,000 demands on an empty cluster) and <b>churn</b>
 * (cycles in which 1,000 containers end and 1,000 new ones are asked for). Decisions counted are
 * {@code Allocate} decisions, i.e. containers placed; waits are reported apart.
 *
 * <p>With {@code --fractional=F} every GPU is time-sliced and a fraction F of the containers ask for a share of one
 * GPU instead (100, 250 or 500 milli-GPU, equally often); the rest keep the mix above, scaled down. Placement then
 * compares candidates by fragmentation over the recent demand mix.
 *
 * <p>Run: {@code scripts/bench-engine [--fractional=0.5] [NODES...]} (builds, then runs this class with a fixed,
 * pre-touched 1 GB heap).
 */
public final class EngineThroughputBenchmark {

  private static final int DEMANDS = 100_000;
  private static final int APPS = 2_000;
  private static final int CHURN_CYCLES = Integer.getInteger("churn.cycles", 100);
  private static final int CHURN_PER_CYCLE = 1_000;
  /** Share of containers that ask for a share of one GPU; 0 keeps the cluster exclusive. */
  private static double fractional;

  public static void main(String[] args) {
    List<String> sizeArgs = new ArrayList<>();
    for (String a : args) {
      if (a.startsWith("--fractional=")) {
        fractional = Double.parseDouble(a.substring("--fractional=".length()));
      } else {
        sizeArgs.add(a);
      }
    }
    int[] sizes = sizeArgs.isEmpty() ? new int[] {1_000, 10_000} : parse(sizeArgs.toArray(new String[0]));
    System.out.printf(Locale.ROOT, "Spindle core engine throughput (JDK %s, %d CPUs, max heap %d MB)%s%n",
        System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
        Runtime.getRuntime().maxMemory() >> 20, fractional > 0 ? String.format(Locale.ROOT,
            "; every GPU time-sliced, %.0f%% of containers ask a share of one GPU", fractional * 100) : "");
    // Warm-up so that the first reported size is not a JIT measurement; at most the default number of churn cycles, so
    // that a longer measurement (churn.cycles, e.g. under a profiler) is not mostly warm-up on the small cluster.
    run(500, 20_000, Math.min(CHURN_CYCLES, 100), false);
    System.out.printf(Locale.ROOT, "%-8s %-6s %10s %10s %12s %10s %12s %14s%n",
        "nodes", "phase", "placed", "waiting", "decisions/s", "ms/cycle", "median ms", "peak heap MB");
    for (int nodes : sizes) {
      run(nodes, DEMANDS, CHURN_CYCLES, true);
    }
  }

  private static int[] parse(String[] args) {
    int[] out = new int[args.length];
    for (int i = 0; i < args.length; i++) {
      out[i] = Integer.parseInt(args[i].replace("_", ""));
    }
    return out;
  }

  private static void run(int nodeCount, int demands, int churnCycles, boolean print) {
    System.gc();
    resetPeakHeap();
    ManualClock clock = new ManualClock(0);
    GpuModelCatalog catalog = GpuModelCatalog.builtIn();
    Topology.Builder topo = Topology.builder("rack");
    for (int r = 0; r < 50; r++) {
      topo.location("/rack" + r);
    }
    Engine engine = new Engine(catalog, queues(), topo.build(), clock);

    List<EngineEvent> setup = new ArrayList<>(nodeCount);
    GpuModel h100 = catalog.require("model", "H100-80GB");
    for (int i = 0; i < nodeCount; i++) {
      List<Gpu> gpus = new ArrayList<>(8);
      for (int g = 0; g < 8; g++) {
        gpus.add(fractional > 0 ? Gpu.shared(g, h100, 0, GpuSharing.TIME_SLICE) : new Gpu(g, h100, 0, false));
      }
      setup.add(new EngineEvent.NodeAdded(new Node(NodeId.of("node" + i), "/rack" + (i % 50), 1 << 20, 128, gpus)));
    }
    engine.cycle(setup);

    Random rnd = new Random(7);
    List<EngineEvent> work = new ArrayList<>(demands + APPS);
    for (int a = 0; a < APPS; a++) {
      int leaf = a % 20;
      work.add(new EngineEvent.AppSubmitted(AppId.of("app" + a), "team" + leaf, "user" + leaf + "-" + (a / 20) % 10,
          rnd.nextInt(3)));
    }
    int perApp = demands / APPS;
    for (int a = 0; a < APPS; a++) {
      for (int k = 0; k < perApp; k++) {
        work.add(new EngineEvent.Demand(AppId.of("app" + a), "r" + k, shape(rnd), 1));
      }
    }
    clock.advance(1_000);
    long t0 = System.nanoTime();
    CycleResult fill = engine.cycle(work);
    long fillNanos = System.nanoTime() - t0;
    if (print) {
      report(nodeCount, "fill", fill.allocations().size(), engine.pendingContainers(), fillNanos, 1, fillNanos);
    }

    // Churn: containers end, the same applications ask again.
    List<Long> running = new ArrayList<>();
    for (Decision.Allocate a : fill.allocations()) {
      running.add(a.allocationId());
    }
    long churnNanos = 0;
    long[] cycleNanos = new long[churnCycles];
    long placed = 0;
    int next = 0;
    for (int c = 0; c < churnCycles; c++) {
      List<EngineEvent> batch = new ArrayList<>();
      for (int k = 0; k < CHURN_PER_CYCLE && !running.isEmpty(); k++) {
        batch.add(new EngineEvent.ContainerFinished(running.remove(rnd.nextInt(running.size()))));
        batch.add(new EngineEvent.Demand(AppId.of("app" + rnd.nextInt(APPS)), "churn" + next++, shape(rnd), 1));
      }
      clock.advance(1_000);
      long t = System.nanoTime();
      CycleResult r = engine.cycle(batch);
      cycleNanos[c] = System.nanoTime() - t;
      churnNanos += cycleNanos[c];
      for (Decision.Allocate a : r.allocations()) {
        running.add(a.allocationId());
      }
      placed += r.allocations().size();
    }
    if (print) {
      java.util.Arrays.sort(cycleNanos);
      report(nodeCount, "churn", placed, engine.pendingContainers(), churnNanos, churnCycles,
          cycleNanos[churnCycles / 2]);
    }
  }

  /** {@code medianNanos}: the median cycle's time, which a pause of the machine or the collector moves less. */
  private static void report(int nodes, String phase, long placed, long waiting, long nanos, int cycles,
      long medianNanos) {
    System.out.printf(Locale.ROOT, "%-8d %-6s %10d %10d %12.0f %10.1f %12.1f %14d%n", nodes, phase, placed, waiting,
        placed / (nanos / 1e9), nanos / 1e6 / cycles, medianNanos / 1e6, peakHeapMb());
  }

  private static Resources shape(Random rnd) {
    int p = rnd.nextInt(1000);
    Resources base = Resources.of(8_192L * (1 + rnd.nextInt(8)), 1 + rnd.nextInt(8));
    if (fractional > 0) {
      if (rnd.nextDouble() < fractional) {
        int[] milli = {100, 250, 500};
        return base.withShare(milli[rnd.nextInt(milli.length)], 0, GpuIsolation.ANY);
      }
    }
    if (p < 550) {
      return base.withGpus(1);
    } else if (p < 600) {
      return base.withGpus(2);
    } else if (p < 625) {
      return base.withGpus(4);
    }
    return base;
  }

  /** root -> org0..org3 (25% each) -> team0..team19 (20% of their org each). */
  private static QueueTree queues() {
    Map<String, String> conf = new HashMap<>();
    String p = QueueConfigParser.PREFIX;
    conf.put(p + "root.queues", "org0,org1,org2,org3");
    for (int o = 0; o < 4; o++) {
      conf.put(p + "root.org" + o + ".capacity", "25");
      StringBuilder teams = new StringBuilder();
      for (int t = 0; t < 5; t++) {
        int leaf = o * 5 + t;
        teams.append(t == 0 ? "" : ",").append("team").append(leaf);
        conf.put(p + "root.org" + o + ".team" + leaf + ".capacity", "20");
        conf.put(p + "root.org" + o + ".team" + leaf + ".user-limit-factor", "2");
        conf.put(p + "root.org" + o + ".team" + leaf + ".spindle.weight", Integer.toString(1 + leaf % 3));
      }
      conf.put(p + "root.org" + o + ".queues", teams.toString());
    }
    return new QueueConfigParser().parse(conf);
  }

  private static void resetPeakHeap() {
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        pool.resetPeakUsage();
      }
    }
  }

  private static long peakHeapMb() {
    long peak = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        peak += pool.getPeakUsage().getUsed();
      }
    }
    return peak >> 20;
  }
}
