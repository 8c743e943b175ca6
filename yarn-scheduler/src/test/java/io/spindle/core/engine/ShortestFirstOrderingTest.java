package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.AppOrdering;
import io.spindle.core.queue.QueueConfigException;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code spindle.ordering=shortest-first} on a virtual clock: a leaf serves the application whose waiting requests
 * declare the shortest run time first (priority still first), those that declare none last, oldest first among
 * equals; the key is inherited from the nearest queue that sets it.
 */
class ShortestFirstOrderingTest {

  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  private final ManualClock clock = new ManualClock(0);

  /** One GPU; a blocker holds it; four applications wait; returns them in the order they get it. */
  private List<String> order(QueueTree tree) {
    Engine e = new Engine(CATALOG, tree, Topology.singleRack(), clock, EngineSettings.defaults());
    e.cycle(List.of(new NodeAdded(gpuNode("n1", Topology.DEFAULT_RACK, 1))));
    long held = e.cycle(List.of(new AppSubmitted(AppId.of("blocker"), "a", "u", 0),
        new Demand(AppId.of("blocker"), "r", ONE_GPU, 1))).allocations().get(0).allocationId();
    record Job(String id, long declaredMillis, int priority) {}
    for (Job j : List.of(new Job("none", 0, 0), new Job("three-hours", 3 * 3_600_000, 0),
        new Job("one-hour", 3_600_000, 0), new Job("urgent-day", 24 * 3_600_000, 1))) {
      clock.advance(1_000);
      e.cycle(List.of(new AppSubmitted(AppId.of(j.id()), "a", "u", j.priority()), new Demand(AppId.of(j.id()), "r",
          ONE_GPU, 1, PlacementSpec.SINGLE.withMaxRuntimeMillis(j.declaredMillis()))));
    }
    List<String> served = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      clock.advance(1_000);
      Decision.Allocate next = e.cycle(List.of(new ContainerFinished(held))).allocations().get(0);
      served.add(next.appId().value());
      held = next.allocationId();
    }
    return served;
  }

  @Test
  void theShortestDeclaredRunTimeGoesFirstAfterPriorityAndUndeclaredLast() {
    QueueTree tree = queues("root.queues", "a", "root.a.capacity", "100", "root.a.user-limit-factor", "-1",
        "root.spindle.ordering", "shortest-first");
    assertThat(tree.leaf("root.a").orElseThrow().ordering()).as("inherited from root")
        .isEqualTo(AppOrdering.SHORTEST_FIRST);
    assertThat(order(tree)).containsExactly("urgent-day", "one-hour", "three-hours", "none");
  }

  @Test
  void fifoStaysTheDefaultAndALeafMaySayFifoBelowAShortestFirstParent() {
    QueueTree plain = queues("root.queues", "a", "root.a.capacity", "100", "root.a.user-limit-factor", "-1");
    assertThat(order(plain)).containsExactly("urgent-day", "none", "three-hours", "one-hour");
    QueueTree overridden = queues("root.queues", "a", "root.a.capacity", "100", "root.a.user-limit-factor", "-1",
        "root.spindle.ordering", "shortest-first", "root.a.spindle.ordering", "fifo");
    assertThat(overridden.leaf("root.a").orElseThrow().ordering()).isEqualTo(AppOrdering.FIFO);
  }

  @Test
  void anUnknownOrderingIsRefusedWithItsKey() {
    assertThatThrownBy(() -> queues("root.queues", "a", "root.a.capacity", "100", "root.a.spindle.ordering",
        "random")).isInstanceOf(QueueConfigException.class)
        .hasMessageContaining("yarn.scheduler.capacity.root.a.spindle.ordering").hasMessageContaining("shortest-first or least-attained");
  }
}
