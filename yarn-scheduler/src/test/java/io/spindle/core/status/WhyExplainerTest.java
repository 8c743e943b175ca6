package io.spindle.core.status;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.EngineStatus;
import io.spindle.core.engine.ManualClock;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code why} on a real engine and virtual clock, for the situations users ask about: a gang waiting on its
 * reservation, a queue at its maximum, a gang that can never fit, and containers preempted for another gang.
 */
class WhyExplainerTest {

  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  private static final Resources EIGHT_GPUS = Resources.of(8192, 8).withGpus(8);
  private static final Topology RACK = Topology.builder("rack").location("/r1").build();
  private static final PlacementSpec GANG = PlacementSpec.gang(null, false);
  private static final QueueTree HALVES = queues("root.queues", "a,b", "root.a.capacity", "50",
      "root.b.capacity", "50", "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1");

  private final ManualClock clock = new ManualClock(1_700_000_000_000L);
  private final AppHistory history = new AppHistory(100);
  private Engine engine;

  private void start(QueueTree tree, PreemptionSettings preemption) {
    engine = new Engine(CATALOG, tree, RACK, clock, EngineSettings.defaults().withPreemption(preemption));
    cycle(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8)));
  }

  private CycleResult cycle(EngineEvent... events) {
    CycleResult r = engine.cycle(List.of(events));
    history.record(r);
    return r;
  }

  private Explanation why(String appId) {
    return WhyExplainer.explain(AppId.of(appId), engine.status(), history.of(AppId.of(appId)), List.of());
  }

  @Test
  void aGangWaitingOnItsReservationSaysWhichNodesAreHeldAndWhenItShouldStart() {
    start(HALVES, PreemptionSettings.defaults());
    cycle(new AppSubmitted(AppId.of("small"), "b", "bob", 0),
        new Demand(AppId.of("small"), "one", ONE_GPU, 1, PlacementSpec.SINGLE.withMaxRuntimeMillis(600_000)));
    cycle(new AppSubmitted(AppId.of("big"), "a", "alice", 0), new Demand(AppId.of("big"), "workers", EIGHT_GPUS, 2, GANG));

    Explanation e = why("big");

    assertThat(e.state()).isEqualTo(Explanation.State.PENDING);
    assertThat(e.text()).contains("big (user alice, queue root.a) has no containers running")
        .contains("Its gang 'workers' (2 x <memory=8192MB, vcores=8, gpu=8>)")
        .contains("waits for its reservation on /r1 to drain")
        .contains("(projected start 2023-11-14T22:23:20Z)")
        .contains("in /r1 are reserved for it since 2023-11-14 22:13:20 UTC")
        .contains("estimated start 2023-11-14 22:23:20 UTC (in 600 s)")
        .contains("Expected to start around 2023-11-14 22:23:20 UTC (in 10 min, from declared run times).");
    EngineStatus.Held held = engine.status().app(AppId.of("big")).orElseThrow().requests().get(0).reservation();
    assertThat(held.nodeIds()).containsExactlyInAnyOrder(NodeId.of("n1"), NodeId.of("n2"));
  }

  @Test
  void aQueueAtItsMaximumIsNamedWithItsLimit() {
    start(queues("root.queues", "a,b", "root.a.capacity", "25", "root.a.maximum-capacity", "25",
        "root.b.capacity", "75", "root.a.user-limit-factor", "-1"), PreemptionSettings.defaults());
    cycle(new AppSubmitted(AppId.of("greedy"), "a", "carol", 0), new Demand(AppId.of("greedy"), "r", ONE_GPU, 8));

    Explanation e = why("greedy");

    assertThat(e.state()).isEqualTo(Explanation.State.PENDING);
    assertThat(e.text()).contains("runs 4 containers").contains("Its request 'r' (4 x <memory=1024MB, vcores=1, gpu=1>)"
        + " is pending: queue root.a is at its maximum-capacity");
  }

  @Test
  void aGangLargerThanTheClusterIsRejectedAndStaysExplainedAfterTheEngineForgetsIt() {
    start(HALVES, PreemptionSettings.defaults());
    clock.advance(EngineSettings.DEFAULT_REGISTRATION_SETTLE_MILLIS);
    cycle(new AppSubmitted(AppId.of("huge"), "a", "dave", 0), new Demand(AppId.of("huge"), "workers", EIGHT_GPUS, 3, GANG));
    cycle(new EngineEvent.AppFinished(AppId.of("huge"))); // The RM kills a rejected application.

    Explanation e = why("huge");

    assertThat(e.state()).isEqualTo(Explanation.State.REJECTED);
    assertThat(e.text()).startsWith("huge was rejected at ").contains("its request 'workers' gang of 3 x")
        .contains("is larger than the cluster").contains("can never be scheduled as asked");
  }

  @Test
  void containersPreemptedForAGangNameTheGangAndItsApplication() {
    start(HALVES, PreemptionSettings.defaults().withEnabled(true));
    long t0 = clock.nowMillis();
    CycleResult borrowed = cycle(new AppSubmitted(AppId.of("borrower"), "b", "erin", 0), new Demand(AppId.of("borrower"), "r", ONE_GPU, 16));
    assertThat(borrowed.allocations()).hasSize(16);
    cycle(new AppSubmitted(AppId.of("owner"), "a", "frank", 0), new Demand(AppId.of("owner"), "workers", ONE_GPU.withGpus(2), 4, GANG));

    clock.set(t0 + 61_000);
    CycleResult noticed = cycle();
    assertThat(noticed.decisions()).anyMatch(d -> d instanceof io.spindle.core.engine.Decision.RequestCheckpoint);
    assertThat(why("borrower").state()).isEqualTo(Explanation.State.CHECKPOINTING);
    assertThat(why("borrower").text()).contains("to make room for request 'workers' of owner");

    clock.set(t0 + 61_000 + 120_000);
    List<Long> killed = new ArrayList<>();
    cycle().decisions().stream().filter(io.spindle.core.engine.Decision.Preempt.class::isInstance)
        .map(io.spindle.core.engine.Decision.Preempt.class::cast).forEach(p -> killed.addAll(p.allocationIds()));
    assertThat(killed).hasSize(8);
    cycle(killed.stream().map(id -> (EngineEvent) new ContainerFinished(id)).toArray(EngineEvent[]::new));

    Explanation e = why("borrower");
    assertThat(e.state()).isEqualTo(Explanation.State.PREEMPTED);
    assertThat(e.text()).contains("Spindle preempted 1 of its containers (request 'r') to make room for request"
        + " 'workers' of owner").contains("re-queued and waits to be placed again");
    assertThat(why("owner").state()).isEqualTo(Explanation.State.RUNNING);
  }

  @Test
  void anApplicationNobodyKnowsIsUnknown() {
    start(HALVES, PreemptionSettings.defaults());
    assertThat(why("application_1_0001").state()).isEqualTo(Explanation.State.UNKNOWN);
  }

  @Test
  void anElasticGangSaysWhenItGrewAndWhatAResizeNoticeAsksOfIt() {
    start(HALVES, PreemptionSettings.defaults().withEnabled(true));
    PlacementSpec elastic = GANG.withElasticity(io.spindle.core.engine.Elasticity.of(4, 4));
    cycle(new AppSubmitted(AppId.of("elastic"), "b", "u", 0), new Demand(AppId.of("elastic"), "g", ONE_GPU, 16,
        elastic));
    assertThat(why("elastic").text()).contains("its elastic gang 'g' grew from 4 to 16 members (started whole");
    clock.advance(1_000);
    cycle(new AppSubmitted(AppId.of("owner"), "a", "u", 0), new Demand(AppId.of("owner"), "r", ONE_GPU, 4, GANG));
    for (int i = 0; i < 8; i++) {
      clock.advance(10_000);
      cycle();
    }
    Explanation e = why("elastic");
    assertThat(e.state()).isEqualTo(Explanation.State.CHECKPOINTING);
    assertThat(e.text()).contains("asked its elastic gang 'g' to give back 4 of the members it grew by")
        .contains("to make room for request 'r' of owner").contains("it runs on with 12 members");
  }
}
