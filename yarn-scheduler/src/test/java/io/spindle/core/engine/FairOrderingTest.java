package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.AppOrdering;
import io.spindle.core.queue.QueueTree;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** A leaf's {@code ordering-policy}: FIFO serves the first application first, fair converges to equal shares. */
class FairOrderingTest {

  private final ManualClock clock = new ManualClock(0);

  /** Three applications of one leaf each ask for 4 of the node's 6 GPUs; returns how many each got. */
  private Map<String, Integer> gpusPerApp(String policy) {
    QueueTree tree = queues("root.queues", "a", "root.a.capacity", "100", "root.a.user-limit-factor", "-1",
        "root.a.ordering-policy", policy);
    Engine e = new Engine(CATALOG, tree, Topology.singleRack(), clock, EngineSettings.defaults());
    e.cycle(List.of(new NodeAdded(gpuNode("n1", Topology.DEFAULT_RACK, 6))));
    Map<String, Integer> got = new TreeMap<>();
    for (String app : List.of("first", "second", "third")) {
      e.cycle(List.of(new AppSubmitted(AppId.of(app), "a", "u", app.equals("third") ? 5 : 0)));
      clock.advance(1_000);
    }
    CycleResult r = e.cycle(List.of(new Demand(AppId.of("first"), "r", oneGpu(), 4),
        new Demand(AppId.of("second"), "r", oneGpu(), 4), new Demand(AppId.of("third"), "r", oneGpu(), 4)));
    r.allocations().forEach(a -> got.merge(a.appId().value(), 1, Integer::sum));
    return got;
  }

  private static Resources oneGpu() {
    return Resources.of(1024, 1).withGpus(1);
  }

  @Test
  void fifoServesTheHighestPriorityThenTheOldestFirst() {
    assertThat(gpusPerApp("fifo")).isEqualTo(Map.of("third", 4, "first", 2));
  }

  @Test
  void fairGivesEachApplicationOfTheLeafAnEqualShare() {
    assertThat(gpusPerApp("fair")).isEqualTo(Map.of("first", 2, "second", 2, "third", 2));
  }

  @Test
  void theParserReadsALeafsPolicyAsCapacitySchedulerNamesIt() {
    assertThat(AppOrdering.of("fair")).isEqualTo(AppOrdering.FAIR);
    assertThat(AppOrdering.of(
        "org.apache.hadoop.yarn.server.resourcemanager.scheduler.policy.FairOrderingPolicy")).isEqualTo(AppOrdering.FAIR);
    assertThat(AppOrdering.of("fifo")).isEqualTo(AppOrdering.FIFO);
    assertThat(AppOrdering.of(null)).isEqualTo(AppOrdering.FIFO);
  }

  @Test
  void sizeBasedWeightGivesTheLargerApplicationTheLargerShare() {
    Map<String, Integer> got = new TreeMap<>();
    for (String weighted : List.of("false", "true")) {
      QueueTree tree = queues("root.queues", "a", "root.a.capacity", "100", "root.a.user-limit-factor", "-1",
          "root.a.ordering-policy", "fair", "root.a.ordering-policy.fair.enable-size-based-weight", weighted);
      Engine e = new Engine(CATALOG, tree, Topology.singleRack(), clock, EngineSettings.defaults());
      e.cycle(List.of(new NodeAdded(io.spindle.core.Fixtures.node("n1", Topology.DEFAULT_RACK, 1_048_576, 64,
          io.spindle.core.Fixtures.H100, 8, 8, false))));
      e.cycle(List.of(new AppSubmitted(AppId.of("big"), "a", "u", 0)));
      clock.advance(1_000);
      e.cycle(List.of(new AppSubmitted(AppId.of("small"), "a", "u", 0)));
      // Both hold GPUs as their dominant resource; big asks 512 GB in all, small 1 GB.
      CycleResult r = e.cycle(List.of(new Demand(AppId.of("big"), "r", Resources.of(65_536, 1).withGpus(1), 8),
          new Demand(AppId.of("small"), "r", Resources.of(128, 1).withGpus(1), 8)));
      r.allocations().forEach(a -> got.merge(weighted + ":" + a.appId().value(), 1, Integer::sum));
    }
    assertThat(got).isEqualTo(Map.of("false:big", 4, "false:small", 4, "true:big", 5, "true:small", 3));
    assertThat(AppOrdering.of("fair", "TRUE")).isEqualTo(AppOrdering.FAIR_BY_SIZE);
    assertThat(AppOrdering.of("fifo", "true")).isEqualTo(AppOrdering.FIFO);
  }
}
