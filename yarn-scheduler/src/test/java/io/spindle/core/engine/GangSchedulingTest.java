package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.H100;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.node;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.Reject;
import io.spindle.core.engine.Decision.Reserve;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Gang scheduling and topology-aware placement on a virtual clock. */
class GangSchedulingTest {

  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  private static final Topology TWO_RACKS = Topology.builder("spine", "rack")
      .location("/s1/r1").location("/s1/r2").build();
  private static final QueueTree ONE_QUEUE = queues("root.queues", "q", "root.q.capacity", "100",
      "root.q.user-limit-factor", "-1");

  private final ManualClock clock = new ManualClock(0);

  private Engine engine() {
    return new Engine(CATALOG, ONE_QUEUE, TWO_RACKS, clock);
  }

  private static List<EngineEvent> fourNodes() {
    return List.of(new NodeAdded(gpuNode("n1", "/s1/r1", 8)), new NodeAdded(gpuNode("n2", "/s1/r1", 8)),
        new NodeAdded(gpuNode("n3", "/s1/r2", 8)), new NodeAdded(gpuNode("n4", "/s1/r2", 8)));
  }

  private static Demand gang(String app, int members, Resources shape, String level, boolean required) {
    return new Demand(AppId.of(app), "workers", shape, members, PlacementSpec.gang(level, required));
  }

  @Test
  void whileNodesRegisterAGangLargerThanThoseSoFarWaitsAndIsRejectedOnlyIfItStillCannotFitOnceRegistrationSettles() {
    Engine e = engine();
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/s1/r1", 8)))); // The first node of four, just after an RM start.
    CycleResult early = e.cycle(List.of(new AppSubmitted(AppId.of("job"), "q", "u", 0), gang("job", 32, ONE_GPU, null, false),
        new AppSubmitted(AppId.of("huge"), "q", "u", 0), gang("huge", 33, ONE_GPU, null, false)));
    assertThat(early.decisions()).noneMatch(Reject.class::isInstance);
    assertThat(early.decisions()).filteredOn(Decision.Wait.class::isInstance).map(d -> ((Decision.Wait) d).reason())
        .hasSize(2).allMatch(r -> r.contains("nodes registered so far") && r.contains("larger than the cluster"));

    clock.advance(2_000);
    CycleResult rest = e.cycle(List.of(new NodeAdded(gpuNode("n2", "/s1/r1", 8)),
        new NodeAdded(gpuNode("n3", "/s1/r2", 8)), new NodeAdded(gpuNode("n4", "/s1/r2", 8))));
    assertThat(rest.allocations()).hasSize(32).allMatch(a -> a.appId().equals(AppId.of("job")));
    assertThat(rest.decisions()).noneMatch(Reject.class::isInstance);

    clock.advance(EngineSettings.DEFAULT_REGISTRATION_SETTLE_MILLIS - 2_000); // The window has passed.
    CycleResult settled = e.cycle(List.of());
    assertThat(settled.decisions()).singleElement().isInstanceOfSatisfying(Reject.class, j -> {
      assertThat(j.appId()).isEqualTo(AppId.of("huge"));
      assertThat(j.reason()).contains("larger than the cluster");
    });
    // From now on an impossible request is rejected at once.
    CycleResult after = e.cycle(List.of(new AppSubmitted(AppId.of("more"), "q", "u", 0), gang("more", 40, ONE_GPU, null, false)));
    assertThat(after.decisions()).singleElement().isInstanceOf(Reject.class);
  }

  @Test
  void withoutARegistrationWindowTheFirstNodesAreTheCluster() {
    Engine e = new Engine(CATALOG, ONE_QUEUE, TWO_RACKS, clock, EngineSettings.defaults().withRegistrationSettleMillis(0));
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/s1/r1", 8))));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("job"), "q", "u", 0), gang("job", 9, ONE_GPU, null, false)));
    assertThat(r.decisions()).singleElement().isInstanceOf(Reject.class);
  }

  @Test
  void a32GpuGangOnFourEightGpuNodesStartsAllAtOnce() {
    Engine e = engine();
    e.cycle(fourNodes());
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("job"), "q", "u", 0), gang("job", 32, ONE_GPU, null, false)));
    assertThat(r.allocations()).hasSize(32);
    assertThat(r.allocations().stream().map(Allocate::nodeId).collect(Collectors.toSet()))
        .containsExactlyInAnyOrder(NodeId.of("n1"), NodeId.of("n2"), NodeId.of("n3"), NodeId.of("n4"));
  }

  @Test
  void withOneNodeBusyTheGangWaitsWholeAndSmallJobsArrivingLaterDoNotDelayIt() {
    Engine e = engine();
    e.cycle(fourNodes());
    // A job already runs 1 GPU on n4 for 100 s.
    CycleResult before = e.cycle(List.of(new AppSubmitted(AppId.of("early"), "q", "u", 0),
        new Demand(AppId.of("early"), "r", ONE_GPU, 1, PlacementSpec.SINGLE.withMaxRuntimeMillis(100_000))));
    long early = before.allocations().get(0).allocationId();

    clock.advance(1_000);
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("gang"), "q", "u", 0), gang("gang", 32, ONE_GPU, null, false)));
    assertThat(r.allocations()).as("no member of a gang that does not fit").isEmpty();
    Reserve reserve = r.decisions().stream().filter(Reserve.class::isInstance).map(Reserve.class::cast)
        .findFirst().orElseThrow();
    assertThat(reserve.nodeIds()).containsExactlyInAnyOrder(NodeId.of("n1"), NodeId.of("n2"), NodeId.of("n3"), NodeId.of("n4"));
    assertThat(reserve.projectedStartMillis()).isEqualTo(100_000);

    // A stream of small jobs arrives after the gang, one every second: none may take the reserved GPUs.
    for (int i = 0; i < 50; i++) {
      clock.advance(1_000);
      CycleResult small = e.cycle(List.of(new AppSubmitted(AppId.of("small" + i), "q", "u", 5),
          new Demand(AppId.of("small" + i), "r", ONE_GPU, 1)));
      assertThat(small.allocations()).isEmpty();
    }
    // Backfill that declares it ends before the gang's projected start may use the held capacity.
    CycleResult backfill = e.cycle(List.of(new AppSubmitted(AppId.of("quick"), "q", "u", 0),
        new Demand(AppId.of("quick"), "r", ONE_GPU, 1, PlacementSpec.SINGLE.withMaxRuntimeMillis(10_000))));
    assertThat(backfill.allocations()).hasSize(1);
    clock.advance(10_000);
    e.cycle(List.of(new ContainerFinished(backfill.allocations().get(0).allocationId())));

    // The bound: the gang starts in the first cycle after the last container on its nodes ends.
    clock.set(100_000);
    CycleResult start = e.cycle(List.of(new ContainerFinished(early)));
    assertThat(start.allocations()).hasSize(32).allMatch(a -> a.appId().equals(AppId.of("gang")));
  }

  @Test
  void anEightRankGangLandsInsideOneFreeNvlinkIsland() {
    Engine e = new Engine(CATALOG, ONE_QUEUE, TWO_RACKS, clock);
    // One 16-GPU node with two 8-GPU islands; one GPU of island 0 is in use.
    e.cycle(List.of(new NodeAdded(node("big", "/s1/r1", 1 << 20, 128, H100, 16, 8, false)),
        new AppSubmitted(AppId.of("one"), "q", "u", 0), new Demand(AppId.of("one"), "r", ONE_GPU, 1)));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("ranks"), "q", "u", 0), gang("ranks", 8, ONE_GPU, "node", true)));
    assertThat(r.allocations()).hasSize(8);
    Set<Integer> gpus = r.allocations().stream().flatMap(a -> a.gpus().stream()).map(GpuSlot::gpuIndex)
        .collect(Collectors.toSet());
    assertThat(gpus).containsExactlyInAnyOrder(8, 9, 10, 11, 12, 13, 14, 15);
  }

  @Test
  void aRackRequiredGangNeverSpansRacksAndAnImpossibleOneIsRejected() {
    Engine e = engine();
    e.cycle(fourNodes());
    clock.advance(EngineSettings.DEFAULT_REGISTRATION_SETTLE_MILLIS); // Registration has settled.
    // Rack r1 loses 4 GPUs to a running job; a 16-GPU rack-bound gang must take rack r2 whole.
    e.cycle(List.of(new AppSubmitted(AppId.of("busy"), "q", "u", 0), new Demand(AppId.of("busy"), "r", Resources.of(1024, 1).withGpus(4), 1)));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("g"), "q", "u", 0), gang("g", 16, ONE_GPU, "rack", true)));
    assertThat(r.allocations()).hasSize(16).allMatch(a -> Set.of(NodeId.of("n3"), NodeId.of("n4")).contains(a.nodeId()));

    // 17 GPUs within one rack can never fit: a rack has 16.
    CycleResult impossible = e.cycle(List.of(new AppSubmitted(AppId.of("h"), "q", "u", 0), gang("h", 17, ONE_GPU, "rack", true)));
    assertThat(impossible.decisions()).singleElement().isInstanceOfSatisfying(Reject.class,
        j -> assertThat(j.reason()).contains("must stay within one rack").contains("16"));
    // Larger than the whole cluster.
    CycleResult huge = e.cycle(List.of(new AppSubmitted(AppId.of("k"), "q", "u", 0), gang("k", 33, ONE_GPU, null, false)));
    assertThat(huge.decisions()).singleElement().isInstanceOfSatisfying(Reject.class,
        j -> assertThat(j.reason()).contains("larger than the cluster"));
    // An unknown level is refused with the known ones.
    CycleResult typo = e.cycle(List.of(new AppSubmitted(AppId.of("t"), "q", "u", 0), gang("t", 2, ONE_GPU, "rak", true)));
    assertThat(typo.decisions()).singleElement().isInstanceOfSatisfying(Reject.class,
        j -> assertThat(j.reason()).contains("rak").contains("rack"));
  }

  @Test
  void aGangLargerThanItsQueueMaximumIsRejected() {
    Engine e = new Engine(CATALOG, queues("root.queues", "a,b", "root.a.capacity", "50",
        "root.a.maximum-capacity", "50", "root.b.capacity", "50"), TWO_RACKS, clock);
    e.cycle(fourNodes());
    clock.advance(EngineSettings.DEFAULT_REGISTRATION_SETTLE_MILLIS);
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("g"), "a", "u", 0), gang("g", 17, ONE_GPU, null, false)));
    assertThat(r.decisions()).singleElement().isInstanceOfSatisfying(Reject.class,
        j -> assertThat(j.reason()).contains("maximum-capacity").contains("could never start whole"));
  }

  @Test
  void aReservationTimesOutAndTheGangRequeuesWithAReason() {
    Engine e = new Engine(CATALOG, ONE_QUEUE, TWO_RACKS, clock,
        EngineSettings.defaults().withReservations(60_000, 4));
    e.cycle(fourNodes());
    e.cycle(List.of(new AppSubmitted(AppId.of("forever"), "q", "u", 0), new Demand(AppId.of("forever"), "r", ONE_GPU, 1)));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("g"), "q", "u", 0), gang("g", 32, ONE_GPU, null, false)));
    assertThat(r.decisions()).anyMatch(Reserve.class::isInstance);
    clock.advance(60_000);
    CycleResult later = e.cycle(List.of());
    assertThat(later.decisions()).anySatisfy(d -> assertThat(d).isInstanceOfSatisfying(Decision.Wait.class,
        w -> assertThat(w.reason()).contains("timed out after 60 s")));
    assertThat(e.cluster().reservations()).isEmpty();
    // Freed from the reservation, a small job may start again.
    CycleResult small = e.cycle(List.of(new AppSubmitted(AppId.of("s"), "q", "u", 0), new Demand(AppId.of("s"), "r", ONE_GPU, 1)));
    assertThat(small.allocations()).hasSize(1);
  }

  @Test
  void membersSpreadOverAsFewNodesAsPossible() {
    Engine e = engine();
    e.cycle(fourNodes());
    // 12 x 1 GPU: one whole node plus the smallest node that holds the other 4.
    e.cycle(List.of(new AppSubmitted(AppId.of("a"), "q", "u", 0), new Demand(AppId.of("a"), "r", Resources.of(1024, 1).withGpus(4), 1)));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("g"), "q", "u", 0), gang("g", 12, ONE_GPU, null, false)));
    assertThat(r.allocations().stream().map(Allocate::nodeId).collect(Collectors.toSet())).hasSize(2);
    List<NodeId> nodes = new ArrayList<>();
    r.allocations().forEach(a -> nodes.add(a.nodeId()));
    assertThat(nodes.stream().distinct().count()).isEqualTo(2);
  }
}
