package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.GpuCordonChanged;
import io.spindle.core.engine.EngineEvent.GpuHealthReported;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.HealthEvidence;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.placement.GpuService;
import io.spindle.core.placement.NodeView;
import io.spindle.core.queue.QueueTree;
import io.spindle.core.reliability.HealthSettings;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * GPU health in the engine (issue #25, item 2 and 3), on a virtual clock: a failed GPU leaves service and what ran on
 * it is stopped, a gang restarts inside the rack it held, a degraded GPU takes no gang member, a GPU that keeps
 * failing is quarantined, a node with too many bad GPUs is drained, admins cordon single GPUs, and a new leader keeps
 * all of it.
 */
class GpuFaultsTest {

  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  private static final Resources EIGHT_GPUS = Resources.of(1024, 1).withGpus(8);
  private static final NodeId N1 = NodeId.of("n1");
  private static final NodeId N2 = NodeId.of("n2");
  private static final QueueTree ONE = queues("root.queues", "q", "root.q.capacity", "100",
      "root.q.user-limit-factor", "-1");
  private static final GpuHealth XID_79 = new GpuHealth(GpuHealth.State.FAILED,
      List.of(new HealthEvidence(HealthEvidence.Kind.XID, 79, "Xid 79: GPU has fallen off the bus")));
  private static final GpuHealth LINKS_DOWN = new GpuHealth(GpuHealth.State.DEGRADED,
      List.of(new HealthEvidence(HealthEvidence.Kind.NVLINK_DOWN, 2, "2 of 18 NVLink links inactive")));
  private static final long HOUR = 3_600_000;

  private final ManualClock clock = new ManualClock(0);
  private final Topology racks = Topology.builder("rack").location("/r1").location("/r2").build();
  private Engine engine = engine(HealthSettings.DEFAULT);

  private Engine engine(HealthSettings health) {
    return new Engine(CATALOG, ONE, racks, clock,
        EngineSettings.defaults().withRegistrationSettleMillis(0).withHealth(health));
  }

  private CycleResult submit(String app, Resources shape, int count, PlacementSpec spec) {
    return engine.cycle(List.of(new AppSubmitted(AppId.of(app), "q", "u", 0),
        new Demand(AppId.of(app), "r", shape, count, spec)));
  }

  private CycleResult report(NodeId node, int gpu, GpuHealth health) {
    return engine.cycle(List.of(new GpuHealthReported(node, gpu, health)));
  }

  private NodeView view(NodeId id) {
    return engine.cluster().nodeViews().stream().filter(v -> v.node().id().equals(id)).findFirst().orElseThrow();
  }

  private static Set<Integer> gpusOf(List<Allocate> allocations) {
    return allocations.stream().flatMap(a -> a.gpus().stream()).map(s -> s.gpuIndex()).collect(Collectors.toSet());
  }

  @Test
  void aFailedGpuTakesNothingNewUntilItReportsHealthy() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 2))));
    report(N1, 0, XID_79);
    assertThat(view(N1).gpuService().get(0).level()).isEqualTo(GpuService.Level.OUT);
    assertThat(view(N1).gpuService().get(0).reason()).contains("failed").contains("Xid 79");

    CycleResult r = submit("a", ONE_GPU, 2, PlacementSpec.SINGLE);
    assertThat(r.allocations()).hasSize(1);
    assertThat(gpusOf(r.allocations())).containsExactly(1);
    assertThat(engine.pendingReasons(AppId.of("a"))).isNotEmpty();

    CycleResult back = report(N1, 0, GpuHealth.HEALTHY);
    assertThat(view(N1).gpuService()).isEmpty();
    assertThat(gpusOf(back.allocations())).containsExactly(0);
  }

  @Test
  void aContainerOnAFailedGpuIsStoppedAndItsApplicationToldWhy() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 2))));
    List<Allocate> placed = submit("a", ONE_GPU, 2, PlacementSpec.SINGLE).allocations();
    Allocate onGpu0 = placed.stream().filter(a -> a.gpus().get(0).gpuIndex() == 0).findFirst().orElseThrow();

    CycleResult failed = report(N1, 0, XID_79);
    assertThat(failed.decisions()).filteredOn(Decision.StopContainers.class::isInstance)
        .singleElement().satisfies(d -> {
          Decision.StopContainers s = (Decision.StopContainers) d;
          assertThat(s.allocationIds()).containsExactly(onGpu0.allocationId());
          assertThat(s.reason()).contains("GPU 0 of node n1").contains("Xid 79");
        });
    // The other container runs on; the stopped one is charged until the driver says it ended.
    engine.cycle(List.of(new ContainerFinished(onGpu0.allocationId())));
    assertThat(submit("b", ONE_GPU, 1, PlacementSpec.SINGLE).allocations()).isEmpty();
  }

  @Test
  void aGangWhoseGpuFailsRestartsWholeInsideTheRackItHeldOnceItsMembersHaveStopped() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8))));
    List<Allocate> members = submit("gang", EIGHT_GPUS, 2, PlacementSpec.gang(null, false)).allocations();
    assertThat(members).extracting(Allocate::nodeId).containsExactlyInAnyOrder(N1, N2);
    // r1 gains a spare; r2 two empty nodes, where a restart placed anywhere would land at once.
    engine.cycle(List.of(new NodeAdded(gpuNode("n3", "/r1", 8)), new NodeAdded(gpuNode("n4", "/r2", 8)),
        new NodeAdded(gpuNode("n5", "/r2", 8))));

    CycleResult failed = report(N1, 3, XID_79);
    Decision.RestartGang restart = failed.decisions().stream().filter(Decision.RestartGang.class::isInstance)
        .map(Decision.RestartGang.class::cast).findFirst().orElseThrow();
    assertThat(restart.allocationIds()).containsExactlyInAnyOrderElementsOf(
        members.stream().map(Allocate::allocationId).toList());
    assertThat(restart.lostAllocationIds()).isEmpty();
    assertThat(restart.reason()).contains("GPU 3 of node n1 failed").contains("re-queued whole");
    assertThat(failed.allocations()).as("waits for its members to stop").isEmpty();
    assertThat(engine.pendingReasons(AppId.of("gang")).get("r")).contains("restarts inside the domain it held");

    CycleResult replaced = engine.cycle(members.stream()
        .<EngineEvent>map(a -> new ContainerFinished(a.allocationId())).toList());
    assertThat(replaced.allocations()).extracting(Allocate::nodeId).as("rack r1, off the node with the failed GPU")
        .containsExactlyInAnyOrder(N2, NodeId.of("n3"));
  }

  @Test
  void aRestartThatCannotFitInItsDomainFallsBackAnywhereForAPreferredGang() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8))));
    List<Allocate> members = submit("gang", EIGHT_GPUS, 2, PlacementSpec.gang("rack", false)).allocations();
    engine.cycle(List.of(new NodeAdded(gpuNode("n4", "/r2", 8)), new NodeAdded(gpuNode("n5", "/r2", 8))));
    report(N1, 3, XID_79);
    CycleResult replaced = engine.cycle(members.stream()
        .<EngineEvent>map(a -> new ContainerFinished(a.allocationId())).toList());
    assertThat(replaced.allocations()).extracting(Allocate::nodeId)
        .containsExactlyInAnyOrder(NodeId.of("n4"), NodeId.of("n5"));
  }

  @Test
  void withoutHotSwapARestartGoesWherePlacementPutsANewGang() {
    engine = engine(HealthSettings.DEFAULT.withRestartInDomain(false));
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8))));
    List<Allocate> members = submit("gang", EIGHT_GPUS, 2, PlacementSpec.gang(null, false)).allocations();
    engine.cycle(List.of(new NodeAdded(gpuNode("n3", "/r1", 8)), new NodeAdded(gpuNode("n4", "/r2", 8)),
        new NodeAdded(gpuNode("n5", "/r2", 8))));
    CycleResult failed = report(N1, 3, XID_79);
    assertThat(failed.allocations()).as("at once, on the empty rack").extracting(Allocate::nodeId)
        .containsExactlyInAnyOrder(NodeId.of("n4"), NodeId.of("n5"));
    assertThat(members).hasSize(2);
  }

  @Test
  void aDegradedGpuTakesSingleContainersButNoGangMember() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 2))));
    report(N1, 1, LINKS_DOWN);
    assertThat(view(N1).gpuService().get(1).level()).isEqualTo(GpuService.Level.DEGRADED);

    List<Allocate> single = submit("single", ONE_GPU, 2, PlacementSpec.SINGLE).allocations();
    assertThat(gpusOf(single)).containsExactlyInAnyOrder(0, 1);
    engine.cycle(single.stream().<EngineEvent>map(a -> new ContainerFinished(a.allocationId())).toList());
    CycleResult gang = submit("gang", ONE_GPU, 2, PlacementSpec.gang(null, false));
    assertThat(gang.allocations()).isEmpty();
    assertThat(engine.pendingReasons(AppId.of("gang"))).isNotEmpty();
  }

  @Test
  void singleContainersUseHealthyGpusBeforeDegradedOnes() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 2))));
    report(N1, 0, LINKS_DOWN);
    assertThat(gpusOf(submit("a", ONE_GPU, 1, PlacementSpec.SINGLE).allocations())).containsExactly(1);
  }

  @Test
  void aGpuThatFailsTwiceInADayIsQuarantinedEvenWhenItReportsHealthy() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 2))));
    report(N1, 0, XID_79);
    clock.set(HOUR);
    report(N1, 0, GpuHealth.HEALTHY);
    assertThat(view(N1).gpuService()).as("one failure: back at once").isEmpty();
    clock.set(2 * HOUR);
    report(N1, 0, XID_79);
    clock.set(3 * HOUR);
    report(N1, 0, GpuHealth.HEALTHY);
    GpuService q = view(N1).gpuService().get(0);
    assertThat(q.level()).isEqualTo(GpuService.Level.OUT);
    assertThat(q.reason()).contains("quarantined until").contains("2 failures");
    assertThat(engine.gpuFaults()).singleElement().satisfies(f -> {
      assertThat(f.recentFailures()).isEqualTo(2);
      assertThat(f.quarantinedUntilMillis()).isEqualTo(2 * HOUR + 24 * HOUR);
    });
    assertThat(gpusOf(submit("a", ONE_GPU, 2, PlacementSpec.SINGLE).allocations())).containsExactly(1);
    assertThat(engine.stats().gpuService()).as("counted for metrics and the checkpoint interval advice")
        .isEqualTo(new EngineStats.GpuServiceCounts(1, 0, 1, 2));

    clock.set(26 * HOUR);
    CycleResult released = engine.cycle(List.of());
    assertThat(view(N1).gpuService()).isEmpty();
    assertThat(gpusOf(released.allocations())).containsExactly(0);
  }

  @Test
  void failuresFurtherApartThanTheWindowDoNotQuarantine() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 2))));
    report(N1, 0, XID_79);
    report(N1, 0, GpuHealth.HEALTHY);
    clock.set(25 * HOUR);
    report(N1, 0, XID_79);
    report(N1, 0, GpuHealth.HEALTHY);
    assertThat(view(N1).gpuService()).isEmpty();
  }

  @Test
  void aNodeWithTwoFailedGpusIsDrainedAndComesBackWhenTheyDo() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8))));
    report(N1, 0, XID_79);
    assertThat(view(N1).cordoned()).isNull();
    report(N1, 5, XID_79);
    assertThat(view(N1).cordoned()).startsWith("drained by Spindle").contains("2 GPUs out of service");
    assertThat(submit("a", ONE_GPU, 1, PlacementSpec.SINGLE).allocations()).as("nothing new on a drained node")
        .isEmpty();

    CycleResult back = report(N1, 5, GpuHealth.HEALTHY);
    assertThat(view(N1).cordoned()).isNull();
    assertThat(back.allocations()).hasSize(1);
  }

  @Test
  void anAdminsNodeCordonIsNeverLiftedByHealth() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)),
        new EngineEvent.NodeCordonChanged(N1, "replacing a PSU")));
    report(N1, 0, XID_79);
    report(N1, 5, XID_79);
    report(N1, 0, GpuHealth.HEALTHY);
    report(N1, 5, GpuHealth.HEALTHY);
    assertThat(view(N1).cordoned()).isEqualTo("replacing a PSU");
  }

  @Test
  void anAdminCordonsOneGpuAndItsWorkIsStopped() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 1))));
    Allocate a = submit("a", ONE_GPU, 1, PlacementSpec.SINGLE).allocations().get(0);
    CycleResult cordoned = engine.cycle(List.of(new GpuCordonChanged(N1, 0, "reseat")));
    assertThat(cordoned.decisions()).filteredOn(Decision.StopContainers.class::isInstance).singleElement()
        .satisfies(d -> assertThat(((Decision.StopContainers) d).reason()).contains("cordoned: reseat"));
    engine.cycle(List.of(new ContainerFinished(a.allocationId())));
    assertThat(submit("b", ONE_GPU, 1, PlacementSpec.SINGLE).allocations()).isEmpty();
    assertThat(engine.cycle(List.of(new GpuCordonChanged(N1, 0, null))).allocations()).hasSize(1);
  }

  @Test
  void aNewLeaderKeepsQuarantinesAndGpuCordons() {
    FailoverTwin t = new FailoverTwin(clock, c -> new Engine(CATALOG, ONE, racks, c,
        EngineSettings.defaults().withRegistrationSettleMillis(0)));
    t.cycle(new NodeAdded(gpuNode("n1", "/r1", 4)));
    t.cycle(new GpuHealthReported(N1, 0, XID_79));
    t.cycle(new GpuHealthReported(N1, 0, GpuHealth.HEALTHY));
    t.cycle(new GpuHealthReported(N1, 0, XID_79));
    t.cycle(new GpuCordonChanged(N1, 2, "fan noise"));
    t.failover();
    clock.set(1_000);
    // The node reports its health again to the new leader: GPU 0 is healthy now, but quarantined.
    t.cycle(new GpuHealthReported(N1, 0, GpuHealth.HEALTHY));
    CycleResult r = t.cycle(new AppSubmitted(AppId.of("a"), "q", "u", 0),
        new Demand(AppId.of("a"), "r", ONE_GPU, 4, PlacementSpec.SINGLE));
    assertThat(gpusOf(r.allocations())).containsExactlyInAnyOrder(1, 3);
    assertThat(t.standby().gpuFaults()).extracting(GpuFaultView::gpuIndex).containsExactly(0, 2);
  }

  @Test
  void aReportForAGpuTheNodeDoesNotHaveIsRefusedAndChangesNothing() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 2))));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> report(N1, 7, XID_79))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("n1/gpu7");
    org.assertj.core.api.Assertions.assertThatThrownBy(
        () -> engine.cycle(List.of(new GpuCordonChanged(N1, 9, "x")))).isInstanceOf(IllegalArgumentException.class);
    assertThat(engine.gpuFaults()).isEmpty();
    assertThat(submit("a", ONE_GPU, 2, PlacementSpec.SINGLE).allocations()).hasSize(2);
  }

  @Test
  void quarantineCanBeTurnedOff() {
    engine = engine(new HealthSettings(0, 86_400_000, 86_400_000, 0, true));
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8))));
    for (int i = 0; i < 3; i++) {
      report(N1, 0, XID_79);
      report(N1, 0, GpuHealth.HEALTHY);
    }
    report(N1, 1, XID_79);
    report(N1, 2, XID_79);
    assertThat(view(N1).cordoned()).isNull();
    assertThat(view(N1).gpuService().keySet()).containsExactlyInAnyOrder(1, 2);
  }
}
