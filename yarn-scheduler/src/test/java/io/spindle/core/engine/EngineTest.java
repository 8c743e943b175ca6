package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.node;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.Fixtures;
import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.Reject;
import io.spindle.core.engine.Decision.Wait;
import io.spindle.core.engine.EngineEvent.AppFinished;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.engine.EngineEvent.NodeRemoved;
import io.spindle.core.model.AppId;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.queue.QueueConfigException;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class EngineTest {

  private static final Topology RACKS = Topology.builder("rack").location("/r1").location("/r2").build();
  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  private static final long G = ResourceVector.GPU_UNITS;

  private final ManualClock clock = new ManualClock(1_000);

  private Engine engine(QueueTree tree) {
    return new Engine(CATALOG, tree, RACKS, clock);
  }

  private static QueueTree twoQueues() {
    return queues("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
        "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1");
  }

  private static Map<String, Long> containersByApp(List<Decision> decisions) {
    return decisions.stream().filter(Allocate.class::isInstance).map(Allocate.class::cast)
        .collect(Collectors.groupingBy(a -> a.appId().value(), Collectors.counting()));
  }

  @Test
  void idleCapacityIsLentAndReturnedToItsOwnerAsContainersFinish() {
    Engine e = engine(twoQueues());
    CycleResult first = e.cycle(List.of(
        new NodeAdded(gpuNode("n1", "/r1", 4)), new NodeAdded(gpuNode("n2", "/r2", 4)),
        new AppSubmitted(AppId.of("b-app"), "b", "bob", 0), new Demand(AppId.of("b-app"), "w", ONE_GPU, 12)));
    // a is idle, so b borrows a's half: all 8 GPUs.
    assertThat(first.allocations()).hasSize(8);

    clock.advance(1_000);
    CycleResult second = e.cycle(List.of(new AppSubmitted(AppId.of("a-app"), "a", "alice", 0),
        new Demand(AppId.of("a-app"), "w", ONE_GPU, 4)));
    assertThat(second.allocations()).isEmpty();
    assertThat(second.decisions()).contains(new Wait(AppId.of("a-app"), "w", e.cluster().whyNotNow(ONE_GPU)));

    // Four of b's containers finish. b still wants 4 more, but a is below its fair share: a gets them all.
    List<EngineEvent> finished = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      finished.add(new ContainerFinished(first.allocations().get(i).allocationId()));
    }
    CycleResult third = e.cycle(finished);
    assertThat(containersByApp(third.decisions())).isEqualTo(Map.of("a-app", 4L));
    assertThat(e.appUsage(AppId.of("a-app"))).contains(ResourceVector.of(4 * 1024, 4, 4));
    assertThat(e.appUsage(AppId.of("b-app"))).contains(ResourceVector.of(4 * 1024, 4, 4));
  }

  @Test
  void queueFurthestBelowFairShareGoesFirstThenPriorityThenAge() {
    Engine e = engine(queues("root.queues", "a,b", "root.a.capacity", "75", "root.b.capacity", "25",
        "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1"));
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 4))));
    clock.advance(10);
    CycleResult r = e.cycle(List.of(
        new AppSubmitted(AppId.of("b-old"), "b", "u", 0), new Demand(AppId.of("b-old"), "w", ONE_GPU, 4)));
    assertThat(r.allocations()).hasSize(4);
    for (Allocate a : r.allocations()) {
      e.cycle(List.of(new ContainerFinished(a.allocationId())));
    }
    // Now both queues want 4 GPUs. Fair shares are 3 (a) and 1 (b); b already ended its containers.
    clock.advance(10);
    CycleResult mixed = e.cycle(List.of(
        new AppSubmitted(AppId.of("a-low"), "a", "u", 0),
        new AppSubmitted(AppId.of("a-high"), "a", "u", 5),
        new Demand(AppId.of("a-low"), "w", ONE_GPU, 4),
        new Demand(AppId.of("a-high"), "w", ONE_GPU, 4),
        new Demand(AppId.of("b-old"), "w", ONE_GPU, 4)));
    // Order of service: a (0/3) -> a-high; b (0/1) ... ending at a=3, b=1.
    assertThat(containersByApp(mixed.decisions())).isEqualTo(Map.of("a-high", 3L, "b-old", 1L));
    assertThat(mixed.allocations().get(0).appId()).isEqualTo(AppId.of("a-high"));
  }

  @Test
  void olderApplicationFirstAtEqualPriority() {
    Engine e = engine(twoQueues());
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 2))));
    e.cycle(List.of(new AppSubmitted(AppId.of("first"), "a", "u", 0)));
    clock.advance(5);
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("second"), "a", "u", 0),
        new Demand(AppId.of("second"), "w", ONE_GPU, 2), new Demand(AppId.of("first"), "w", ONE_GPU, 2)));
    assertThat(containersByApp(r.decisions())).isEqualTo(Map.of("first", 2L));
  }

  @Test
  void aPriorityRaisedWhileWaitingTakesEffectAtTheNextCycle() {
    Engine e = engine(twoQueues());
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 2))));
    e.cycle(List.of(new AppSubmitted(AppId.of("holder"), "a", "u", 0), new Demand(AppId.of("holder"), "w", ONE_GPU, 2)));
    e.cycle(List.of(new AppSubmitted(AppId.of("early"), "a", "u", 1), new Demand(AppId.of("early"), "w", ONE_GPU, 1)));
    clock.advance(5);
    e.cycle(List.of(new AppSubmitted(AppId.of("late"), "a", "u", 1), new Demand(AppId.of("late"), "w", ONE_GPU, 1)));
    // Equal priority would start "early" first; "late" is raised above it while both wait.
    e.cycle(List.of(new EngineEvent.AppPriorityChanged(AppId.of("late"), 9)));
    assertThat(e.status().app(AppId.of("late")).orElseThrow().priority()).isEqualTo(9);
    CycleResult r = e.cycle(List.of(new EngineEvent.ContainerFinished(1)));
    assertThat(containersByApp(r.decisions())).isEqualTo(Map.of("late", 1L));
  }

  @Test
  void sameEventsGiveIdenticalDecisions() {
    List<List<EngineEvent>> script = randomScript(42, 60);
    assertThat(run(script)).isEqualTo(run(script));
    assertThat(run(script)).isNotEqualTo(run(randomScript(43, 60)));
  }

  private List<CycleResult> run(List<List<EngineEvent>> script) {
    ManualClock c = new ManualClock(0);
    Engine e = new Engine(CATALOG, twoQueues(), RACKS, c);
    List<CycleResult> out = new ArrayList<>();
    for (List<EngineEvent> batch : script) {
      c.advance(100);
      out.add(e.cycle(batch));
    }
    return out;
  }

  /** A random but seeded workload; container ends refer to allocation ids the engine hands out in order. */
  private static List<List<EngineEvent>> randomScript(long seed, int cycles) {
    Random rnd = new Random(seed);
    List<List<EngineEvent>> script = new ArrayList<>();
    List<EngineEvent> nodes = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      nodes.add(new NodeAdded(i % 3 == 2
          ? node("m" + i, "/r" + (1 + i % 2), 512_000, 64, Fixtures.H100, 4, 4, true)
          : gpuNode("n" + i, "/r" + (1 + i % 2), 8)));
    }
    script.add(nodes);
    int apps = 0;
    for (int c = 0; c < cycles; c++) {
      List<EngineEvent> batch = new ArrayList<>();
      if (rnd.nextInt(3) == 0) {
        String app = "app" + apps++;
        batch.add(new AppSubmitted(AppId.of(app), rnd.nextBoolean() ? "a" : "b", "u" + rnd.nextInt(3), rnd.nextInt(3)));
        Resources shape = rnd.nextInt(4) == 0
            ? Resources.of(2048, 2).withMig(List.of("1g.10gb", "2g.20gb", "3g.40gb").get(rnd.nextInt(3)), 1)
            : Resources.of(1024 * (1 + rnd.nextInt(8)), 1 + rnd.nextInt(4)).withGpus(rnd.nextInt(5));
        batch.add(new Demand(AppId.of(app), "r", shape, 1 + rnd.nextInt(10)));
      }
      for (int k = 0; k < 3; k++) {
        batch.add(new ContainerFinished(1 + rnd.nextInt(Math.max(1, c * 4))));
      }
      if (apps > 0 && rnd.nextInt(10) == 0) {
        batch.add(new AppFinished(AppId.of("app" + rnd.nextInt(apps))));
      }
      script.add(batch);
    }
    return script;
  }

  @Test
  void impossibleRequestsAreRejectedAtOnceWithAReason() {
    Engine e = engine(queues("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
        "root.b.maximum-capacity", "50"));
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r2", 8))));
    clock.advance(EngineSettings.DEFAULT_REGISTRATION_SETTLE_MILLIS); // Registration has settled.

    CycleResult r = e.cycle(List.of(
        new AppSubmitted(AppId.of("lost"), "nosuch", "u", 0),
        new AppSubmitted(AppId.of("parent"), "root", "u", 0),
        new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "too-many-gpus", Resources.of(1024, 1).withGpus(9), 1),
        new Demand(AppId.of("app"), "bad-profile", Resources.of(1024, 1).withMig("5g.50gb", 1), 1),
        new Demand(AppId.of("app"), "no-mig-gpus", Resources.of(1024, 1).withMig("3g.40gb", 1), 1),
        new Demand(AppId.of("app"), "huge-memory", Resources.of(10_000_000, 1), 1),
        new Demand(AppId.of("app"), "unknown-model", Resources.of(1024, 1).withGpus(1).withGpuModel("Z9000"), 1),
        new AppSubmitted(AppId.of("capped"), "b", "u", 0),
        new Demand(AppId.of("capped"), "over-max", Resources.of(1024, 1).withGpus(8).withGpuModel("H100-80GB"), 1)));

    Map<String, String> reasons = r.decisions().stream().filter(Reject.class::isInstance).map(Reject.class::cast)
        .collect(Collectors.toMap(j -> j.appId() + "/" + j.requestKey(), Reject::reason));
    assertThat(reasons.get("lost/null")).contains("unknown queue 'nosuch'").contains("root.a");
    assertThat(reasons.get("parent/null")).contains("parent queue");
    assertThat(reasons.get("app/too-many-gpus")).contains("9 whole GPU(s)").contains("most on one node is 8");
    assertThat(reasons.get("app/bad-profile")).contains("unknown MIG profile '5g.50gb'");
    assertThat(reasons.get("app/no-mig-gpus")).contains("MIG-mode GPU");
    assertThat(reasons.get("app/huge-memory")).contains("no node in the cluster is that large");
    assertThat(reasons.get("app/unknown-model")).contains("unknown GPU model 'Z9000'");
    // b's maximum is 50% of 16 GPUs = 8: one 8-GPU container fits, so it is not impossible...
    assertThat(reasons).doesNotContainKey("capped/over-max");
    CycleResult more = e.cycle(List.of(
        new Demand(AppId.of("capped"), "nine", Resources.of(1024, 1).withGpus(9), 1)));
    // ...but 9 GPUs in one container is larger than any node and than the queue maximum.
    assertThat(more.decisions()).singleElement().isInstanceOf(Reject.class);
    assertThat(r.allocations()).hasSize(1);
  }

  @Test
  void queueMaximumHoldsBackBorrowingAndSaysSo() {
    Engine e = engine(queues("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
        "root.b.maximum-capacity", "75", "root.b.user-limit-factor", "-1"));
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8))));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("b1"), "b", "u", 0), new Demand(AppId.of("b1"), "w", ONE_GPU, 8)));
    assertThat(r.allocations()).hasSize(6);
    assertThat(e.pendingReasons(AppId.of("b1")).get("w")).contains("queue root.b is at its maximum-capacity");
  }

  @Test
  void userLimitFactorBoundsOneUserToTheGuaranteeByDefault() {
    Engine e = engine(queues("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50"));
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8))));
    CycleResult r = e.cycle(List.of(
        new AppSubmitted(AppId.of("x"), "b", "ann", 0), new Demand(AppId.of("x"), "w", ONE_GPU, 8),
        new AppSubmitted(AppId.of("y"), "b", "ben", 0), new Demand(AppId.of("y"), "w", ONE_GPU, 8)));
    // Each user may hold 1 x b's guarantee (4 GPUs); together they borrow a's idle half.
    assertThat(containersByApp(r.decisions())).isEqualTo(Map.of("x", 4L, "y", 4L));
    assertThat(e.pendingReasons(AppId.of("x")).get("w")).contains("user ann is at the user limit");
  }

  @Test
  void aPlaceFoundForARequestALimitRefusesServesTheNextRequestOfThatShape() {
    // ann is at her user limit; ben, asking the same shape in the same cycle after her, still gets a GPU, and the
    // one after him another.
    Engine e = engine(queues("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50"));
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 4)), new NodeAdded(gpuNode("n2", "/r2", 4))));
    e.cycle(List.of(new AppSubmitted(AppId.of("x"), "b", "ann", 0), new Demand(AppId.of("x"), "w", ONE_GPU, 4)));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("y"), "b", "ann", 0), new Demand(AppId.of("y"), "w", ONE_GPU, 1),
        new AppSubmitted(AppId.of("z"), "b", "ben", 0), new Demand(AppId.of("z"), "w", ONE_GPU, 2)));
    assertThat(containersByApp(r.decisions())).isEqualTo(Map.of("z", 2L));
    assertThat(r.allocations()).extracting(a -> a.nodeId() + "/" + a.gpus().get(0)).doesNotHaveDuplicates();
    assertThat(e.pendingReasons(AppId.of("y")).get("w")).contains("user ann is at the user limit");
  }

  @Test
  void migRequestsWaitForARepartitionThenLandOnReportedInstancesChargedBySliceSize() {
    Engine e = engine(twoQueues());
    e.cycle(List.of(new NodeAdded(node("m1", "/r1", 512_000, 64, Fixtures.H100, 1, 1, true))));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "big", Resources.of(1024, 1).withMig("3g.40gb", 1), 2),
        new Demand(AppId.of("app"), "small", Resources.of(1024, 1).withMig("1g.10gb", 1), 1)));
    // No instance exists yet: the idle GPU is re-partitioned for the largest need first; the two 3g fill it.
    assertThat(r.allocations()).isEmpty();
    Decision.ReconfigureMig plan = r.decisions().stream().filter(Decision.ReconfigureMig.class::isInstance)
        .map(Decision.ReconfigureMig.class::cast).findFirst().orElseThrow();
    assertThat(plan.layout().placements()).extracting(Object::toString).containsExactly("3g.40gb@0", "3g.40gb@4");
    assertThat(plan.availableAtMillis()).isEqualTo(clock.nowMillis() + EngineSettings.DEFAULT_MIG_RECONFIGURE_MILLIS);
    assertThat(e.pendingReasons(AppId.of("app")).get("big")).contains("being re-partitioned");

    // Reported, but the reconfiguration time has not passed: the new instances do not count yet.
    clock.advance(1_000);
    assertThat(e.cycle(List.of(new EngineEvent.MigLayoutReported(NodeId.of("m1"), 0, plan.layout()))).allocations()).isEmpty();
    clock.advance(EngineSettings.DEFAULT_MIG_RECONFIGURE_MILLIS);
    List<Allocate> allocs = e.cycle(List.of()).allocations();
    assertThat(allocs).hasSize(2);
    assertThat(allocs.get(0).gpus()).extracting(GpuSlot::toString).containsExactly("gpu0:3g.40gb@0");
    assertThat(allocs.get(1).gpus()).extracting(GpuSlot::toString).containsExactly("gpu0:3g.40gb@4");
    // 3g.40gb = max(3/7, 4/8) of a GPU = 420 units.
    assertThat(allocs.get(0).charge().gpuUnits()).isEqualTo(G / 2);
    // The GPU is busy and full now: the 1g could only go where a running 3g is, so that request waits, and says why.
    assertThat(e.pendingReasons(AppId.of("app")).get("small")).contains("without destroying an instance in use");
    assertThat(e.queueSnapshots().stream().filter(q -> q.path().equals("root.a")).findFirst().orElseThrow().usage())
        .isEqualTo(new ResourceVector(2048, 2, G));
  }

  @Test
  void repartitionPacksSeveralSmallNeedsOntoOneGpu() {
    Engine e = engine(twoQueues());
    e.cycle(List.of(new NodeAdded(node("m1", "/r1", 512_000, 64, Fixtures.H100, 2, 2, true))));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "3g", Resources.of(1024, 1).withMig("3g.40gb", 1), 1),
        new Demand(AppId.of("app"), "2g", Resources.of(1024, 1).withMig("2g.20gb", 1), 1),
        new Demand(AppId.of("app"), "1g", Resources.of(1024, 1).withMig("1g.10gb", 1), 2)));
    List<Decision.ReconfigureMig> plans = r.decisions().stream().filter(Decision.ReconfigureMig.class::isInstance)
        .map(Decision.ReconfigureMig.class::cast).toList();
    // One GPU holds all four; the other stays idle for whatever comes next.
    assertThat(plans).singleElement().satisfies(p -> assertThat(p.layout().placements())
        .extracting(Object::toString).containsExactly("1g.10gb@0", "1g.10gb@1", "2g.20gb@2", "3g.40gb@4"));
  }

  @Test
  void aReportThatDropsAnInstanceInUseIsRefused() {
    Engine e = engine(twoQueues());
    io.spindle.core.model.MigLayout layout = io.spindle.core.model.MigLayout.of(Fixtures.H100, List.of(
        new io.spindle.core.model.MigPlacement(Fixtures.H100.profile("7g.80gb").orElseThrow(), 0)));
    e.cycle(List.of(new NodeAdded(new io.spindle.core.model.Node(NodeId.of("m1"), "/r1", 512_000, 64,
        List.of(io.spindle.core.model.Gpu.mig(0, Fixtures.H100, 0, layout))))));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "7g", Resources.of(1024, 1).withMig("7g.80gb", 1), 1)));
    assertThat(r.allocations()).hasSize(1);
    assertThatThrownBy(() -> e.cycle(List.of(new EngineEvent.MigLayoutReported(NodeId.of("m1"), 0,
        io.spindle.core.model.MigLayout.empty(Fixtures.H100)))))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("drops instance 7g.80gb@0");
  }

  @Test
  void wholeGpuRequestsKeepNvlinkIslandsWhole() {
    Engine e = engine(twoQueues());
    e.cycle(List.of(new NodeAdded(node("pcie", "/r1", 512_000, 64, Fixtures.H100, 8, 4, false))));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0),
        new Demand(AppId.of("app"), "one", ONE_GPU, 1),
        new Demand(AppId.of("app"), "four", Resources.of(1024, 1).withGpus(4), 1)));
    // The single GPU goes to island 0; the 4-GPU container then needs an untouched island: island 1.
    assertThat(r.allocations().get(0).gpus()).extracting(GpuSlot::gpuIndex).containsExactly(0);
    assertThat(r.allocations().get(1).gpus()).extracting(GpuSlot::gpuIndex).containsExactly(4, 5, 6, 7);
  }

  @Test
  void nodeRemovalReleasesItsContainersAndUnknownNodesAreErrors() {
    Engine e = engine(twoQueues());
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 4)), new NodeAdded(gpuNode("n2", "/r2", 4))));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0), new Demand(AppId.of("app"), "w", ONE_GPU, 8)));
    assertThat(r.allocations()).hasSize(8);
    e.cycle(List.of(new NodeRemoved(NodeId.of("n1"))));
    assertThat(e.appUsage(AppId.of("app"))).contains(ResourceVector.of(4 * 1024, 4, 4));
    assertThat(e.runningContainers()).isEqualTo(4);
    // A late completion of a container from the lost node is harmless.
    e.cycle(List.of(new ContainerFinished(r.allocations().get(0).allocationId())));
    assertThat(e.runningContainers()).isEqualTo(4);

    assertThatThrownBy(() -> e.cycle(List.of(new NodeAdded(gpuNode("n2", "/r2", 4)))))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("duplicate node");
    assertThatThrownBy(() -> e.cycle(List.of(new NodeAdded(gpuNode("n9", "/r9", 4)))))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("outside the topology");
  }

  @Test
  void appFinishReleasesEverythingAndCancellingADemandStopsIt() {
    Engine e = engine(twoQueues());
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 2))));
    e.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0), new Demand(AppId.of("app"), "w", ONE_GPU, 5)));
    assertThat(e.runningContainers()).isEqualTo(2);
    e.cycle(List.of(new Demand(AppId.of("app"), "w", ONE_GPU, 0)));
    assertThat(e.pendingReasons(AppId.of("app"))).isEmpty();
    e.cycle(List.of(new AppFinished(AppId.of("app"))));
    assertThat(e.runningContainers()).isZero();
    assertThat(e.queueSnapshots()).allSatisfy(q -> assertThat(q.usage()).isEqualTo(ResourceVector.ZERO));
    assertThat(e.queueSnapshots()).allSatisfy(q -> assertThat(q.pending()).isEqualTo(ResourceVector.ZERO));
  }

  @Test
  void reconfigureKeepsTheOldTreeWhenAQueueInUseWouldVanish() {
    Engine e = engine(twoQueues());
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 2)),
        new AppSubmitted(AppId.of("app"), "b", "u", 0), new Demand(AppId.of("app"), "w", ONE_GPU, 1)));
    QueueTree withoutB = queues("root.queues", "a", "root.a.capacity", "100");
    assertThatThrownBy(() -> e.reconfigure(withoutB)).isInstanceOf(QueueConfigException.class)
        .hasMessageContaining("root.b");
    assertThat(e.queueTree().leaf("b")).isPresent();

    QueueTree reweighted = queues("root.queues", "a,b", "root.a.capacity", "20", "root.b.capacity", "80");
    e.reconfigure(reweighted);
    assertThat(e.queueSnapshots().stream().filter(q -> q.path().equals("root.b")).findFirst().orElseThrow().usage())
        .isEqualTo(ResourceVector.of(1024, 1, 1));
  }

  @Test
  void recoveredContainersAreChargedAndKeepTheirCapacity() {
    Engine e = engine(twoQueues());
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 4)), new AppSubmitted(AppId.of("app"), "a", "u", 0)));
    CycleResult r = e.cycle(List.of(
        new EngineEvent.ContainerRecovered(-1, AppId.of("app"), "recovered", NodeId.of("n1"), Resources.of(1024, 1).withGpus(3)),
        new AppSubmitted(AppId.of("other"), "b", "u", 0), new Demand(AppId.of("other"), "w", ONE_GPU, 4)));
    // Three GPUs are taken by the recovered container: only one is left for the newcomer.
    assertThat(r.allocations()).hasSize(1);
    assertThat(e.appUsage(AppId.of("app"))).contains(ResourceVector.of(1024, 1, 3));
    // When it ends, its GPUs go to the waiting request in the same cycle.
    assertThat(e.cycle(List.of(new ContainerFinished(-1))).allocations()).hasSize(3);
    assertThat(e.appUsage(AppId.of("app"))).contains(ResourceVector.ZERO);
    assertThatThrownBy(() -> e.cycle(List.of(
        new EngineEvent.ContainerRecovered(-2, AppId.of("app"), "recovered", NodeId.of("n1"), Resources.of(1024, 1).withGpus(3)))))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("does not fit");
  }
}
