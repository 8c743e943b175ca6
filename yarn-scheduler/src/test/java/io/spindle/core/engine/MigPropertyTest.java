package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.H100;
import static io.spindle.core.Fixtures.node;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.ReconfigureMig;
import io.spindle.core.model.AppId;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.placement.FirstFitSlots;
import io.spindle.core.placement.FragmentationAwareSlots;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.placement.MigSlotPolicy;
import io.spindle.core.placement.RandomSlots;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Thousands of random allocate / release / re-partition sequences on a mixed cluster (MIG H100s, MIG A30s, whole
 * H100s). After every cycle: every layout is legal and every instance is held at most once, containers hold only
 * instances that exist, whole-GPU and MIG work never share a GPU, a re-partition keeps every instance in use and
 * changes the layout, and queue usage equals the sum of what running containers are charged — ending at exactly
 * zero.
 */
class MigPropertyTest {

  private static final Topology TOPO = Topology.builder("rack").location("/r1").build();
  private static final GpuModel A30 = CATALOG.require("model", "A30-24GB");
  private static final String[] H100_PROFILES = {"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"};
  private static final String[] A30_PROFILES = {"1g.6gb", "2g.12gb", "4g.24gb"};
  private static final int SEQUENCES = 1_500;

  @Test
  void randomSequencesKeepLayoutsLegalAndAccountingBalanced() {
    int[] seen = new int[4];
    for (int seed = 0; seed < SEQUENCES; seed++) {
      MigSlotPolicy policy = switch (seed % 3) {
        case 0 -> new FragmentationAwareSlots();
        case 1 -> new FirstFitSlots();
        default -> new RandomSlots(seed);
      };
      runSequence(new Random(seed), policy, seen);
    }
    // The sequences really exercise what they check: MIG and whole-GPU allocations, and re-partitions.
    assertThat(seen[0]).as("MIG allocations").isGreaterThan(5_000);
    assertThat(seen[1]).as("whole-GPU allocations").isGreaterThan(5_000);
    assertThat(seen[2]).as("re-partitions").isGreaterThan(2_000);
    assertThat(seen[3]).as("re-partitions of GPUs with work on them").isGreaterThan(200);
  }

  private void runSequence(Random rnd, MigSlotPolicy policy, int[] seen) {
    ManualClock clock = new ManualClock(0);
    QueueTree tree = queues("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
        "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1");
    Engine e = new Engine(CATALOG, tree, TOPO, clock,
        EngineSettings.defaults().withMigReconfigureMillis(rnd.nextInt(3) * 1000L), policy);
    e.cycle(List.of(
        new EngineEvent.NodeAdded(node("h", "/r1", 1 << 20, 256, H100, 2, 2, true)),
        new EngineEvent.NodeAdded(node("a", "/r1", 1 << 20, 256, A30, 2, 2, true)),
        new EngineEvent.NodeAdded(node("w", "/r1", 1 << 20, 256, H100, 2, 2, false))));

    Map<Long, Allocate> running = new LinkedHashMap<>();
    Map<Long, String> queueOf = new HashMap<>();
    Map<AppId, String> appQueue = new HashMap<>();
    List<ReconfigureMig> inFlight = new ArrayList<>();
    int apps = 0;
    for (int step = 0; step < 25; step++) {
      List<EngineEvent> events = new ArrayList<>();
      int op = rnd.nextInt(10);
      if (op < 4) {
        AppId app = AppId.of("app" + apps++);
        String queue = rnd.nextBoolean() ? "a" : "b";
        appQueue.put(app, queue);
        events.add(new EngineEvent.AppSubmitted(app, queue, "u", rnd.nextInt(2)));
        Resources shape = switch (rnd.nextInt(3)) {
          case 0 -> Resources.of(1024, 1).withMig(H100_PROFILES[rnd.nextInt(H100_PROFILES.length)], 1);
          case 1 -> Resources.of(1024, 1).withMig(A30_PROFILES[rnd.nextInt(A30_PROFILES.length)], 1);
          default -> Resources.of(1024, 1).withGpus(1 + rnd.nextInt(2));
        };
        events.add(new EngineEvent.Demand(app, "r", shape, 1 + rnd.nextInt(4)));
      } else if (op < 7 && !running.isEmpty()) {
        List<Long> ids = new ArrayList<>(running.keySet());
        for (int k = rnd.nextInt(3); k >= 0 && !ids.isEmpty(); k--) {
          long id = ids.remove(rnd.nextInt(ids.size()));
          events.add(new EngineEvent.ContainerFinished(id));
          running.remove(id);
        }
      } else if (!inFlight.isEmpty()) {
        ReconfigureMig r = inFlight.remove(rnd.nextInt(inFlight.size()));
        events.add(new EngineEvent.MigLayoutReported(r.nodeId(), r.gpuIndex(), r.layout()));
      }
      clock.advance(rnd.nextInt(2_000));
      CycleResult result = e.cycle(events);

      for (Decision d : result.decisions()) {
        if (d instanceof Allocate a) {
          seen[a.shape().wantsMig() ? 0 : 1]++;
          running.put(a.allocationId(), a);
          queueOf.put(a.allocationId(), "root." + appQueue.get(a.appId()));
        } else if (d instanceof ReconfigureMig r) {
          boolean busy = false;
          for (Allocate a : running.values()) {
            for (GpuSlot slot : a.gpus()) {
              if (a.nodeId().equals(r.nodeId()) && slot.gpuIndex() == r.gpuIndex()) {
                busy = true;
                assertThat(r.layout().placements()).as("re-partition of %s/%d keeps instances in use", r.nodeId(),
                    r.gpuIndex()).contains(slot.mig());
              }
            }
          }
          assertThat(r.layout()).as("re-partition changes the layout")
              .isNotEqualTo(e.cluster().migLayouts(r.nodeId()).get(r.gpuIndex()));
          inFlight.add(r);
          seen[2]++;
          seen[3] += busy ? 1 : 0;
        }
      }
      checkInvariants(e, running, queueOf);
    }
    // Everything ends: usage returns to exactly zero.
    List<EngineEvent> finishAll = new ArrayList<>();
    for (int a = 0; a < apps; a++) {
      finishAll.add(new EngineEvent.AppFinished(AppId.of("app" + a)));
    }
    e.cycle(finishAll);
    assertThat(e.runningContainers()).isZero();
    assertThat(e.queueSnapshots()).allSatisfy(q -> {
      assertThat(q.usage()).isEqualTo(ResourceVector.ZERO);
      assertThat(q.pending()).isEqualTo(ResourceVector.ZERO);
    });
  }

  /**
   * Liveness: once arrivals stop and every re-partition has been reported, no MIG request waits while some node has
   * its CPU and memory free and enough idle GPUs (plus free instances) to hold it. Nodes differ in CPU and requests
   * ask for several instances and sometimes one GPU model, so counting instances where they cannot be used shows.
   */
  @Test
  void noMigRequestWaitsWhileIdleGpusOnANodeWithRoomCouldServeIt() {
    int checked = 0;
    for (int seed = 0; seed < 300; seed++) {
      checked += runUntilQuiet(new Random(seed));
    }
    assertThat(checked).as("waiting MIG requests examined at the end").isGreaterThan(100);
  }

  private int runUntilQuiet(Random rnd) {
    ManualClock clock = new ManualClock(0);
    QueueTree tree = queues("root.queues", "a", "root.a.capacity", "100", "root.a.user-limit-factor", "-1");
    Engine e = new Engine(CATALOG, tree, TOPO, clock, EngineSettings.defaults().withMigReconfigureMillis(1_000));
    Map<NodeId, io.spindle.core.model.Node> nodes = new LinkedHashMap<>();
    GpuModel a100 = CATALOG.require("model", "A100-80GB");
    GpuModel[] models = {H100, H100, a100, A30};
    for (int n = 0; n < 4; n++) {
      io.spindle.core.model.Node node = node("n" + n, "/r1", 64_000, 2 + rnd.nextInt(14), models[n], 1 + rnd.nextInt(3),
          4, true);
      nodes.put(node.id(), node);
    }
    List<EngineEvent> setup = new ArrayList<>();
    nodes.values().forEach(n -> setup.add(new EngineEvent.NodeAdded(n)));
    e.cycle(setup);

    Map<Long, Allocate> running = new LinkedHashMap<>();
    Map<AppId, Resources> shapeOf = new HashMap<>();
    List<ReconfigureMig> inFlight = new ArrayList<>();
    int apps = 0;
    for (int step = 0; step < 30; step++) {
      List<EngineEvent> events = new ArrayList<>();
      int op = rnd.nextInt(10);
      if (op < 5) {
        AppId app = AppId.of("app" + apps++);
        events.add(new EngineEvent.AppSubmitted(app, "a", "u", 0));
        boolean a30 = rnd.nextInt(4) == 0;
        String profile = a30 ? A30_PROFILES[rnd.nextInt(A30_PROFILES.length)]
            : H100_PROFILES[rnd.nextInt(H100_PROFILES.length)];
        Resources shape = Resources.of(1024, 1 + rnd.nextInt(6)).withMig(profile, 1 + rnd.nextInt(2));
        if (!a30 && rnd.nextInt(3) == 0) {
          shape = shape.withGpuModel(rnd.nextBoolean() ? "H100-80GB" : "A100-80GB");
        }
        shapeOf.put(app, shape);
        events.add(new EngineEvent.Demand(app, "r", shape, 1 + rnd.nextInt(3)));
      } else if (op < 7 && !running.isEmpty()) {
        List<Long> ids = new ArrayList<>(running.keySet());
        long id = ids.get(rnd.nextInt(ids.size()));
        events.add(new EngineEvent.ContainerFinished(id));
        running.remove(id);
      } else if (!inFlight.isEmpty()) {
        ReconfigureMig r = inFlight.remove(rnd.nextInt(inFlight.size()));
        events.add(new EngineEvent.MigLayoutReported(r.nodeId(), r.gpuIndex(), r.layout()));
      }
      clock.advance(rnd.nextInt(1_500));
      collect(e.cycle(events), running, inFlight);
    }
    // Arrivals stop; every re-partition is reported and served until nothing changes any more.
    for (int round = 0; round < 40; round++) {
      List<EngineEvent> reports = new ArrayList<>();
      inFlight.forEach(r -> reports.add(new EngineEvent.MigLayoutReported(r.nodeId(), r.gpuIndex(), r.layout())));
      inFlight.clear();
      clock.advance(1_000);
      CycleResult r = e.cycle(reports);
      collect(r, running, inFlight);
      if (r.decisions().stream().noneMatch(d -> d instanceof Allocate || d instanceof ReconfigureMig)
          && inFlight.isEmpty()) {
        break;
      }
    }
    int checked = 0;
    for (int a = 0; a < apps; a++) {
      AppId app = AppId.of("app" + a);
      // Requests held back by a queue limit (the cluster's few vcores) wait for another reason.
      if (e.pendingReasons(app).isEmpty() || !e.pendingReasons(app).get("r").contains("MIG instance")) {
        continue;
      }
      checked++;
      Resources shape = shapeOf.get(app);
      for (io.spindle.core.model.Node node : nodes.values()) {
        assertThat(couldHoldOnIdleGpus(e, node, shape, running))
            .as("%s (%s) waits (%s) though node %s could hold it; layouts %s, running %s", app, shape,
                e.pendingReasons(app), node.id(), e.cluster().migLayouts(node.id()), running.values())
            .isFalse();
      }
    }
    return checked;
  }

  private static void collect(CycleResult r, Map<Long, Allocate> running, List<ReconfigureMig> inFlight) {
    for (Decision d : r.decisions()) {
      if (d instanceof Allocate a) {
        running.put(a.allocationId(), a);
      } else if (d instanceof ReconfigureMig m) {
        inFlight.add(m);
      }
    }
  }

  /** Whether the node has the CPU and memory for one container and its idle GPUs and free instances could hold it. */
  private static boolean couldHoldOnIdleGpus(Engine e, io.spindle.core.model.Node node, Resources shape,
      Map<Long, Allocate> running) {
    GpuModel model = node.gpuModel();
    if (model.profile(shape.migProfile()).isEmpty()
        || !shape.models().accepts(model.name())) {
      return false;
    }
    long memory = node.memoryMb();
    long vcores = node.vcores();
    Map<Integer, Integer> held = new HashMap<>();
    for (Allocate a : running.values()) {
      if (a.nodeId().equals(node.id())) {
        memory -= a.shape().memoryMb();
        vcores -= a.shape().vcores();
        a.gpus().forEach(g -> held.merge(g.gpuIndex(), g.mig().sliceMask(), (x, y) -> x | y));
      }
    }
    if (memory < shape.memoryMb() || vcores < shape.vcores()) {
      return false;
    }
    io.spindle.core.model.MigProfile profile = model.profile(shape.migProfile()).orElseThrow();
    int room = 0;
    for (Map.Entry<Integer, MigLayout> g : e.cluster().migLayouts(node.id()).entrySet()) {
      int mask = held.getOrDefault(g.getKey(), 0);
      if (mask == 0) {
        room += MigLayout.empty(model).placeable(profile);
      } else {
        for (MigPlacement p : g.getValue().placements()) {
          if (p.profile().name().equals(profile.name()) && (p.sliceMask() & mask) == 0) {
            room++;
          }
        }
      }
    }
    return room >= shape.migInstances();
  }

  private static void checkInvariants(Engine e, Map<Long, Allocate> running, Map<Long, String> queueOf) {
    Set<String> heldInstances = new HashSet<>();
    Map<String, ResourceVector> usage = new HashMap<>();
    for (Allocate a : running.values()) {
      Map<Integer, MigLayout> layouts = e.cluster().migLayouts(a.nodeId());
      for (GpuSlot slot : a.gpus()) {
        boolean migGpu = layouts.containsKey(slot.gpuIndex());
        assertThat(migGpu).as("MIG work only on MIG GPUs, whole work only on whole GPUs")
            .isEqualTo(slot.mig() != null);
        if (slot.mig() != null) {
          MigPlacement p = slot.mig();
          assertThat(layouts.get(slot.gpuIndex()).placements()).as("held instance exists").contains(p);
          assertThat(heldInstances.add(a.nodeId() + "/" + slot.gpuIndex() + "/" + p)).as("held once").isTrue();
        } else {
          assertThat(heldInstances.add(a.nodeId() + "/" + slot.gpuIndex())).as("whole GPU held once").isTrue();
        }
      }
      long units = a.gpus().stream().mapToLong(s -> s.mig() == null ? ResourceVector.GPU_UNITS
          : s.mig().profile().gpuUnits()).sum();
      assertThat(a.charge()).isEqualTo(new ResourceVector(a.shape().memoryMb(), a.shape().vcores(), units));
      usage.merge(queueOf.get(a.allocationId()), a.charge(), ResourceVector::plus);
    }
    for (NodeId node : e.cluster().nodeIds()) {
      // Rebuilding each layout re-checks legality: legal starts, no overlap, compute budget, instance limits.
      e.cluster().migLayouts(node).forEach((gpu, layout) ->
          assertThat(MigLayout.of(layout.model(), layout.placements())).isEqualTo(layout));
    }
    ResourceVector total = ResourceVector.ZERO;
    for (QueueSnapshot q : e.queueSnapshots()) {
      if (q.path().equals("root.a") || q.path().equals("root.b")) {
        assertThat(q.usage()).as("usage of %s", q.path()).isEqualTo(usage.getOrDefault(q.path(), ResourceVector.ZERO));
        total = total.plus(q.usage());
      }
    }
    assertThat(e.queueSnapshots().get(0).usage()).isEqualTo(total);
  }
}
