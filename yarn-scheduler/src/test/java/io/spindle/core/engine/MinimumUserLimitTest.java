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
import io.spindle.core.queue.QueueConfigException;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** CapacityScheduler's minimum-user-limit-percent: users asking in a leaf share it, none below the percent. */
class MinimumUserLimitTest {

  private final ManualClock clock = new ManualClock(0);

  /** Four users of one leaf each ask for all 8 GPUs of the cluster; returns GPUs per user and the engine. */
  private Map<String, Integer> gpusPerUser(String percent, List<String> reasons) {
    QueueTree tree = queues("root.queues", "a", "root.a.capacity", "100", "root.a.user-limit-factor", "-1",
        "root.a.minimum-user-limit-percent", percent);
    Engine e = new Engine(CATALOG, tree, Topology.singleRack(), clock, EngineSettings.defaults());
    e.cycle(List.of(new NodeAdded(gpuNode("n1", Topology.DEFAULT_RACK, 8))));
    List<EngineEvent> events = new ArrayList<>();
    for (String user : List.of("u1", "u2", "u3", "u4")) {
      events.add(new AppSubmitted(AppId.of(user + "-job"), "a", user, 0));
      events.add(new Demand(AppId.of(user + "-job"), "r", Resources.of(1024, 1).withGpus(1), 8));
    }
    CycleResult r = e.cycle(events);
    Map<String, Integer> got = new TreeMap<>();
    r.allocations().forEach(a -> got.merge(a.appId().value().replace("-job", ""), 1, Integer::sum));
    r.decisions().stream().filter(d -> d instanceof Decision.Wait).map(d -> ((Decision.Wait) d).reason())
        .forEach(reasons::add);
    return got;
  }

  @Test
  void atTheDefaultOfOneHundredTheFirstUserMayTakeTheWholeQueue() {
    assertThat(gpusPerUser("100", new ArrayList<>())).isEqualTo(Map.of("u1", 8));
  }

  @Test
  void atTwentyFivePercentFourUsersAskingShareTheQueueEvenly() {
    List<String> reasons = new ArrayList<>();
    assertThat(gpusPerUser("25", reasons)).isEqualTo(Map.of("u1", 2, "u2", 2, "u3", 2, "u4", 2));
    assertThat(reasons).anyMatch(r -> r.contains("minimum-user-limit-percent 25.0"));
  }

  @Test
  void atFiftyPercentEachUserMayHoldHalfTheQueueWhateverTheNumberAsking() {
    assertThat(gpusPerUser("50", new ArrayList<>())).isEqualTo(Map.of("u1", 4, "u2", 4));
  }

  @Test
  void aNegativePercentIsRefusedNamingTheKey() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> queues("root.queues", "a", "root.a.capacity", "100",
        "root.a.minimum-user-limit-percent", "-5")).isInstanceOf(QueueConfigException.class)
        .hasMessageContaining("root.a.minimum-user-limit-percent");
  }
}
