package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.Reserve;
import io.spindle.core.engine.Decision.Wait;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * Reservations last as long as the drain they wait for is expected to take (issue #24, item 3), on a virtual clock:
 * kept past the timeout while declared work drains, re-planned when that estimate changes, the timeout where the
 * drain is unknown, never past the cap. Default settings: timeout 900 s, cap a week, a minute's margin.
 */
class ReservationDrainTest {

  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  private static final long HOUR = 3_600_000;
  private static final long TIMEOUT = EngineSettings.DEFAULT_RESERVATION_TIMEOUT_MILLIS;
  private static final long MARGIN = ReservationLifetime.DEFAULT_MARGIN_MILLIS;
  private static final Topology RACK = Topology.builder("rack").location("/r1").build();
  private static final QueueTree ONE = queues("root.queues", "q", "root.q.capacity", "100",
      "root.q.user-limit-factor", "-1");

  private final ManualClock clock = new ManualClock(0);

  private Engine engine(EngineSettings settings, String... nodes) {
    Engine e = new Engine(CATALOG, ONE, RACK, clock, settings.withRegistrationSettleMillis(0));
    List<EngineEvent> added = new ArrayList<>();
    for (String n : nodes) {
      added.add(new NodeAdded(gpuNode(n, "/r1", 8)));
    }
    e.cycle(added);
    return e;
  }

  /** {@code count} one-GPU containers that declare {@code runtime} (0: none); their allocation ids. */
  private static List<Long> run(Engine e, String app, int count, long runtime) {
    PlacementSpec spec = runtime > 0 ? PlacementSpec.SINGLE.withMaxRuntimeMillis(runtime) : PlacementSpec.SINGLE;
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of(app), "q", "u", 0),
        new Demand(AppId.of(app), "r", ONE_GPU, count, spec)));
    assertThat(r.allocations()).as(app).hasSize(count);
    return r.allocations().stream().map(Allocate::allocationId).toList();
  }

  private static CycleResult gang(Engine e, String app, int members) {
    return e.cycle(List.of(new AppSubmitted(AppId.of(app), "q", "u", 0),
        new Demand(AppId.of(app), "workers", ONE_GPU, members, PlacementSpec.gang(null, false))));
  }

  private static List<EngineEvent> finished(List<Long> ids) {
    return ids.stream().<EngineEvent>map(ContainerFinished::new).toList();
  }

  private static List<String> requeued(CycleResult r) {
    return r.decisions().stream().filter(Wait.class::isInstance).map(d -> ((Wait) d).reason())
        .filter(w -> w.startsWith("re-queued")).toList();
  }

  private static Reserve reserve(CycleResult r) {
    return r.decisions().stream().filter(Reserve.class::isInstance).map(Reserve.class::cast).findFirst().orElseThrow();
  }

  @Test
  void aReservationWaitingForDeclaredLongRunningWorkIsKeptUntilThatWorkIsExpectedToEndNotDroppedAt900s() {
    Engine e = engine(EngineSettings.defaults(), "n1");
    List<Long> training = run(e, "training", 8, 3 * HOUR);
    clock.set(1_000);
    Reserve r = reserve(gang(e, "gang", 8));
    assertThat(r.nodeIds()).containsExactly(NodeId.of("n1"));
    assertThat(r.projectedStartMillis()).isEqualTo(3 * HOUR);
    assertThat(e.nextReservationDeadlineMillis()).isEqualTo(OptionalLong.of(3 * HOUR + MARGIN));

    clock.set(1_000 + TIMEOUT);
    assertThat(requeued(e.cycle(List.of()))).as("the fixed timeout has passed").isEmpty();
    // Work that does not declare its run time may not slip onto the draining node meanwhile.
    clock.set(2 * HOUR);
    assertThat(e.cycle(List.of(new AppSubmitted(AppId.of("late"), "q", "u", 0),
        new Demand(AppId.of("late"), "r", ONE_GPU, 1))).allocations()).isEmpty();
    assertThat(e.cluster().reservations()).hasSize(1);

    clock.set(3 * HOUR);
    CycleResult drained = e.cycle(finished(training));
    assertThat(drained.allocations()).hasSize(8).allMatch(a -> a.appId().equals(AppId.of("gang")));
    assertThat(e.cluster().reservations()).isEmpty();
  }

  @Test
  void aGangReservesTheNodeThatHoldsItSoonestAndWaitsOnlyForTheRoomItNeeds() {
    Engine e = engine(EngineSettings.defaults(), "n1", "n2");
    run(e, "a-long", 4, 5 * HOUR);
    run(e, "a-short", 4, HOUR); // n1: room for 4 at 1 h, empty at 5 h.
    run(e, "b", 8, 2 * HOUR); // n2: empty at 2 h.
    clock.set(1_000);
    Reserve four = reserve(gang(e, "four", 4));
    assertThat(four.nodeIds()).as("a-short frees its half of n1 first").containsExactly(NodeId.of("n1"));
    assertThat(four.projectedStartMillis()).isEqualTo(HOUR);
    Reserve eight = reserve(gang(e, "eight", 8));
    assertThat(eight.nodeIds()).containsExactly(NodeId.of("n2"));
    assertThat(eight.projectedStartMillis()).isEqualTo(2 * HOUR);
  }

  @Test
  void theDeadlineFollowsTheEstimateWhenAContainerOnTheReservedNodeEndsEarly() {
    Engine e = engine(EngineSettings.defaults(), "n1");
    List<Long> late = run(e, "late", 4, 10 * HOUR);
    run(e, "early", 4, 2 * HOUR);
    clock.set(1_000);
    assertThat(reserve(gang(e, "gang", 8)).projectedStartMillis()).isEqualTo(10 * HOUR);
    assertThat(e.nextReservationDeadlineMillis()).isEqualTo(OptionalLong.of(10 * HOUR + MARGIN));

    // "late" ends after one hour instead of ten: the gang is now due when "early" ends, and so is the deadline.
    clock.set(HOUR);
    e.cycle(finished(late));
    assertThat(e.cluster().reservations()).singleElement()
        .satisfies(r -> assertThat(r.projectedStartMillis()).isEqualTo(2 * HOUR));
    assertThat(e.nextReservationDeadlineMillis()).isEqualTo(OptionalLong.of(2 * HOUR + MARGIN));

    // "early" overruns what it declared: the reservation goes a margin after the expected drain, and the gang backs
    // off for the timeout.
    clock.set(2 * HOUR + MARGIN - 1);
    assertThat(requeued(e.cycle(List.of()))).isEmpty();
    clock.set(2 * HOUR + MARGIN);
    assertThat(requeued(e.cycle(List.of()))).singleElement()
        .satisfies(w -> assertThat(w).contains("held 7259 s").contains("expected to hold the gang by"));
    assertThat(e.cluster().reservations()).isEmpty();
  }

  @Test
  void aReservationMovesToANodeThatDrainsSoonerWhenWorkThereEndsEarly() {
    Engine e = engine(EngineSettings.defaults(), "n1", "n2");
    run(e, "a", 8, 3 * HOUR); // n1: empty at 3 h.
    List<Long> longB = run(e, "b-long", 4, 5 * HOUR);
    run(e, "b-short", 4, HOUR); // n2: empty at 5 h.
    clock.set(1_000);
    Reserve first = reserve(gang(e, "gang", 8));
    assertThat(first.nodeIds()).containsExactly(NodeId.of("n1"));
    assertThat(first.projectedStartMillis()).isEqualTo(3 * HOUR);

    // b-long ends after half an hour: n2 now drains at 1 h, two hours before n1.
    clock.set(HOUR / 2);
    CycleResult moved = e.cycle(finished(longB));
    Reserve second = reserve(moved);
    assertThat(second.nodeIds()).containsExactly(NodeId.of("n2"));
    assertThat(second.projectedStartMillis()).isEqualTo(HOUR);
    assertThat(e.cluster().reservations()).singleElement()
        .satisfies(r -> assertThat(r.createdMillis()).as("its lifetime runs on").isEqualTo(1_000));
    // Backfill is now bounded by n2's drain: a job of 20 minutes ends before it, one of two hours would not.
    assertThat(run(e, "quick", 4, 20 * 60_000)).hasSize(4);
    assertThat(e.cycle(List.of(new AppSubmitted(AppId.of("slow"), "q", "u", 0), new Demand(AppId.of("slow"), "r",
        ONE_GPU, 1, PlacementSpec.SINGLE.withMaxRuntimeMillis(2 * HOUR)))).allocations()).isEmpty();
  }

  @Test
  void undeclaredWorkKeepsTheFixedTimeout() {
    Engine e = engine(EngineSettings.defaults(), "n1");
    run(e, "declared", 7, HOUR);
    run(e, "undeclared", 1, 0);
    clock.set(1_000);
    Reserve r = reserve(gang(e, "gang", 8));
    assertThat(r.projectedStartMillis()).as("unknown: one container declared nothing").isEqualTo(Long.MAX_VALUE);
    assertThat(e.nextReservationDeadlineMillis()).isEqualTo(OptionalLong.of(1_000 + TIMEOUT));
    clock.set(1_000 + TIMEOUT - 1);
    assertThat(requeued(e.cycle(List.of()))).isEmpty();
    clock.set(1_000 + TIMEOUT);
    assertThat(requeued(e.cycle(List.of()))).containsExactly("re-queued: reservation on n1 timed out after 900 s");
    assertThat(e.cluster().reservations()).isEmpty();
  }

  @Test
  void withLearnedRunTimesAnUndeclaredDrainIsPlannedFromFinishedRunsOfTheSameKind() {
    Engine e = engine(EngineSettings.defaults().withReservationLearnedRuntimes(true), "n1");
    // Two earlier runs of kind "etl" took 2 h and 3 h (median 2.5 h); they declared nothing.
    for (String app : List.of("etl-1", "etl-2")) {
      CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of(app), "q", "u", 0, "etl"),
          new Demand(AppId.of(app), "r", ONE_GPU, 8, PlacementSpec.SINGLE)));
      assertThat(r.allocations()).hasSize(8);
      clock.advance(app.equals("etl-1") ? 2 * HOUR : 3 * HOUR);
      e.cycle(List.of(new EngineEvent.AppFinished(AppId.of(app))));
    }
    long start = clock.nowMillis();
    CycleResult etl = e.cycle(List.of(new AppSubmitted(AppId.of("etl-3"), "q", "u", 0, "etl"),
        new Demand(AppId.of("etl-3"), "r", ONE_GPU, 8, PlacementSpec.SINGLE)));
    assertThat(etl.allocations()).hasSize(8);
    clock.advance(HOUR);
    Reserve r = reserve(gang(e, "gang", 8));
    assertThat(r.projectedStartMillis()).as("the kind's median less what etl-3 has run")
        .isEqualTo(start + 5 * HOUR / 2);
    assertThat(e.nextReservationDeadlineMillis()).isEqualTo(OptionalLong.of(start + 5 * HOUR / 2 + MARGIN));
    clock.set(start + HOUR + TIMEOUT);
    assertThat(requeued(e.cycle(List.of()))).as("kept past the fixed timeout").isEmpty();

    // etl-3 outlives its estimate: its drain is unknown again, and the reservation goes as if it had been unknown.
    clock.set(start + 5 * HOUR / 2 + MARGIN);
    assertThat(requeued(e.cycle(List.of()))).singleElement()
        .satisfies(w -> assertThat(w).contains("timed out after 900 s"));
  }

  @Test
  void withoutLearnedRunTimesTheSameDrainIsUnknown() {
    Engine e = engine(EngineSettings.defaults(), "n1");
    e.cycle(List.of(new AppSubmitted(AppId.of("etl-1"), "q", "u", 0, "etl"),
        new Demand(AppId.of("etl-1"), "r", ONE_GPU, 8, PlacementSpec.SINGLE)));
    clock.advance(2 * HOUR);
    e.cycle(List.of(new EngineEvent.AppFinished(AppId.of("etl-1"))));
    e.cycle(List.of(new AppSubmitted(AppId.of("etl-2"), "q", "u", 0, "etl"),
        new Demand(AppId.of("etl-2"), "r", ONE_GPU, 8, PlacementSpec.SINGLE)));
    clock.advance(1_000);
    assertThat(reserve(gang(e, "gang", 8)).projectedStartMillis()).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void theLearnedRunTimesSwitchIsReadFromItsKey() {
    assertThat(EngineSettings.fromConfiguration(java.util.Map.of(
        EngineSettings.RESERVATION_LEARNED_RUNTIMES, "true")).reservationLearnedRuntimes()).isTrue();
    assertThat(EngineSettings.defaults().reservationLearnedRuntimes()).isFalse();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> EngineSettings.fromConfiguration(java.util.Map.of(
        EngineSettings.RESERVATION_LEARNED_RUNTIMES, "sometimes")))
        .hasMessageContaining(EngineSettings.RESERVATION_LEARNED_RUNTIMES);
  }

  @Test
  void onlyTheGangItsQueueServesFirstHoldsNodesWhoseDrainIsUnknown() {
    Engine e = engine(EngineSettings.defaults(), "n1", "n2");
    run(e, "undeclared", 16, 0);
    clock.set(1_000);
    Reserve first = reserve(gang(e, "first", 4));
    assertThat(first.projectedStartMillis()).isEqualTo(Long.MAX_VALUE);
    clock.set(2_000);
    CycleResult second = gang(e, "second", 4);
    assertThat(second.decisions()).noneMatch(Reserve.class::isInstance);
    assertThat(e.pendingReasons(AppId.of("second")).get("workers"))
        .contains("reserved only for the gang its queue serves first");
    assertThat(e.cluster().reservations()).hasSize(1);

    // The first gang's reservation times out and it backs off: nobody else idles nodes on a guess meanwhile.
    clock.set(1_000 + TIMEOUT);
    assertThat(requeued(e.cycle(List.of()))).hasSize(1);
    assertThat(e.cluster().reservations()).isEmpty();
    clock.set(1_000 + 2 * TIMEOUT);
    assertThat(reserve(e.cycle(List.of())).appId()).isEqualTo(AppId.of("first"));
  }

  @Test
  void everyGangMayReserveNodesWhoseDrainDeclaredRunTimesBound() {
    Engine e = engine(EngineSettings.defaults(), "n1", "n2");
    run(e, "declared", 16, 3 * HOUR);
    clock.set(1_000);
    assertThat(reserve(gang(e, "first", 4)).projectedStartMillis()).isEqualTo(3 * HOUR);
    assertThat(reserve(gang(e, "second", 4)).projectedStartMillis()).isEqualTo(3 * HOUR);
    assertThat(e.cluster().reservations()).hasSize(2);
  }

  @Test
  void underShortestFirstTheHeadGangIsTheShortest() {
    QueueTree ranked = queues("root.queues", "q", "root.q.capacity", "100", "root.q.user-limit-factor", "-1",
        "root.q.spindle.ordering", "shortest-first");
    Engine e = new Engine(CATALOG, ranked, RACK, clock, EngineSettings.defaults().withRegistrationSettleMillis(0));
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8))));
    run(e, "undeclared", 16, 0);
    clock.set(1_000);
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("long"), "q", "u", 0),
        new Demand(AppId.of("long"), "workers", ONE_GPU, 4, PlacementSpec.gang(null, false)
            .withMaxRuntimeMillis(10 * HOUR)),
        new AppSubmitted(AppId.of("short"), "q", "u", 0),
        new Demand(AppId.of("short"), "workers", ONE_GPU, 4, PlacementSpec.gang(null, false)
            .withMaxRuntimeMillis(HOUR))));
    assertThat(reserve(r).appId()).as("submitted later, but it has less to run").isEqualTo(AppId.of("short"));
    assertThat(e.cluster().reservations()).hasSize(1);
  }

  @Test
  void aStarvedGangWhoseReservedNodesHoldNothingItMayTakeMovesItsReservationToWhereAReclaimFreesRoom() {
    QueueTree two = queues("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
        "root.a.maximum-capacity", "100", "root.b.maximum-capacity", "100", "root.a.user-limit-factor", "-1",
        "root.b.user-limit-factor", "-1");
    EngineSettings settings = EngineSettings.defaults().withRegistrationSettleMillis(0)
        .withPreemption(new io.spindle.core.preemption.PreemptionSettings(true, 30_000, 60_000, 0, 0, 100));
    Engine e = new Engine(CATALOG, two, RACK, clock, settings);
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8)),
        new NodeAdded(gpuNode("n3", "/r1", 8))));
    // a: 8 of its fair 12 GPUs, all on n1; b: 16 on n2 and n3, 4 above its fair share.
    assertThat(e.cycle(List.of(new AppSubmitted(AppId.of("a-work"), "a", "u", 0),
        new Demand(AppId.of("a-work"), "r", ONE_GPU, 8, PlacementSpec.SINGLE))).allocations()).hasSize(8);
    java.util.Map<Long, NodeId> whereB = new java.util.HashMap<>();
    e.cycle(List.of(new AppSubmitted(AppId.of("b-work"), "b", "u", 0),
        new Demand(AppId.of("b-work"), "r", ONE_GPU, 16, PlacementSpec.SINGLE))).allocations()
        .forEach(x -> whereB.put(x.allocationId(), x.nodeId()));
    assertThat(whereB).hasSize(16);
    clock.set(1_000);
    CycleResult first = e.cycle(List.of(new AppSubmitted(AppId.of("gang"), "a", "u", 0),
        new Demand(AppId.of("gang"), "workers", ONE_GPU, 4, PlacementSpec.gang(null, false))));
    assertThat(reserve(first).nodeIds()).as("full everywhere: the first node").containsExactly(NodeId.of("n1"));

    // Starved: nothing on n1 may be taken for it (a's own work), so the reclaim comes from b, on one of its nodes,
    // and the reservation follows it there, holding what the victims free for the gang.
    clock.set(40_000);
    CycleResult starved = e.cycle(List.of());
    List<Decision.RequestCheckpoint> notices = starved.decisions().stream()
        .filter(Decision.RequestCheckpoint.class::isInstance).map(Decision.RequestCheckpoint.class::cast).toList();
    assertThat(notices).isNotEmpty().allMatch(n -> n.appId().equals(AppId.of("b-work")));
    List<NodeId> freed = notices.stream().flatMap(n -> n.allocationIds().stream()).map(whereB::get).distinct().toList();
    assertThat(freed).hasSize(1).doesNotContain(NodeId.of("n1"));
    assertThat(e.cluster().reservations()).singleElement()
        .satisfies(r -> assertThat(r.nodeIds()).isEqualTo(freed))
        .satisfies(r -> assertThat(r.createdMillis()).as("its lifetime runs on").isEqualTo(1_000));
  }

  @Test
  void theCapHoldsForDrainsExpectedBeyondIt() {
    long week = EngineSettings.DEFAULT_RESERVATION_MAX_DRAIN_MILLIS;
    Engine e = engine(EngineSettings.defaults(), "n1");
    run(e, "month", 8, 30 * 24 * HOUR);
    clock.set(1_000);
    gang(e, "gang", 8);
    assertThat(e.nextReservationDeadlineMillis()).isEqualTo(OptionalLong.of(1_000 + week));
    clock.set(1_000 + week - 1);
    assertThat(requeued(e.cycle(List.of()))).isEmpty();
    clock.set(1_000 + week);
    assertThat(requeued(e.cycle(List.of()))).singleElement()
        .satisfies(w -> assertThat(w).contains("held 604800 s, the most a reservation waits for a drain"));
  }

  @Test
  void aCapAtOrBelowTheTimeoutTurnsTheDrainOffAndTheTimeoutHolds() {
    Engine e = engine(EngineSettings.defaults().withReservationMaxDrainMillis(0), "n1");
    run(e, "training", 8, 3 * HOUR);
    clock.set(1_000);
    assertThat(reserve(gang(e, "gang", 8)).projectedStartMillis()).as("still projected").isEqualTo(3 * HOUR);
    clock.set(1_000 + TIMEOUT);
    assertThat(requeued(e.cycle(List.of()))).containsExactly("re-queued: reservation on n1 timed out after 900 s");
  }

  @Test
  void aSmallGangThatEndsBeforeTheProjectedStartBackfillsTheDrainingNodeAndOneThatEndsLaterWaits() {
    Engine e = engine(EngineSettings.defaults(), "n1");
    run(e, "training", 6, 3 * HOUR); // Two GPUs idle while n1 drains for the gang of eight.
    clock.set(1_000);
    reserve(gang(e, "gang", 8));
    CycleResult tooLong = e.cycle(List.of(new AppSubmitted(AppId.of("pair-long"), "q", "u", 0),
        new Demand(AppId.of("pair-long"), "w", ONE_GPU, 2, PlacementSpec.gang(null, false).withMaxRuntimeMillis(
            3 * HOUR))));
    assertThat(tooLong.allocations()).as("would end after the gang is due").isEmpty();
    CycleResult fits = e.cycle(List.of(new AppSubmitted(AppId.of("pair"), "q", "u", 0),
        new Demand(AppId.of("pair"), "w", ONE_GPU, 2, PlacementSpec.gang(null, false).withMaxRuntimeMillis(HOUR))));
    assertThat(fits.allocations()).hasSize(2).allMatch(a -> a.appId().equals(AppId.of("pair")));
  }

  @Test
  void nothingBackfillsAReservationWhoseDrainIsUnknown() {
    Engine e = engine(EngineSettings.defaults(), "n1");
    run(e, "undeclared", 6, 0);
    clock.set(1_000);
    reserve(gang(e, "gang", 8));
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("quick"), "q", "u", 0),
        new Demand(AppId.of("quick"), "r", ONE_GPU, 1, PlacementSpec.SINGLE.withMaxRuntimeMillis(60_000))));
    assertThat(r.allocations()).as("no end is known that it could finish before").isEmpty();
  }

  @Test
  void theMaxDrainKeyIsReadWithTheOtherReservationKeys() {
    assertThat(EngineSettings.fromConfiguration(java.util.Map.of()).reservationMaxDrainMillis())
        .isEqualTo(604_800_000);
    assertThat(EngineSettings.fromConfiguration(java.util.Map.of(EngineSettings.RESERVATION_MAX_DRAIN_SECONDS,
        "86400")).reservationMaxDrainMillis()).isEqualTo(86_400_000);
    assertThat(Arrays.asList("-1", "2592001", "soon")).allSatisfy(bad ->
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> EngineSettings.fromConfiguration(
            java.util.Map.of(EngineSettings.RESERVATION_MAX_DRAIN_SECONDS, bad)))
            .hasMessageContaining(EngineSettings.RESERVATION_MAX_DRAIN_SECONDS));
  }
}
