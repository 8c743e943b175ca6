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
import io.spindle.core.engine.EngineEvent.GpuHealthReported;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.HealthEvidence;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueConfigException;
import io.spindle.core.queue.QueueTree;
import io.spindle.core.reliability.HealthSettings;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Hot spares (issue #25, item 3): a leaf's {@code spindle.hot-spares-per-rack} keeps whole idle nodes in every rack
 * out of normal placement; a gang of that leaf restarting after a GPU failure takes the spare in its rack, next to
 * the nodes it kept; preemptible work that declares it ends soon may borrow a spare, and the restart waits for it.
 * On a virtual clock; racks r1 (n1..n3) and r2 (n4..n6) of 8-GPU nodes; the spares are the first idle node of each
 * rack in registration order, n1 and n4.
 */
class HotSparesTest {

  private static final Resources EIGHT_GPUS = Resources.of(1024, 1).withGpus(8);
  private static final GpuHealth XID_79 = new GpuHealth(GpuHealth.State.FAILED,
      List.of(new HealthEvidence(HealthEvidence.Kind.XID, 79, "Xid 79: GPU has fallen off the bus")));
  private static final long MINUTE = 60_000;

  private final ManualClock clock = new ManualClock(0);
  private final Topology racks = Topology.builder("rack").location("/r1").location("/r2").build();
  private Engine engine;

  private static QueueTree tree(int spares) {
    return queues("root.queues", "train,other", "root.train.capacity", "50", "root.other.capacity", "50",
        "root.train.user-limit-factor", "-1", "root.other.user-limit-factor", "-1",
        "root.train.spindle.hot-spares-per-rack", String.valueOf(spares));
  }

  private void start(int spares) {
    engine = new Engine(CATALOG, tree(spares), racks, clock,
        EngineSettings.defaults().withRegistrationSettleMillis(0).withHealth(HealthSettings.DEFAULT));
    List<EngineEvent> nodes = new ArrayList<>();
    for (int i = 1; i <= 6; i++) {
      nodes.add(new NodeAdded(gpuNode("n" + i, i <= 3 ? "/r1" : "/r2", 8)));
    }
    engine.cycle(nodes);
  }

  private CycleResult submit(String app, String queue, int count, PlacementSpec spec) {
    return engine.cycle(List.of(new AppSubmitted(AppId.of(app), queue, "u", 0),
        new Demand(AppId.of(app), "r", EIGHT_GPUS, count, spec)));
  }

  private static List<NodeId> nodes(String... ids) {
    return java.util.Arrays.stream(ids).map(NodeId::of).toList();
  }

  @Test
  void sparesStayOutOfNormalPlacement() {
    start(1);
    assertThat(engine.hotSparesHeld()).isEqualTo(2);
    CycleResult r = submit("other", "other", 6, PlacementSpec.SINGLE);
    assertThat(r.allocations()).extracting(Allocate::nodeId)
        .containsExactlyInAnyOrderElementsOf(nodes("n2", "n3", "n5", "n6"));
    assertThat(engine.stats().reservations()).as("spares are no gang reservation").isZero();
  }

  @Test
  void aGangThatLosesAGpuRestartsOnTheSpareInItsRack() {
    start(1);
    List<Allocate> gang = submit("gang", "train", 2, PlacementSpec.gang(null, false)).allocations();
    assertThat(gang).extracting(Allocate::nodeId).containsExactlyInAnyOrderElementsOf(nodes("n2", "n3"));
    submit("other", "other", 2, PlacementSpec.SINGLE); // r2's two other nodes: the cluster is full but for spares.

    engine.cycle(List.of(new GpuHealthReported(NodeId.of("n2"), 5, XID_79)));
    CycleResult replaced = engine.cycle(gang.stream()
        .<EngineEvent>map(a -> new ContainerFinished(a.allocationId())).toList());
    assertThat(replaced.allocations()).extracting(Allocate::nodeId).as("the node it kept and r1's spare")
        .containsExactlyInAnyOrderElementsOf(nodes("n3", "n1"));

    // r1 has no idle sound node left; once n2 is repaired it becomes r1's spare.
    assertThat(engine.hotSparesHeld()).isEqualTo(1);
    engine.cycle(List.of(new GpuHealthReported(NodeId.of("n2"), 5, GpuHealth.HEALTHY)));
    assertThat(engine.hotSparesHeld()).isEqualTo(2);
    assertThat(submit("late", "other", 1, PlacementSpec.SINGLE).allocations()).as("n2 is a spare now").isEmpty();
  }

  @Test
  void withoutSparesTheSameRestartWaitsForANodeToDrain() {
    start(0);
    List<Allocate> gang = submit("gang", "train", 2, PlacementSpec.gang(null, false)).allocations();
    submit("other", "other", 4, PlacementSpec.SINGLE);
    engine.cycle(List.of(new GpuHealthReported(NodeId.of(gang.get(0).nodeId().value()), 5, XID_79)));
    CycleResult after = engine.cycle(gang.stream()
        .<EngineEvent>map(a -> new ContainerFinished(a.allocationId())).toList());
    assertThat(after.allocations()).isEmpty();
    assertThat(engine.pendingReasons(AppId.of("gang"))).isNotEmpty();
  }

  @Test
  void onlyPreemptibleWorkThatEndsSoonBorrowsASpareAndTheRestartWaitsForIt() {
    start(1);
    List<Allocate> gang = submit("gang", "train", 2, PlacementSpec.gang(null, false)).allocations();
    submit("other", "other", 2, PlacementSpec.SINGLE);
    PlacementSpec longRun = new PlacementSpec(false, null, false, 60 * MINUTE, true);
    PlacementSpec pinned = new PlacementSpec(false, null, false, 5 * MINUTE, false);
    PlacementSpec shortRun = new PlacementSpec(false, null, false, 5 * MINUTE, true);
    assertThat(submit("long", "other", 1, longRun).allocations()).as("ends after the lending time").isEmpty();
    assertThat(submit("pinned", "other", 1, pinned).allocations()).as("not preemptible").isEmpty();
    List<Allocate> borrowed = submit("short", "other", 2, shortRun).allocations();
    assertThat(borrowed).extracting(Allocate::nodeId).containsExactlyInAnyOrderElementsOf(nodes("n1", "n4"));

    engine.cycle(List.of(new GpuHealthReported(NodeId.of("n2"), 5, XID_79)));
    CycleResult stopped = engine.cycle(gang.stream()
        .<EngineEvent>map(a -> new ContainerFinished(a.allocationId())).toList());
    assertThat(stopped.allocations()).as("its spare is lent: it waits").isEmpty();

    clock.advance(5 * MINUTE);
    Allocate onR1 = borrowed.stream().filter(a -> a.nodeId().equals(NodeId.of("n1"))).findFirst().orElseThrow();
    CycleResult replaced = engine.cycle(List.of(new ContainerFinished(onR1.allocationId())));
    assertThat(replaced.allocations()).extracting(Allocate::appId).containsOnly(AppId.of("gang"));
    assertThat(replaced.allocations()).extracting(Allocate::nodeId)
        .containsExactlyInAnyOrderElementsOf(nodes("n3", "n1"));
  }

  @Test
  void theKeyIsReadOnLeavesOnlyAndMustBeAWholeNumber() {
    assertThat(tree(2).get("root.train").orElseThrow().hotSparesPerRack()).isEqualTo(2);
    assertThat(tree(2).get("root.other").orElseThrow().hotSparesPerRack()).isZero();
    assertThatThrownBy(() -> queues("root.queues", "eng", "root.eng.capacity", "100", "root.eng.queues", "a",
        "root.eng.a.capacity", "100", "root.eng.spindle.hot-spares-per-rack", "1"))
        .isInstanceOf(QueueConfigException.class).hasMessageContaining("leaf queues only");
    assertThatThrownBy(() -> tree(-1)).isInstanceOf(QueueConfigException.class)
        .hasMessageContaining("hot-spares-per-rack");
  }
}
