package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.queue.QueueTree;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Partitions (YARN's exclusive node labels): a request runs only on nodes of its own partition. */
class PartitionPlacementTest {

  private static final QueueTree ONE = queues("root.queues", "a", "root.a.capacity", "100",
      "root.a.user-limit-factor", "-1");

  private final ManualClock clock = new ManualClock(0);
  private final Engine engine = new Engine(CATALOG, ONE, Topology.singleRack(), clock, EngineSettings.defaults());

  private static Resources oneGpu(String partition) {
    return Resources.of(1024, 1).withGpus(1).withPartition(partition);
  }

  private static Map<String, Integer> perNode(CycleResult r) {
    Map<String, Integer> out = new TreeMap<>();
    r.allocations().forEach(a -> out.merge(a.appId().value() + "@" + a.nodeId().value(), 1, Integer::sum));
    return out;
  }

  @Test
  void labelledAndUnlabelledRequestsStayOnTheirOwnNodes() {
    Node gpu = gpuNode("gpu1", Topology.DEFAULT_RACK, 4).withPartition("GPU");
    engine.cycle(List.of(new NodeAdded(gpu), new NodeAdded(gpuNode("plain1", Topology.DEFAULT_RACK, 4))));
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("ml"), "a", "u", 0),
        new AppSubmitted(AppId.of("etl"), "a", "u", 0), new Demand(AppId.of("ml"), "r", oneGpu("GPU"), 6),
        new Demand(AppId.of("etl"), "r", oneGpu(Node.DEFAULT_PARTITION), 6)));
    assertThat(perNode(r)).isEqualTo(Map.of("ml@gpu1", 4, "etl@plain1", 4));
  }

  @Test
  void aLabelNoNodeCarriesWaitsInsteadOfBeingRejectedAndRunsWhenANodeIsRelabelled() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", Topology.DEFAULT_RACK, 4))));
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("ml"), "a", "u", 0),
        new Demand(AppId.of("ml"), "r", oneGpu("GPU"), 2)));
    assertThat(r.allocations()).isEmpty();
    assertThat(r.decisions()).noneMatch(d -> d instanceof Decision.Reject);
    r = engine.cycle(List.of(new EngineEvent.NodePartitionChanged(NodeId.of("n1"), "GPU")));
    assertThat(perNode(r)).isEqualTo(Map.of("ml@n1", 2));
  }

  @Test
  void preemptionForALabelledRequestTakesOnlyFromNodesOfItsLabel() {
    QueueTree two = queues("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
        "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1");
    Engine e = new Engine(CATALOG, two, Topology.singleRack(), clock, EngineSettings.defaults()
        .withPreemption(PreemptionSettings.defaults().withEnabled(true)));
    e.cycle(List.of(new NodeAdded(gpuNode("gpu1", Topology.DEFAULT_RACK, 4).withPartition("GPU")),
        new NodeAdded(gpuNode("plain1", Topology.DEFAULT_RACK, 4))));
    // b borrows every GPU of both partitions; then a asks for labelled GPUs within its fair share.
    e.cycle(List.of(new AppSubmitted(AppId.of("greedy-gpu"), "b", "u", 0),
        new AppSubmitted(AppId.of("greedy-plain"), "b", "u", 0),
        new Demand(AppId.of("greedy-gpu"), "r", oneGpu("GPU"), 4),
        new Demand(AppId.of("greedy-plain"), "r", oneGpu(Node.DEFAULT_PARTITION), 4)));
    e.cycle(List.of(new AppSubmitted(AppId.of("ml"), "a", "u", 0), new Demand(AppId.of("ml"), "r", oneGpu("GPU"), 2)));
    List<Decision> all = new java.util.ArrayList<>();
    for (int i = 0; i < 40; i++) {
      clock.advance(30_000);
      all.addAll(e.cycle(List.of()).decisions());
    }
    assertThat(all).filteredOn(d -> d instanceof Decision.RequestCheckpoint).isNotEmpty()
        .allMatch(d -> ((Decision.RequestCheckpoint) d).appId().value().equals("greedy-gpu"));
  }

  // ---------------------------------------------------------------- per-label capacities

  private Engine twoQueues(String... labelKeys) {
    List<String> kv = new java.util.ArrayList<>(List.of("root.queues", "a,b", "root.a.capacity", "50",
        "root.b.capacity", "50", "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1"));
    kv.addAll(List.of(labelKeys));
    return new Engine(CATALOG, queues(kv.toArray(String[]::new)), Topology.singleRack(), clock,
        EngineSettings.defaults());
  }

  private static Map<String, Integer> perApp(CycleResult r) {
    Map<String, Integer> out = new TreeMap<>();
    r.allocations().forEach(a -> out.merge(a.appId().value(), 1, Integer::sum));
    return out;
  }

  @Test
  void aLabelledPartitionIsSharedByTheQueuesCapacitiesInThatLabel() {
    // 50/50 in the default partition, 75/25 on the GPU nodes (CapacityScheduler's accessible-node-labels.GPU.*).
    Engine e = twoQueues("root.a.accessible-node-labels.GPU.capacity", "75",
        "root.b.accessible-node-labels.GPU.capacity", "25");
    e.cycle(List.of(new NodeAdded(gpuNode("gpu1", Topology.DEFAULT_RACK, 4).withPartition("GPU")),
        new NodeAdded(gpuNode("gpu2", Topology.DEFAULT_RACK, 4).withPartition("GPU")),
        new NodeAdded(gpuNode("plain1", Topology.DEFAULT_RACK, 8))));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("a-gpu"), "a", "u", 0),
        new AppSubmitted(AppId.of("b-gpu"), "b", "u", 0), new AppSubmitted(AppId.of("a-plain"), "a", "u", 0),
        new AppSubmitted(AppId.of("b-plain"), "b", "u", 0), new Demand(AppId.of("a-gpu"), "r", oneGpu("GPU"), 8),
        new Demand(AppId.of("b-gpu"), "r", oneGpu("GPU"), 8),
        new Demand(AppId.of("a-plain"), "r", oneGpu(Node.DEFAULT_PARTITION), 8),
        new Demand(AppId.of("b-plain"), "r", oneGpu(Node.DEFAULT_PARTITION), 8)));
    assertThat(perApp(r)).isEqualTo(Map.of("a-gpu", 6, "b-gpu", 2, "a-plain", 4, "b-plain", 4));
    QueueSnapshot a = e.queueSnapshots().stream().filter(q -> q.path().equals("root.a")).findFirst().orElseThrow();
    assertThat(a.usage().gpus()).as("the default partition's figures").isEqualTo(4);
    QueueSnapshot.Partition aGpu = a.partitions().get("GPU");
    assertThat(aGpu.usage().gpus()).isEqualTo(6);
    assertThat(aGpu.guarantee().gpus()).as("75% of the GPU nodes' 8 GPUs").isEqualTo(6);
    assertThat(aGpu.pending().gpus()).isEqualTo(2);
  }

  @Test
  void whatAQueueHoldsInALabelDoesNotCountAgainstItsDefaultPartitionMaximum() {
    Engine e = twoQueues("root.a.maximum-capacity", "50");
    e.cycle(List.of(new NodeAdded(gpuNode("gpu1", Topology.DEFAULT_RACK, 4).withPartition("GPU")),
        new NodeAdded(gpuNode("plain1", Topology.DEFAULT_RACK, 4))));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("gpu"), "a", "u", 0),
        new AppSubmitted(AppId.of("plain"), "a", "u", 0), new Demand(AppId.of("gpu"), "r", oneGpu("GPU"), 4),
        new Demand(AppId.of("plain"), "r", oneGpu(Node.DEFAULT_PARTITION), 4)));
    // The label's maximum defaults to 100%; the default partition's 50% is of the plain node only.
    assertThat(perApp(r)).isEqualTo(Map.of("gpu", 4, "plain", 2));
  }

  @Test
  void aLabelsMaximumCapacityBoundsTheQueueOnThatLabelsNodes() {
    Engine e = twoQueues("root.a.accessible-node-labels.GPU.capacity", "50",
        "root.a.accessible-node-labels.GPU.maximum-capacity", "50",
        "root.b.accessible-node-labels.GPU.capacity", "50");
    e.cycle(List.of(new NodeAdded(gpuNode("gpu1", Topology.DEFAULT_RACK, 4).withPartition("GPU"))));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("gpu"), "a", "u", 0),
        new Demand(AppId.of("gpu"), "r", oneGpu("GPU"), 4)));
    assertThat(perApp(r)).isEqualTo(Map.of("gpu", 2));
    assertThat(r.decisions()).filteredOn(d -> d instanceof Decision.Wait).singleElement()
        .satisfies(w -> assertThat(((Decision.Wait) w).reason()).contains("root.a").contains("maximum"));
  }

  @Test
  void aQueueWithoutAccessToALabelIsToldAtOnceThatItCanNeverRunThere() {
    Engine e = twoQueues("root.a.accessible-node-labels", "GPU", "root.a.accessible-node-labels.GPU.capacity", "100",
        "root.b.accessible-node-labels", " ");
    e.cycle(List.of(new NodeAdded(gpuNode("gpu1", Topology.DEFAULT_RACK, 4).withPartition("GPU"))));
    clock.advance(EngineSettings.DEFAULT_REGISTRATION_SETTLE_MILLIS); // Registration has settled.
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("a-gpu"), "a", "u", 0),
        new AppSubmitted(AppId.of("b-gpu"), "b", "u", 0), new Demand(AppId.of("a-gpu"), "r", oneGpu("GPU"), 4),
        new Demand(AppId.of("b-gpu"), "r", oneGpu("GPU"), 1)));
    assertThat(perApp(r)).isEqualTo(Map.of("a-gpu", 4));
    assertThat(r.decisions()).filteredOn(d -> d instanceof Decision.Reject).singleElement()
        .satisfies(d -> assertThat(d.toString()).contains("queue root.b may not use node label GPU"));
  }

  // ---------------------------------------------------------------- non-exclusive labels

  @Test
  void aNonExclusiveLabelLendsWhatItsOwnRequestsLeaveIdleToTheDefaultPartition() {
    Engine e = twoQueues("root.a.accessible-node-labels.SPARE.capacity", "100");
    e.cycle(List.of(new NodeAdded(gpuNode("spare1", Topology.DEFAULT_RACK, 4).withPartition("SPARE", true)),
        new NodeAdded(gpuNode("plain1", Topology.DEFAULT_RACK, 4))));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("own"), "a", "u", 0),
        new AppSubmitted(AppId.of("etl"), "b", "u", 0), new Demand(AppId.of("own"), "r", oneGpu("SPARE"), 1),
        new Demand(AppId.of("etl"), "r", oneGpu(Node.DEFAULT_PARTITION), 8)));
    assertThat(perNode(r)).isEqualTo(Map.of("own@spare1", 1, "etl@plain1", 4, "etl@spare1", 3));
    QueueSnapshot b = e.queueSnapshots().stream().filter(q -> q.path().equals("root.b")).findFirst().orElseThrow();
    assertThat(b.usage().gpus()).as("borrowed GPUs count in the label's partition, not the default one").isEqualTo(4);
  }

  @Test
  void anExclusiveLabelLendsNothing() {
    Engine e = twoQueues();
    e.cycle(List.of(new NodeAdded(gpuNode("gpu1", Topology.DEFAULT_RACK, 4).withPartition("GPU", false)),
        new NodeAdded(gpuNode("plain1", Topology.DEFAULT_RACK, 4))));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("etl"), "b", "u", 0),
        new Demand(AppId.of("etl"), "r", oneGpu(Node.DEFAULT_PARTITION), 8)));
    assertThat(perNode(r)).isEqualTo(Map.of("etl@plain1", 4));
  }

  @Test
  void whatTheDefaultPartitionBorrowedIsReclaimedForTheLabelsOwnRequests() {
    QueueTree two = queues("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
        "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1",
        "root.a.accessible-node-labels.SPARE.capacity", "100");
    Engine e = new Engine(CATALOG, two, Topology.singleRack(), clock, EngineSettings.defaults()
        .withPreemption(PreemptionSettings.defaults().withEnabled(true)));
    e.cycle(List.of(new NodeAdded(gpuNode("spare1", Topology.DEFAULT_RACK, 4).withPartition("SPARE", true)),
        new NodeAdded(gpuNode("plain1", Topology.DEFAULT_RACK, 4))));
    CycleResult borrowed = e.cycle(List.of(new AppSubmitted(AppId.of("etl"), "b", "u", 0),
        new Demand(AppId.of("etl"), "r", oneGpu(Node.DEFAULT_PARTITION), 8)));
    assertThat(perNode(borrowed)).isEqualTo(Map.of("etl@plain1", 4, "etl@spare1", 4));
    e.cycle(List.of(new AppSubmitted(AppId.of("ml"), "a", "u", 0), new Demand(AppId.of("ml"), "r", oneGpu("SPARE"), 2)));
    java.util.Set<Long> onSpare = new java.util.HashSet<>();
    borrowed.allocations().stream().filter(a -> a.nodeId().value().equals("spare1"))
        .forEach(a -> onSpare.add(a.allocationId()));
    List<Decision> all = new java.util.ArrayList<>();
    for (int i = 0; i < 40; i++) {
      clock.advance(30_000);
      all.addAll(e.cycle(List.of()).decisions());
    }
    assertThat(all).filteredOn(d -> d instanceof Decision.RequestCheckpoint).isNotEmpty()
        .allMatch(d -> ((Decision.RequestCheckpoint) d).allocationIds().stream().allMatch(onSpare::contains));
  }
}
