package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.EngineEvent.AppFinished;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.engine.EngineStatus.ExpectedStart;
import io.spindle.core.engine.EngineStatus.StartConfidence;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Expected start times of waiting requests (issue #26 item 2), on a virtual clock: exact behind declared run times,
 * in the queue's order; unknown behind undeclared work until a run time is learned, then estimated from it; status
 * only, so decisions are the same with or without a snapshot taken.
 */
class StartEstimatesTest {

  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  private static final long HOUR = 3_600_000;
  private static final Topology RACK = Topology.builder("rack").location("/r1").build();
  private static final QueueTree ONE = queues("root.queues", "q", "root.q.capacity", "100",
      "root.q.user-limit-factor", "-1");

  private ManualClock clock = new ManualClock(0);

  private Engine engine(String... nodes) {
    Engine e = new Engine(CATALOG, ONE, RACK, clock, EngineSettings.defaults().withRegistrationSettleMillis(0));
    List<EngineEvent> added = new ArrayList<>();
    for (String n : nodes) {
      added.add(new NodeAdded(gpuNode(n, "/r1", 8)));
    }
    e.cycle(added);
    return e;
  }

  /** Eight one-GPU containers that declare {@code runtime} (0: none), filling a node; their allocation ids. */
  private static List<Long> run(Engine e, String app, long runtime) {
    PlacementSpec spec = runtime > 0 ? PlacementSpec.SINGLE.withMaxRuntimeMillis(runtime) : PlacementSpec.SINGLE;
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of(app), "q", "u", 0),
        new Demand(AppId.of(app), "r", ONE_GPU, 8, spec)));
    assertThat(r.allocations()).as(app).hasSize(8);
    return r.allocations().stream().map(Allocate::allocationId).toList();
  }

  private static void gang(Engine e, String app, int members) {
    e.cycle(List.of(new AppSubmitted(AppId.of(app), "q", "u", 0),
        new Demand(AppId.of(app), "workers", ONE_GPU, members, PlacementSpec.gang(null, false))));
  }

  private static ExpectedStart startOf(Engine e, String app) {
    return e.status().app(AppId.of(app)).orElseThrow().requests().get(0).expectedStart();
  }

  @Test
  void gangsBehindDeclaredWorkGetExactStartsInTheirQueuesOrder() {
    Engine e = engine("n1", "n2");
    run(e, "three-hours", 3 * HOUR);
    run(e, "five-hours", 5 * HOUR);
    clock.set(1_000);
    gang(e, "first", 8);
    gang(e, "second", 8);
    gang(e, "both-nodes", 16);

    assertThat(startOf(e, "first")).isEqualTo(new ExpectedStart(3 * HOUR, StartConfidence.EXACT));
    assertThat(startOf(e, "second")).isEqualTo(new ExpectedStart(5 * HOUR, StartConfidence.EXACT));
    // Behind two gangs that declare no run time, once they hold both nodes nothing known frees them.
    assertThat(startOf(e, "both-nodes")).isEqualTo(ExpectedStart.UNKNOWN);
    // The reservation plan and the forecast agree.
    assertThat(e.status().app(AppId.of("first")).orElseThrow().requests().get(0).reservation()
        .projectedStartMillis()).isEqualTo(3 * HOUR);
  }

  @Test
  void aGangBehindUndeclaredWorkIsUnknownUntilItsQueueHasLearnedARunTimeThenEstimated() {
    Engine e = engine("n1");
    List<Long> old = run(e, "old", 0);
    clock.set(1_000);
    gang(e, "waiting", 8);
    assertThat(startOf(e, "waiting")).isEqualTo(ExpectedStart.UNKNOWN);

    clock.set(2 * HOUR);
    List<EngineEvent> ended = new ArrayList<>();
    old.forEach(id -> ended.add(new ContainerFinished(id)));
    ended.add(new AppFinished(AppId.of("old")));
    e.cycle(ended); // "waiting" starts here: the queue learns that a run took 2 h.
    e.cycle(List.of(new AppFinished(AppId.of("waiting"))));
    run(e, "current", 0);
    clock.set(3 * HOUR);
    gang(e, "next", 8);

    assertThat(startOf(e, "next")).isEqualTo(new ExpectedStart(4 * HOUR, StartConfidence.ESTIMATED));
  }

  @Test
  void aRunThatOutlivedItsQueuesMedianIsExpectedToEndAtTheMedianOfTheLongerRuns() {
    QueueRuntimes learned = new QueueRuntimes();
    for (long h : new long[] {1, 2, 3, 10, 20}) {
      learned.finished("root.q", null, h * HOUR);
    }
    assertThat(learned.expectedMillis("root.q", null, 0)).isEqualTo(3 * HOUR);
    assertThat(learned.expectedMillis("root.q", null, 5 * HOUR)).isEqualTo(15 * HOUR);
    assertThat(learned.expectedMillis("root.q", null, 30 * HOUR)).isZero();
    assertThat(learned.expectedMillis("root.other", null, 0)).isZero();
  }

  @Test
  void aReservationsNodesAreForecastFreeForOthersOnceItsGangHasStarted() {
    Engine e = engine("n1", "n2");
    run(e, "three-hours", 3 * HOUR);
    run(e, "five-hours", 5 * HOUR);
    clock.set(1_000);
    e.cycle(List.of(new AppSubmitted(AppId.of("first"), "q", "u", 0), new Demand(AppId.of("first"), "workers",
        ONE_GPU, 8, PlacementSpec.gang(null, false).withMaxRuntimeMillis(HOUR))));
    assertThat(e.cluster().reservations()).as("first holds the node that drains first").hasSize(1);
    gang(e, "both-nodes", 16);

    assertThat(startOf(e, "first")).isEqualTo(new ExpectedStart(3 * HOUR, StartConfidence.EXACT));
    // n1 is first's until first starts at 3 h, and first holds it until 4 h; n2 drains at 5 h.
    assertThat(startOf(e, "both-nodes")).isEqualTo(new ExpectedStart(5 * HOUR, StartConfidence.EXACT));
  }

  @Test
  void takingSnapshotsChangesNoDecision() {
    List<String> with = decisions(true);
    assertThat(with).isEqualTo(decisions(false)).isNotEmpty();
  }

  private List<String> decisions(boolean snapshots) {
    clock = new ManualClock(0);
    Engine e = engine("n1", "n2");
    List<String> out = new ArrayList<>();
    List<Long> a = run(e, "a", 2 * HOUR);
    run(e, "b", 0);
    for (int i = 0; i < 4; i++) {
      clock.set((i + 1) * 1_000L);
      gang(e, "g" + i, 4 + 4 * (i % 2));
      if (snapshots) {
        e.status();
      }
    }
    clock.set(2 * HOUR);
    List<EngineEvent> ended = new ArrayList<>();
    a.forEach(id -> ended.add(new ContainerFinished(id)));
    e.cycle(ended).decisions().forEach(d -> out.add(d.toString()));
    return out;
  }
}
