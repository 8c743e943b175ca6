package io.spindle.bench;

import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.ManualClock;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Time to place or reject one 256-GPU gang on 10,000 nodes at 50% random GPU occupancy.
 *
 * <p>Cluster: 10,000 nodes x 8 H100 (two 4-GPU NVLink islands), 10 spines x 25 racks x 40 nodes. Occupancy: each
 * node runs one container of k GPUs, k uniform in 0..8 (seeded), so half the GPUs are in use, scattered. Each
 * measured cycle receives one gang (submit + demand) and the time of {@code Engine.cycle} is recorded — event
 * handling (including the impossibility check), fair shares, placement or reservation; the gang then finishes
 * (not timed) so every attempt sees the same cluster.
 *
 * <p>Run: {@code scripts/bench-gang}.
 */
public final class GangPlacementBenchmark {

  private static final int NODES = 10_000;
  private static final int RACKS_PER_SPINE = 25;
  private static final int NODES_PER_RACK = 40;
  private static final int ROUNDS = 200;

  record Case(String name, int members, int gpusEach, String level, boolean required) {}

  public static void main(String[] args) {
    List<Case> cases = List.of(
        new Case("256 x 1 GPU, no constraint", 256, 1, null, false),
        new Case("32 x 8 GPU, no constraint", 32, 8, null, false),
        new Case("64 x 4 GPU, prefer rack", 64, 4, "rack", false),
        new Case("32 x 8 GPU, required rack (waits, reserves)", 32, 8, "rack", true),
        new Case("257 x 8 GPU, required rack (rejected)", 257, 8, "rack", true));
    ManualClock clock = new ManualClock(0);
    Engine engine = occupiedCluster(clock, new Random(11));
    System.out.printf(Locale.ROOT, "Gang placement on %d nodes x 8 GPUs at 50%% random occupancy (JDK %s, %d CPUs)%n",
        NODES, System.getProperty("java.version"), Runtime.getRuntime().availableProcessors());
    System.out.printf(Locale.ROOT, "%-46s %10s %9s %9s %9s %9s%n", "gang (256 GPUs unless rejected)", "outcome",
        "p50 ms", "p99 ms", "max ms", "mean ms");
    for (int warm = 0; warm < 2; warm++) {
      for (Case c : cases) {
        measure(engine, clock, c, warm == 1);
      }
    }
  }

  private static void measure(Engine engine, ManualClock clock, Case c, boolean print) {
    double[] millis = new double[ROUNDS];
    String outcome = "";
    for (int i = 0; i < ROUNDS; i++) {
      String app = "gang-" + c.name().hashCode() + "-" + i + (print ? "" : "-warm");
      List<EngineEvent> submit = List.of(new EngineEvent.AppSubmitted(AppId.of(app), "q", "u", 0),
          new EngineEvent.Demand(AppId.of(app), "workers", Resources.of(4096, 4).withGpus(c.gpusEach()), c.members(),
              new PlacementSpec(true, c.level(), c.required(), 0)));
      clock.advance(1_000);
      long t0 = System.nanoTime();
      CycleResult r = engine.cycle(submit);
      millis[i] = (System.nanoTime() - t0) / 1e6;
      outcome = outcome(r);
      engine.cycle(List.of(new EngineEvent.AppFinished(AppId.of(app))));
    }
    if (print) {
      Arrays.sort(millis);
      System.out.printf(Locale.ROOT, "%-46s %10s %9.2f %9.2f %9.2f %9.2f%n", c.name(), outcome,
          millis[ROUNDS / 2], millis[(int) Math.ceil(ROUNDS * 0.99) - 1], millis[ROUNDS - 1],
          Arrays.stream(millis).average().orElse(0));
    }
  }

  private static String outcome(CycleResult r) {
    if (!r.allocations().isEmpty()) {
      return "placed";
    }
    for (Decision d : r.decisions()) {
      if (d instanceof Decision.Reject) {
        return "rejected";
      }
      if (d instanceof Decision.Reserve) {
        return "reserved";
      }
    }
    return "waits";
  }

  /** One occupier per node: it asks 65 of the 128 vcores, so no two share a node and each lands on the new node. */
  private static Engine occupiedCluster(ManualClock clock, Random rnd) {
    GpuModelCatalog catalog = GpuModelCatalog.builtIn();
    GpuModel h100 = catalog.require("model", "H100-80GB");
    Topology.Builder topo = Topology.builder("spine", "rack");
    int racks = NODES / NODES_PER_RACK;
    for (int r = 0; r < racks; r++) {
      topo.location(rackPath(r));
    }
    QueueTree tree = new QueueConfigParser().parse(Map.of(
        QueueConfigParser.PREFIX + "root.queues", "q",
        QueueConfigParser.PREFIX + "root.q.capacity", "100",
        QueueConfigParser.PREFIX + "root.q.user-limit-factor", "-1"));
    Engine engine = new Engine(catalog, tree, topo.build(), clock);
    long used = 0;
    for (int i = 0; i < NODES; i++) {
      List<Gpu> gpus = new ArrayList<>();
      for (int g = 0; g < 8; g++) {
        gpus.add(new Gpu(g, h100, g / 4, false));
      }
      int k = rnd.nextInt(9);
      List<EngineEvent> events = new ArrayList<>();
      events.add(new EngineEvent.NodeAdded(new Node(NodeId.of("node" + i), rackPath(i / NODES_PER_RACK), 1 << 20,
          128, gpus)));
      // Every node gets its occupier (k may be 0): only the newest node has 65 vcores free, so it lands there.
      events.add(new EngineEvent.AppSubmitted(AppId.of("occupier" + i), "q", "u", 0));
      events.add(new EngineEvent.Demand(AppId.of("occupier" + i), "r", Resources.of(1024, 65).withGpus(k), 1));
      used += k;
      engine.cycle(events);
    }
    System.out.printf(Locale.ROOT, "occupancy: %d of %d GPUs in use (%.1f%%)%n", used, NODES * 8L,
        100.0 * used / (NODES * 8L));
    return engine;
  }

  private static String rackPath(int rack) {
    return "/spine" + rack / RACKS_PER_SPINE + "/rack" + rack;
  }
}
