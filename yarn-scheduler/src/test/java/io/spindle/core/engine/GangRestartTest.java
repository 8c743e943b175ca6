package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.RestartGang;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.ContainerLost;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.engine.EngineEvent.NodeRemoved;
import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A gang that loses members to the cluster (node gone, container expired unlaunched): by default its survivors are
 * stopped and it starts again whole; with {@code restartOnMemberLoss=false} only the lost members go. Other gangs,
 * reservations and charges stay right either way.
 */
class GangRestartTest {

  private static final Resources FOUR_GPUS = Resources.of(4096, 4).withGpus(4);
  private static final Topology RACK = Topology.builder("rack").location("/r1").build();
  private static final PlacementSpec GANG = PlacementSpec.gang(null, false);

  private final ManualClock clock = new ManualClock(0);
  private final Engine engine = new Engine(CATALOG, queues("root.queues", "a", "root.a.capacity", "100",
      "root.a.user-limit-factor", "-1"), RACK, clock, EngineSettings.defaults());

  private CycleResult cycle(EngineEvent... events) {
    return engine.cycle(List.of(events));
  }

  private static <T extends Decision> List<T> of(CycleResult r, Class<T> type) {
    return r.decisions().stream().filter(type::isInstance).map(type::cast).toList();
  }

  /** Two 8-GPU nodes; a gang of 4 x 4 GPUs takes both, two members on each. */
  private List<Allocate> startGang(PlacementSpec spec) {
    cycle(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8)));
    CycleResult started = cycle(new AppSubmitted(AppId.of("mpi"), "a", "u", 0), new Demand(AppId.of("mpi"), "ranks", FOUR_GPUS, 4, spec));
    assertThat(started.allocations()).hasSize(4);
    return started.allocations();
  }

  private static List<Long> idsOn(List<Allocate> allocations, String node) {
    return allocations.stream().filter(a -> a.nodeId().value().equals(node)).map(Allocate::allocationId).toList();
  }

  @Test
  void losingANodeStopsTheSurvivorsAndStartsTheGangAgainWhole() {
    List<Allocate> gang = startGang(GANG);
    List<Long> onN1 = idsOn(gang, "n1");
    List<Long> onN2 = idsOn(gang, "n2");

    CycleResult lost = cycle(new NodeRemoved(NodeId.of("n1")));

    List<RestartGang> restarts = of(lost, RestartGang.class);
    assertThat(restarts).hasSize(1);
    assertThat(restarts.get(0).allocationIds()).containsExactlyInAnyOrderElementsOf(onN2);
    assertThat(restarts.get(0).lostAllocationIds()).containsExactlyInAnyOrderElementsOf(onN1);
    assertThat(restarts.get(0).reason()).contains("gang of 4 lost 2 members (node n1 left)");
    io.spindle.core.status.AppHistory history = new io.spindle.core.status.AppHistory(10);
    history.record(lost);
    assertThat(io.spindle.core.status.WhyExplainer.explain(AppId.of("mpi"), engine.status(), history.of(AppId.of("mpi")), List.of()).text())
        .contains("its gang 'ranks' lost 2 members to the cluster; Spindle stopped the other 2 and re-queued the gang"
            + " whole");
    assertThat(engine.pendingReasons(AppId.of("mpi"))).containsKey("ranks");
    assertThat(engine.pendingContainers()).as("the whole gang waits again").isEqualTo(4);
    assertThat(engine.appUsage(AppId.of("mpi"))).as("survivors stay charged until they have ended")
        .contains(ResourceVector.of(2 * 4096, 8, 8));
    assertThat(lost.allocations()).as("nothing starts on GPUs still held by survivors").isEmpty();

    List<EngineEvent> ended = new ArrayList<>();
    onN2.forEach(id -> ended.add(new ContainerFinished(id)));
    ended.add(new NodeAdded(gpuNode("n3", "/r1", 8)));
    CycleResult again = engine.cycle(ended);
    assertThat(again.allocations()).as("restarted in one piece").hasSize(4)
        .extracting(Allocate::requestKey).containsOnly("ranks");
    assertThat(engine.pendingContainers()).isZero();
  }

  @Test
  void aMemberThatExpiredUnlaunchedRestartsItsGangOnceWhateverElseIsLost() {
    List<Allocate> gang = startGang(GANG);
    long expired = gang.get(0).allocationId();

    CycleResult first = cycle(new ContainerLost(expired, "it was allocated but not launched in time"));
    assertThat(of(first, RestartGang.class)).singleElement().satisfies(r -> {
      assertThat(r.allocationIds()).hasSize(3).doesNotContain(expired);
      assertThat(r.lostAllocationIds()).containsExactly(expired);
    });
    CycleResult second = cycle(new ContainerLost(gang.get(1).allocationId(), "disks failed"));
    assertThat(of(second, RestartGang.class)).as("one restart per gang start").isEmpty();
    assertThat(engine.pendingContainers()).isEqualTo(4);
  }

  @Test
  void aGangThatReplacesMembersItselfKeepsItsSurvivors() {
    List<Allocate> gang = startGang(GANG.withRestartOnMemberLoss(false));

    CycleResult lost = cycle(new NodeRemoved(NodeId.of("n1")));

    assertThat(of(lost, RestartGang.class)).isEmpty();
    assertThat(engine.appUsage(AppId.of("mpi"))).contains(ResourceVector.of(2 * 4096, 8, 8));
    assertThat(engine.pendingContainers()).as("the application asks for replacements itself").isZero();
    assertThat(idsOn(gang, "n2")).hasSize(2);
  }

  @Test
  void otherGangsAndSingleContainersAreUntouched() {
    cycle(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8)));
    cycle(new AppSubmitted(AppId.of("left"), "a", "u", 0), new Demand(AppId.of("left"), "g", FOUR_GPUS, 2, GANG),
        new AppSubmitted(AppId.of("single"), "a", "u", 0), new Demand(AppId.of("single"), "s", Resources.of(1024, 1).withGpus(1), 1));
    // "left" holds 8 GPUs on one node; the single container is on the other or the same: find the untouched node.
    CycleResult placed = cycle(new AppSubmitted(AppId.of("right"), "a", "u", 0), new Demand(AppId.of("right"), "g", FOUR_GPUS, 1, GANG));
    assertThat(placed.allocations()).hasSize(1);
    NodeId rightNode = placed.allocations().get(0).nodeId();
    NodeId otherNode = NodeId.of(rightNode.equals(NodeId.of("n1")) ? "n2" : "n1");

    CycleResult lost = cycle(new NodeRemoved(otherNode));

    assertThat(of(lost, RestartGang.class)).extracting(RestartGang::appId).doesNotContain(AppId.of("right"));
    assertThat(engine.appUsage(AppId.of("right"))).contains(ResourceVector.of(4096, 4, 4));
  }

  @Test
  void aReservationOnALostNodeIsDroppedAndNoneIsLeftBehind() {
    cycle(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8)));
    cycle(new AppSubmitted(AppId.of("busy"), "a", "u", 0), new Demand(AppId.of("busy"), "s", FOUR_GPUS, 1));
    cycle(new AppSubmitted(AppId.of("big"), "a", "u", 0), new Demand(AppId.of("big"), "g", Resources.of(8192, 8).withGpus(8), 2, GANG));
    assertThat(engine.stats().reservations()).isEqualTo(1);

    cycle(new NodeRemoved(NodeId.of("n2")), new NodeRemoved(NodeId.of("n1")));

    assertThat(engine.stats().reservations()).isZero();
    assertThat(engine.cluster().reservations()).isEmpty();
  }
}
