package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueTree;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Head-of-line blocking inside a leaf (strict FIFO), and that other leaves are not blocked by it. */
class StrictQueueOrderTest {

  private static final QueueTree TWO_QUEUES = queues("root.queues", "a,b", "root.a.capacity", "50",
      "root.b.capacity", "50", "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1");

  private final ManualClock clock = new ManualClock(0);

  private List<String> startedApps(EngineSettings settings) {
    Engine e = new Engine(CATALOG, TWO_QUEUES, Topology.singleRack(), clock, settings);
    e.cycle(List.of(new NodeAdded(gpuNode("n1", Topology.DEFAULT_RACK, 8))));
    // 6 of 8 GPUs busy; then, in queue a: a 4-GPU job (does not fit) ahead of a 1-GPU job (fits); in b a 1-GPU job.
    e.cycle(List.of(new AppSubmitted(AppId.of("busy"), "a", "u", 0), new Demand(AppId.of("busy"), "r", gpus(6), 1)));
    clock.advance(1_000);
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("big"), "a", "u", 0), new Demand(AppId.of("big"), "r", gpus(4), 1),
        new AppSubmitted(AppId.of("small"), "a", "u", 0), new Demand(AppId.of("small"), "r", gpus(1), 1),
        new AppSubmitted(AppId.of("other"), "b", "u", 0), new Demand(AppId.of("other"), "r", gpus(1), 1)));
    return r.allocations().stream().map(a -> a.appId().value()).sorted().toList();
  }

  private static Resources gpus(int n) {
    return Resources.of(1024, 1).withGpus(n);
  }

  @Test
  void byDefaultTheRequestBehindOneThatWaitsStarts() {
    assertThat(startedApps(EngineSettings.defaults())).containsExactly("other", "small");
  }

  @Test
  void strictOrderBlocksTheLeafBehindItsHeadButNotOtherLeaves() {
    assertThat(startedApps(EngineSettings.defaults().withStrictQueueOrder(true))).containsExactly("other");
  }

  @Test
  void strictOrderIsReadFromConfiguration() {
    assertThat(EngineSettings.fromConfiguration(Map.of()).strictQueueOrder()).isFalse();
    assertThat(EngineSettings.fromConfiguration(Map.of(EngineSettings.STRICT_QUEUE_ORDER, "true"))
        .strictQueueOrder()).isTrue();
  }
}
