package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.engine.EngineEvent.NodeCordonChanged;
import io.spindle.core.model.AppId;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.placement.NodeView;
import io.spindle.core.queue.QueueTree;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Cordoning a node (issue #25, item 2): no new containers or reservations there, what runs there runs on, waiting
 * work waits rather than being refused as impossible, and an uncordon gives the node back.
 */
class NodeCordonTest {

  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  private static final NodeId N1 = NodeId.of("n1");
  private static final NodeId N2 = NodeId.of("n2");
  private static final QueueTree ONE = queues("root.queues", "q", "root.q.capacity", "100",
      "root.q.user-limit-factor", "-1");

  private final ManualClock clock = new ManualClock(0);
  private final Engine engine = new Engine(CATALOG, ONE, Topology.builder("rack").location("/r1").build(), clock,
      EngineSettings.defaults().withRegistrationSettleMillis(0));

  private CycleResult submit(String app, int count, PlacementSpec spec) {
    return engine.cycle(List.of(new AppSubmitted(AppId.of(app), "q", "u", 0),
        new Demand(AppId.of(app), "r", ONE_GPU, count, spec)));
  }

  private NodeView view(NodeId id) {
    return engine.cluster().nodeViews().stream().filter(v -> v.node().id().equals(id)).findFirst().orElseThrow();
  }

  @Test
  void aCordonedNodeTakesNothingNewAndWorkWaitsInsteadOfBeingRefused() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8))));
    List<Long> onN1 = submit("early", 4, PlacementSpec.SINGLE).allocations().stream()
        .filter(a -> a.nodeId().equals(N1)).map(Allocate::allocationId).toList();
    engine.cycle(List.of(new NodeCordonChanged(N1, "replacing a fan")));
    assertThat(view(N1).cordoned()).isEqualTo("replacing a fan");

    CycleResult singles = submit("later", 12, PlacementSpec.SINGLE);
    assertThat(singles.allocations()).as("only n2's free GPUs").isNotEmpty()
        .allMatch(a -> a.nodeId().equals(N2));
    // A gang of 16 needs both nodes: it waits for the cordon to lift, it is not refused as larger than the cluster.
    CycleResult gang = submit("gang", 16, PlacementSpec.gang(null, false));
    assertThat(gang.decisions()).noneMatch(Decision.Reject.class::isInstance);
    assertThat(engine.pendingReasons(AppId.of("gang"))).isNotEmpty();

    // What ran there runs on and ends normally; the GPUs it frees stay idle while cordoned.
    CycleResult ended = engine.cycle(onN1.stream().<EngineEvent>map(ContainerFinished::new).toList());
    assertThat(ended.allocations()).isEmpty();

    CycleResult back = engine.cycle(List.of(new NodeCordonChanged(N1, null)));
    assertThat(view(N1).cordoned()).isNull();
    assertThat(back.allocations()).isNotEmpty().allMatch(a -> a.nodeId().equals(N1));
  }

  @Test
  void aReservationOnACordonedNodeIsGivenUpWithTheReasonAndNoneIsMadeThere() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8))));
    submit("busy", 14, PlacementSpec.SINGLE); // n1 and n2 both part-full
    CycleResult gang = submit("gang", 8, PlacementSpec.gang(null, false));
    Decision.Reserve reserve = gang.decisions().stream().filter(Decision.Reserve.class::isInstance)
        .map(Decision.Reserve.class::cast).findFirst().orElseThrow();
    NodeId held = reserve.nodeIds().get(0);
    NodeId other = held.equals(N1) ? N2 : N1;

    CycleResult cordoned = engine.cycle(List.of(new NodeCordonChanged(held, "bad DIMM")));
    assertThat(cordoned.decisions()).filteredOn(Decision.Wait.class::isInstance).map(d -> ((Decision.Wait) d).reason())
        .anySatisfy(r -> assertThat(r).contains("was given up").contains("cordoned (bad DIMM)"));
    assertThat(engine.cluster().reservations()).allSatisfy(r -> assertThat(r.nodeIds()).doesNotContain(held));
    assertThat(engine.cluster().reservations()).allSatisfy(r -> assertThat(r.nodeIds()).containsOnly(other));
  }

  @Test
  void aCordonedNodeThatLeavesAndRegistersAgainIsStillCordoned() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeCordonChanged(N1, "firmware")));
    engine.cycle(List.of(new EngineEvent.NodeRemoved(N1)));
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8))));
    assertThat(view(N1).cordoned()).isEqualTo("firmware");
    assertThat(submit("a", 1, PlacementSpec.SINGLE).allocations()).isEmpty();
    assertThat(engine.durableState(id -> "c" + id).cordons()).singleElement()
        .satisfies(c -> assertThat(c.reason()).isEqualTo("firmware"));
  }

  @Test
  void aNewLeaderKeepsTheCordonsAndDecidesAsTheOldOneWould() {
    FailoverTwin t = new FailoverTwin(clock, c -> new Engine(CATALOG, ONE, Topology.builder("rack").location("/r1")
        .build(), c, EngineSettings.defaults().withRegistrationSettleMillis(0)));
    t.cycle(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8)));
    t.cycle(new NodeCordonChanged(N1, "bad DIMM"));
    t.failover();
    clock.set(1_000);
    CycleResult r = t.cycle(new AppSubmitted(AppId.of("a"), "q", "u", 0),
        new Demand(AppId.of("a"), "r", ONE_GPU, 12, PlacementSpec.SINGLE));
    assertThat(r.allocations()).hasSize(8).allMatch(a -> a.nodeId().equals(N2));
    assertThat(t.standby().cluster().nodeViews()).filteredOn(v -> v.node().id().equals(N1))
        .singleElement().satisfies(v -> assertThat(v.cordoned()).isEqualTo("bad DIMM"));
    t.cycle(new NodeCordonChanged(N1, null));
    assertThat(t.standby().cluster().cordons()).isEmpty();
  }

  @Test
  void cordoningAnUnknownNodeIsABadEventAndTheRestOfTheBatchApplies() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8))));
    List<EngineEvent> rejected = new java.util.ArrayList<>();
    engine.cycle(List.of(new NodeCordonChanged(NodeId.of("nope"), "typo"), new AppSubmitted(AppId.of("a"), "q", "u",
        0), new Demand(AppId.of("a"), "r", ONE_GPU, 1, PlacementSpec.SINGLE)), (e, problem) -> rejected.add(e));
    assertThat(rejected).singleElement().isInstanceOf(NodeCordonChanged.class);
    assertThat(engine.runningContainers()).isEqualTo(1);
    assertThatThrownBy(() -> engine.cycle(List.of(new NodeCordonChanged(NodeId.of("nope"), "typo"))))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("nope");
  }
}
