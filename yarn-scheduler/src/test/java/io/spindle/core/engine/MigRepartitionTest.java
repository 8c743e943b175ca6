package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.H100;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.ReconfigureMig;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.MigLayoutReported;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Re-partition planning on small clusters, one defect or rule at a time, on a virtual clock. */
class MigRepartitionTest {

  private static final Topology TOPO = Topology.builder("rack").location("/r1").build();
  private static final long RECONFIGURE = EngineSettings.DEFAULT_MIG_RECONFIGURE_MILLIS;

  private final ManualClock clock = new ManualClock(1_000);
  private final Engine engine = new Engine(CATALOG, oneQueue(), TOPO, clock);

  static QueueTree oneQueue() {
    return queues("root.queues", "a", "root.a.capacity", "100", "root.a.user-limit-factor", "-1");
  }

  /** An H100 layout from {@code profile@start} strings. */
  static MigLayout layout(String... instances) {
    List<MigPlacement> placements = new ArrayList<>();
    for (String s : instances) {
      String[] ps = s.split("@");
      placements.add(new MigPlacement(H100.profile(ps[0]).orElseThrow(), Integer.parseInt(ps[1])));
    }
    return MigLayout.of(H100, placements);
  }

  /** A node of H100s in MIG mode with these layouts, GPU i having layouts[i]. */
  static Node migNode(String id, long memoryMb, int vcores, MigLayout... layouts) {
    List<Gpu> gpus = new ArrayList<>();
    for (int i = 0; i < layouts.length; i++) {
      gpus.add(Gpu.mig(i, H100, 0, layouts[i]));
    }
    return new Node(NodeId.of(id), "/r1", memoryMb, vcores, gpus);
  }

  static Resources mig(String profile, int instances) {
    return Resources.of(1024, 1).withMig(profile, instances);
  }

  static List<ReconfigureMig> plans(CycleResult r) {
    return r.decisions().stream().filter(ReconfigureMig.class::isInstance).map(ReconfigureMig.class::cast).toList();
  }

  /** Reports every plan as applied and lets the reconfiguration time pass; returns the next cycle. */
  CycleResult applyAll(List<ReconfigureMig> plans) {
    List<EngineEvent> reports = new ArrayList<>();
    for (ReconfigureMig p : plans) {
      reports.add(new MigLayoutReported(p.nodeId(), p.gpuIndex(), p.layout()));
    }
    engine.cycle(reports);
    clock.advance(RECONFIGURE);
    return engine.cycle(List.of());
  }

  /**
   * A small instance that needs a fresh GPU opens it on the node with the fewest idle GPUs, whatever its model: taking
   * the first model with any option broke the first-registered 8-GPU node while a 2-GPU node of another model was
   * idle, which is why MIG placed fewer multi-GPU tasks than whole GPUs on OpenB lists with many of them.
   */
  @Test
  void aFreshGpuForASmallInstanceComesFromTheNodeWithFewestIdleGpusOfAnyModel() {
    io.spindle.core.model.GpuModel a100 = CATALOG.require("model", "A100-80GB");
    List<Gpu> eight = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      eight.add(Gpu.mig(i, a100, 0, MigLayout.empty(a100)));
    }
    engine.cycle(List.of(new NodeAdded(new Node(NodeId.of("a100x8"), "/r1", 512_000, 64, eight)),
        new NodeAdded(migNode("h100x2", 512_000, 64, MigLayout.empty(H100), MigLayout.empty(H100)))));
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("small"), "a", "u", 0),
        new Demand(AppId.of("small"), "r", mig("1g.10gb", 1), 1)));
    assertThat(plans(r)).singleElement().satisfies(p -> assertThat(p.nodeId().value()).isEqualTo("h100x2"));
  }

  // ------------------------------------------------------------------ multi-instance containers

  @Test
  void aContainerTakesTheSamePlacementOnTwoGpus() {
    // Both GPUs have 7g@0: equal placements, different devices.
    engine.cycle(List.of(new NodeAdded(migNode("m1", 512_000, 64, layout("7g.80gb@0"), layout("7g.80gb@0")))));
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "c", mig("7g.80gb", 2), 1)));

    assertThat(plans(r)).isEmpty();
    assertThat(r.allocations()).singleElement().satisfies(a -> assertThat(a.gpus()).extracting(Object::toString)
        .containsExactly("gpu0:7g.80gb@0", "gpu1:7g.80gb@0"));
  }

  // ------------------------------------------------------------------ C: no re-partition to the same layout

  @Test
  void neverRepartitionsAGpuToTheLayoutItAlreadyHas() {
    // GPU 0 already holds the 7g the container needs; GPU 1 is empty. The container wants two 7g on one node.
    engine.cycle(List.of(new NodeAdded(migNode("m1", 512_000, 64, layout("7g.80gb@0"), MigLayout.empty(H100)))));
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "c", mig("7g.80gb", 2), 1)));
    assertThat(plans(r)).as("only the empty GPU is re-partitioned")
        .singleElement().satisfies(p -> {
          assertThat(p.gpuIndex()).isEqualTo(1);
          assertThat(p.layout()).isEqualTo(layout("7g.80gb@0"));
        });
    List<Allocate> placed = applyAll(plans(r)).allocations();
    assertThat(placed).singleElement().satisfies(a -> assertThat(a.gpus()).hasSize(2));
  }

  @Test
  void prefersAnEmptyIdleGpuToOneWhoseInstancesCouldServeOthers() {
    // Both GPUs are idle; GPU 0's two free 3g instances are worth keeping when GPU 1 is empty.
    engine.cycle(List.of(new NodeAdded(migNode("m1", 512_000, 64,
        layout("3g.40gb@0", "3g.40gb@4"), MigLayout.empty(H100)))));
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "c", mig("7g.80gb", 1), 1)));

    assertThat(plans(r)).singleElement().satisfies(p -> assertThat(p.gpuIndex()).isEqualTo(1));
  }

  // ------------------------------------------------------------------ A: only usable instances count

  @Test
  void freeInstancesOnANodeWithoutRoomForTheContainerDoNotStopPlanning() {
    // "small" has two free 3g instances but 2 vcores; the container asks 4.
    engine.cycle(List.of(new NodeAdded(migNode("small", 512_000, 2, layout("3g.40gb@0", "3g.40gb@4"))),
        new NodeAdded(migNode("big", 512_000, 64, MigLayout.empty(H100)))));
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "c", Resources.of(1024, 4).withMig("3g.40gb", 1), 1)));

    assertThat(plans(r)).singleElement().satisfies(p -> assertThat(p.nodeId()).isEqualTo(NodeId.of("big")));
    assertThat(applyAll(plans(r)).allocations()).singleElement()
        .satisfies(a -> assertThat(a.nodeId()).isEqualTo(NodeId.of("big")));
  }

  @Test
  void freeInstancesOfAnotherGpuModelDoNotStopPlanning() {
    // A100-80GB names its profiles as H100-80GB does; a request for H100s cannot use the A100's 3g instances.
    io.spindle.core.model.GpuModel a100 = CATALOG.require("model", "A100-80GB");
    MigLayout a100Layout = MigLayout.of(a100, List.of(new MigPlacement(a100.profile("3g.40gb").orElseThrow(), 0)));
    engine.cycle(List.of(
        new NodeAdded(new Node(NodeId.of("a"), "/r1", 512_000, 64, List.of(Gpu.mig(0, a100, 0, a100Layout)))),
        new NodeAdded(migNode("h", 512_000, 64, MigLayout.empty(H100)))));
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "c", mig("3g.40gb", 1).withGpuModel("H100-80GB"), 1)));

    assertThat(plans(r)).singleElement().satisfies(p -> assertThat(p.nodeId()).isEqualTo(NodeId.of("h")));
    assertThat(applyAll(plans(r)).allocations()).singleElement().satisfies(a -> assertThat(a.nodeId()).isEqualTo(NodeId.of("h")));
  }

  @Test
  void instancesOnTheirWayCountOnlyForRequestsTheirNodeCanHold() {
    engine.cycle(List.of(new NodeAdded(migNode("small", 512_000, 8, MigLayout.empty(H100))),
        new NodeAdded(migNode("big", 512_000, 64, MigLayout.empty(H100)))));
    CycleResult first = engine.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "thin", mig("3g.40gb", 1), 1)));
    assertThat(plans(first)).singleElement().satisfies(p -> assertThat(p.nodeId()).isEqualTo(NodeId.of("small")));

    // While small is being re-partitioned, a request arrives that needs 48 vcores: small's 3g are no use to it.
    clock.advance(1_000);
    CycleResult second = engine.cycle(List.of(
        new Demand(AppId.of("app"), "fat", Resources.of(1024, 48).withMig("3g.40gb", 1), 1)));
    assertThat(plans(second)).singleElement().satisfies(p -> assertThat(p.nodeId()).isEqualTo(NodeId.of("big")));

    List<ReconfigureMig> all = new ArrayList<>(plans(first));
    all.addAll(plans(second));
    List<Allocate> placed = applyAll(all).allocations();
    assertThat(placed).extracting(Allocate::requestKey).containsExactlyInAnyOrder("thin", "fat");
    assertThat(placed).filteredOn(a -> a.requestKey().equals("fat")).singleElement()
        .satisfies(a -> assertThat(a.nodeId()).isEqualTo(NodeId.of("big")));
  }

  // ------------------------------------------------------------------ B: one container, one node

  @Test
  void allInstancesOfOneContainerArePlannedOnOneNode() {
    // m1's GPU 0 is busy; the container needs two 7g on one node, which only m2 can give.
    engine.cycle(List.of(new NodeAdded(migNode("m1", 512_000, 64, layout("7g.80gb@0"), MigLayout.empty(H100))),
        new NodeAdded(migNode("m2", 512_000, 64, MigLayout.empty(H100), MigLayout.empty(H100)))));
    engine.cycle(List.of(new AppSubmitted(AppId.of("other"), "a", "u", 0), new Demand(AppId.of("other"), "c", mig("7g.80gb", 1), 1)));
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "c", mig("7g.80gb", 2), 1)));

    assertThat(plans(r)).hasSize(2).allSatisfy(p -> assertThat(p.nodeId()).isEqualTo(NodeId.of("m2")));
    assertThat(applyAll(plans(r)).allocations()).singleElement().satisfies(a -> {
      assertThat(a.nodeId()).isEqualTo(NodeId.of("m2"));
      assertThat(a.gpus()).hasSize(2);
    });
  }

  @Test
  void aNodesCpuIsChargedOncePerContainerPlannedOntoIt() {
    // Two containers of 6 vcores: "small" (8 vcores) can run one of them, however many instances its GPU has.
    engine.cycle(List.of(new NodeAdded(migNode("small", 512_000, 8, MigLayout.empty(H100))),
        new NodeAdded(migNode("big", 512_000, 64, MigLayout.empty(H100)))));
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "c", Resources.of(1024, 6).withMig("1g.10gb", 1), 2)));

    assertThat(plans(r)).extracting(ReconfigureMig::nodeId).containsExactlyInAnyOrder(NodeId.of("small"), NodeId.of("big"));
    assertThat(applyAll(plans(r)).allocations()).extracting(Allocate::nodeId)
        .containsExactlyInAnyOrder(NodeId.of("small"), NodeId.of("big"));
  }

  // ------------------------------------------------------------------ D: what fills the rest of a planned GPU

  @Test
  void theRestOfAPlannedGpuIsFilledByTheRecentDemandMix() {
    engine.cycle(List.of(new NodeAdded(migNode("m1", 512_000, 64,
        layout("1g.10gb@0", "1g.10gb@1", "1g.10gb@2", "1g.10gb@3", "1g.10gb@4", "1g.10gb@5", "1g.10gb@6"),
        MigLayout.empty(H100)))));
    // Three 1g.10gb requests are served by GPU 0's free instances: no re-partition, but they are recent demand.
    CycleResult small = engine.cycle(List.of(new AppSubmitted(AppId.of("small"), "a", "u", 0),
        new Demand(AppId.of("small"), "c", mig("1g.10gb", 1), 3)));
    assertThat(small.allocations()).hasSize(3);
    assertThat(plans(small)).isEmpty();

    CycleResult big = engine.cycle(List.of(new AppSubmitted(AppId.of("big"), "a", "u", 0),
        new Demand(AppId.of("big"), "c", mig("4g.40gb", 1), 1)));
    // The 4g leaves 4 memory and 3 compute slices: the recent mix (1g.10gb) gets them instead of nothing.
    assertThat(plans(big)).singleElement().satisfies(p -> assertThat(p.layout())
        .isEqualTo(layout("4g.40gb@0", "1g.10gb@4", "1g.10gb@5", "1g.10gb@6")));
  }

  @Test
  void spaceIsApportionedByRecentMemorySlicesAndNoRecentProfileLeavesItEmpty() {
    engine.cycle(List.of(new NodeAdded(migNode("m1", 512_000, 64,
        layout("2g.20gb@0", "2g.20gb@2", "2g.20gb@4", "1g.20gb@6"), MigLayout.empty(H100), MigLayout.empty(H100)))));
    // Served at once by GPU 0: 2g.20gb was asked for twice the memory slices of 1g.20gb.
    CycleResult first = engine.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "two", mig("2g.20gb", 1), 2), new Demand(AppId.of("app"), "one", mig("1g.20gb", 1), 1)));
    assertThat(first.allocations()).hasSize(3);

    CycleResult r = engine.cycle(List.of(new Demand(AppId.of("app"), "four", mig("4g.40gb", 1), 1),
        new Demand(AppId.of("app"), "seven", mig("7g.80gb", 1), 1)));
    // Beside the 4g: a 2g first (quotient 4/2 against 2/2), then 1g.20gb and 2g tie at 1 and the name decides;
    // then compute is used up. The 7g's GPU is full with it.
    assertThat(plans(r)).extracting(ReconfigureMig::layout).containsExactlyInAnyOrder(
        layout("4g.40gb@0", "2g.20gb@4", "1g.20gb@6"), layout("7g.80gb@0"));
  }

  // ------------------------------------------------------------------ E: busy GPUs change too

  /** Places one container of {@code shape} on the current instances; returns it. */
  private Allocate run(String app, Resources shape) {
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of(app), "a", "u", 0), new Demand(AppId.of(app), "c", shape, 1)));
    return r.allocations().get(0);
  }

  @Test
  void newInstancesAreCreatedInTheFreeSlicesOfABusyGpu() {
    engine.cycle(List.of(new NodeAdded(migNode("m1", 512_000, 64, layout("4g.40gb@0"), MigLayout.empty(H100)))));
    Allocate four = run("four", mig("4g.40gb", 1));
    assertThat(four.gpus()).extracting(Object::toString).containsExactly("gpu0:4g.40gb@0");

    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "c", mig("3g.40gb", 1), 1)));
    // Beside the running 4g, not on the empty GPU 1, which stays whole for a 7g.
    assertThat(plans(r)).singleElement().satisfies(p -> {
      assertThat(p.gpuIndex()).isZero();
      assertThat(p.layout()).isEqualTo(layout("4g.40gb@0", "3g.40gb@4"));
    });
    assertThat(applyAll(plans(r)).allocations()).singleElement()
        .satisfies(a -> assertThat(a.gpus()).extracting(Object::toString).containsExactly("gpu0:3g.40gb@4"));
  }

  @Test
  void unusedInstancesOfABusyGpuAreDestroyedOnlyWhenInTheWay() {
    engine.cycle(List.of(new NodeAdded(migNode("m1", 512_000, 64,
        layout("3g.40gb@0", "1g.10gb@4", "1g.10gb@5", "1g.10gb@6")))));
    run("three", mig("3g.40gb", 1));

    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "c", mig("2g.20gb", 1), 1)));
    // 2g.20gb may start at 0, 2 or 4: only 4 is free of the running 3g, and only 1g@4 and 1g@5 are in its way.
    assertThat(plans(r)).singleElement().satisfies(p -> assertThat(p.layout())
        .isEqualTo(layout("3g.40gb@0", "2g.20gb@4", "1g.10gb@6")));
  }

  @Test
  void instancesARepartitionKeepsServeWhileItIsInFlight() {
    engine.cycle(List.of(new NodeAdded(migNode("m1", 512_000, 64, layout("4g.40gb@0", "1g.10gb@6")))));
    run("four", mig("4g.40gb", 1));
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "c", mig("2g.20gb", 1), 1)));
    assertThat(plans(r)).singleElement().satisfies(p -> assertThat(p.layout())
        .isEqualTo(layout("4g.40gb@0", "2g.20gb@4", "1g.10gb@6")));

    // Not reported yet: the kept 1g.10gb@6 is handed out; the new 2g is not, until the change is in force.
    clock.advance(1_000);
    Allocate one = run("one", mig("1g.10gb", 1));
    assertThat(one.gpus()).extracting(Object::toString).containsExactly("gpu0:1g.10gb@6");
    assertThat(engine.pendingReasons(AppId.of("app")).get("c")).contains("being re-partitioned");
    assertThat(applyAll(plans(r)).allocations()).singleElement()
        .satisfies(a -> assertThat(a.gpus()).extracting(Object::toString).containsExactly("gpu0:2g.20gb@4"));
  }
}
