package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.Preempt;
import io.spindle.core.engine.Decision.RequestCheckpoint;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.CheckpointAnswered;
import io.spindle.core.engine.EngineEvent.CheckpointReported;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.ContainerRecovered;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.preemption.CheckpointAnswer;
import io.spindle.core.preemption.CheckpointHandshake;
import io.spindle.core.preemption.Need;
import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A standby takes over from a failed leader with the durable state the leader exported and what YARN recovers, and
 * from then on decides as the leader would have ({@link FailoverTwin} checks every decision and the durable state of
 * every cycle). Defaults unless a test says otherwise: starvation 60 s, grace 120 s, one extension of at most 300 s.
 */
class FailoverTest {

  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  private static final Topology RACK = Topology.builder("rack").location("/r1").build();
  private static final PreemptionSettings ON = PreemptionSettings.defaults().withEnabled(true);
  /** Two queues of 8 GPUs each on 16 GPUs; no user limit, so one user may borrow the whole cluster. */
  private static final QueueTree HALVES = queues("root.queues", "a,b", "root.a.capacity", "50",
      "root.b.capacity", "50", "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1");
  private static final QueueTree ONE = queues("root.queues", "q", "root.q.capacity", "100",
      "root.q.user-limit-factor", "-1");

  private final ManualClock clock = new ManualClock(0);

  private FailoverTwin twin(QueueTree tree, EngineSettings settings, int nodes) {
    FailoverTwin t = new FailoverTwin(clock, c -> new Engine(CATALOG, tree, RACK, c, settings));
    List<EngineEvent> add = new ArrayList<>();
    for (int i = 1; i <= nodes; i++) {
      add.add(new NodeAdded(gpuNode("n" + i, "/r1", 8)));
    }
    t.cycle(add);
    return t;
  }

  private CycleResult at(FailoverTwin t, long millis, EngineEvent... events) {
    clock.set(millis);
    return t.cycle(events);
  }

  private static <T extends Decision> List<T> of(CycleResult r, Class<T> type) {
    return r.decisions().stream().filter(type::isInstance).map(type::cast).toList();
  }

  private static List<Long> ids(List<Allocate> allocations) {
    return allocations.stream().map(Allocate::allocationId).toList();
  }

  private static EngineEvent[] finished(List<Long> ids) {
    return ids.stream().map(ContainerFinished::new).toArray(EngineEvent[]::new);
  }

  /**
   * Queue b fills the cluster with a gang of 8 ("vg", on n1) and 8 single containers ("vs", on n2). At 10 s queue
   * a's gang of 8 ("owner") reserves n1; at 70 s the gang on n1 is noticed (deadline 190 s); at 100 s it is granted
   * an extension of 60 s (deadline 250 s). Returns the gang's allocation ids.
   */
  private List<Long> reservedGangWithAnExtendedNotice(FailoverTwin t) {
    CycleResult started = t.cycle(new AppSubmitted(AppId.of("vg"), "b", "u", 0),
        new Demand(AppId.of("vg"), "workers", ONE_GPU, 8, PlacementSpec.gang(null, false)),
        new AppSubmitted(AppId.of("vs"), "b", "u", 0), new Demand(AppId.of("vs"), "r", ONE_GPU, 8));
    List<Long> gang = ids(started.allocations().stream().filter(a -> a.appId().equals(AppId.of("vg"))).toList());
    assertThat(started.allocations().stream().filter(a -> a.appId().equals(AppId.of("vg"))))
        .allMatch(a -> a.nodeId().equals(NodeId.of("n1")));
    CycleResult asked = at(t, 10_000, new AppSubmitted(AppId.of("owner"), "a", "u", 0),
        new Demand(AppId.of("owner"), "workers", ONE_GPU, 8, PlacementSpec.gang(null, false)));
    assertThat(of(asked, Decision.Reserve.class)).singleElement()
        .satisfies(r -> assertThat(r.nodeIds()).containsExactly(NodeId.of("n1")));
    RequestCheckpoint notice = of(at(t, 70_000), RequestCheckpoint.class).get(0);
    assertThat(notice.allocationIds()).containsExactlyInAnyOrderElementsOf(gang);
    assertThat(notice.deadlineMillis()).isEqualTo(190_000);
    RequestCheckpoint extended = of(at(t, 100_000, new CheckpointAnswered(AppId.of("vg"), notice.noticeId(),
        CheckpointAnswer.EXTEND, 60_000, null)), RequestCheckpoint.class).get(0);
    assertThat(extended.deadlineMillis()).isEqualTo(250_000);
    assertThat(extended.extensionsGranted()).isEqualTo(1);
    return gang;
  }

  @Test
  void theStandbyReclaimsAtTheExtendedDeadlineWholeAndStartsTheReservedGangOnItsNodes() {
    FailoverTwin t = twin(HALVES, EngineSettings.defaults().withPreemption(ON), 2);
    List<Long> gang = reservedGangWithAnExtendedNotice(t);

    RestoreReport report = t.failover();
    assertThat(report.dropped()).isEmpty();
    assertThat(report.notices()).isEqualTo(1);
    assertThat(report.reservations()).isEqualTo(1);
    assertThat(report.units()).as("the gang, and each single container apart").isEqualTo(9);

    // The first cycle tells the application its notice again, as it stands: same id, same deadline.
    at(t, 100_500);
    assertThat(of(t.lastStandbyCycle(), RequestCheckpoint.class)).singleElement().satisfies(n -> {
      assertThat(n.noticeId()).isEqualTo(1);
      assertThat(n.deadlineMillis()).isEqualTo(250_000);
      assertThat(n.extensionsGranted()).isEqualTo(1);
      assertThat(n.extensionsLeft()).isZero();
    });
    // The reservation still holds n1: nothing else may start there, though single containers fit.
    CycleResult other = at(t, 120_000, new AppSubmitted(AppId.of("small"), "b", "u", 0), new Demand(AppId.of("small"), "r", ONE_GPU, 1));
    assertThat(other.allocations()).isEmpty();

    assertThat(of(at(t, 249_999), Preempt.class)).isEmpty();
    assertThat(of(at(t, 250_000), Preempt.class)).singleElement().satisfies(p -> {
      assertThat(p.allocationIds()).as("the whole gang, as the reference names it").containsExactlyElementsOf(gang);
      assertThat(p.reason()).contains("deadline").contains("after 1 extension");
    });
    assertThat(of(t.lastStandbyCycle(), Preempt.class)).singleElement().satisfies(p -> assertThat(p.allocationIds())
        .containsExactlyElementsOf(gang.stream().map(t::standbyId).toList()));

    CycleResult after = at(t, 251_000, finished(gang));
    assertThat(after.allocations()).hasSize(8)
        .allSatisfy(a -> assertThat(List.of(a.appId(), a.nodeId())).containsExactly(AppId.of("owner"), NodeId.of("n1")));
    assertThat(t.standby().pendingContainers()).as("the preempted gang waits again whole").isEqualTo(8 + 1);
  }

  @Test
  void anAnswerToTheOldLeadersNoticeWorksAndNoNoticeIdIsIssuedTwice() {
    FailoverTwin t = twin(HALVES, EngineSettings.defaults().withPreemption(ON), 2);
    List<Long> gang = reservedGangWithAnExtendedNotice(t);
    t.failover();

    CycleResult done = at(t, 150_000,
        new CheckpointAnswered(AppId.of("vg"), 1, CheckpointAnswer.DONE, 0, "hdfs:///ckpt/vg/step-40"));
    assertThat(of(done, Preempt.class)).singleElement().satisfies(p -> {
      assertThat(p.noticeId()).isEqualTo(1);
      assertThat(p.checkpointLocation()).isEqualTo("hdfs:///ckpt/vg/step-40");
      assertThat(p.reason()).contains("checkpoint done");
    });
    at(t, 151_000, finished(gang));
    assertThat(t.standby().resumeCheckpoint(AppId.of("vg"), "workers")).contains("hdfs:///ckpt/vg/step-40");

    // A second failover, then a higher-priority request of queue b: its notice takes a fresh id.
    t.failover();
    assertThat(t.standbyState().nextNoticeId()).isEqualTo(2);
    at(t, 160_000, new AppSubmitted(AppId.of("urgent"), "b", "u", 9), new Demand(AppId.of("urgent"), "r", ONE_GPU, 1));
    List<RequestCheckpoint> next = of(at(t, 220_000), RequestCheckpoint.class);
    assertThat(next).singleElement().satisfies(n -> {
      assertThat(n.appId()).isEqualTo(AppId.of("vs"));
      assertThat(n.noticeId()).isEqualTo(2);
    });
  }

  @Test
  void aVictimContainerThatEndedBeforeTheFailoverStaysChargedUntilItsReclaimCompletes() {
    // No reservations: the gang's victims may be anywhere, and only the plan keeps their capacity for it.
    FailoverTwin t = twin(HALVES, EngineSettings.defaults().withReservations(900_000, 0).withPreemption(ON), 2);
    CycleResult filled = t.cycle(new AppSubmitted(AppId.of("vs"), "b", "u", 0), new Demand(AppId.of("vs"), "r", ONE_GPU, 16));
    assertThat(filled.allocations()).hasSize(16);
    at(t, 10_000, new AppSubmitted(AppId.of("owner"), "a", "u", 0),
        new Demand(AppId.of("owner"), "workers", ONE_GPU, 4, PlacementSpec.gang(null, false)));
    List<RequestCheckpoint> notices = of(at(t, 70_000), RequestCheckpoint.class);
    assertThat(notices).hasSize(4);
    // Two victims are done at once and killed; the other two stay silent until the deadline (190 s).
    CycleResult done = at(t, 80_000,
        new CheckpointAnswered(AppId.of("vs"), notices.get(0).noticeId(), CheckpointAnswer.DONE, 0, null),
        new CheckpointAnswered(AppId.of("vs"), notices.get(1).noticeId(), CheckpointAnswer.DONE, 0, null));
    List<Long> killed = of(done, Preempt.class).stream().flatMap(p -> p.allocationIds().stream()).toList();
    assertThat(killed).hasSize(2);
    at(t, 81_000, finished(killed));
    ResourceVector charged = t.reference.appUsage(AppId.of("vs")).orElseThrow();
    assertThat(charged).as("held while the other victims checkpoint").isEqualTo(ResourceVector.of(16 * 1024, 16, 16));

    RestoreReport report = t.failover();
    assertThat(report.dropped()).isEmpty();
    assertThat(t.standby().appUsage(AppId.of("vs"))).contains(charged);

    // Another request of queue a cannot take the held GPUs meanwhile, on either engine.
    for (long now = 86_000; now < 190_000; now += 5_000) {
      CycleResult r = at(t, now, now == 86_000
          ? new EngineEvent[] {new AppSubmitted(AppId.of("sneak"), "a", "u", 0), new Demand(AppId.of("sneak"), "r", ONE_GPU, 1)}
          : new EngineEvent[0]);
      assertThat(r.allocations()).as("at %d ms", now).isEmpty();
    }
    List<Long> rest = of(at(t, 190_000), Preempt.class).stream().flatMap(p -> p.allocationIds().stream()).toList();
    assertThat(rest).hasSize(2);
    CycleResult freed = at(t, 191_000, finished(rest));
    assertThat(freed.allocations()).as("the gang first, on the capacity reclaimed for it").hasSizeGreaterThanOrEqualTo(4)
        .first().satisfies(a -> assertThat(a.appId()).isEqualTo(AppId.of("owner")));
  }

  @Test
  void aReclaimUnderWayIsOrderedAgainByTheStandbyWhileItsContainersStillRun() {
    FailoverTwin t = twin(HALVES, EngineSettings.defaults().withPreemption(ON), 2);
    List<Long> gang = reservedGangWithAnExtendedNotice(t);
    CycleResult done = at(t, 150_000, new CheckpointAnswered(AppId.of("vg"), 1, CheckpointAnswer.DONE, 0, "ckpt://vg"));
    assertThat(of(done, Preempt.class)).hasSize(1);

    t.failover(); // Before the kills were carried out: the containers come back running.
    at(t, 150_500);
    assertThat(of(t.lastStandbyCycle(), Preempt.class)).singleElement().satisfies(p -> {
      assertThat(p.noticeId()).isEqualTo(1);
      assertThat(p.allocationIds()).containsExactlyElementsOf(gang.stream().map(t::standbyId).toList());
      assertThat(p.checkpointLocation()).isEqualTo("ckpt://vg");
      assertThat(p.reason()).contains("ordered again by a new leader");
    });
    assertThat(of(t.lastStandbyCycle(), RequestCheckpoint.class)).isEmpty();
    CycleResult after = at(t, 151_000, finished(gang));
    assertThat(after.allocations()).hasSize(8).allMatch(a -> a.appId().equals(AppId.of("owner")));
  }

  @Test
  void recoveredSingleContainersAreSeparateVictimsAgainOnlyWithTheirUnitsRestored() {
    EngineSettings settings = EngineSettings.defaults().withPreemption(ON);
    FailoverTwin t = twin(ONE, settings, 1);
    t.cycle(new AppSubmitted(AppId.of("low"), "q", "u", 0), new Demand(AppId.of("low"), "r", ONE_GPU, 8));
    t.failover();
    at(t, 1_000, new AppSubmitted(AppId.of("high"), "q", "u", 5), new Demand(AppId.of("high"), "r", ONE_GPU, 1));
    List<RequestCheckpoint> notices = of(at(t, 61_000), RequestCheckpoint.class);
    assertThat(notices).singleElement().satisfies(n -> assertThat(n.allocationIds()).hasSize(1));

    // Without the units, the eight recovered containers of one request would be one victim, all taken for one GPU.
    ManualClock bareClock = new ManualClock(0);
    Engine bare = new Engine(CATALOG, ONE, RACK, bareClock, settings);
    List<EngineEvent> recovery = new ArrayList<>(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)),
        new AppSubmitted(AppId.of("low"), "q", "u", 0)));
    for (int i = 1; i <= 8; i++) {
      recovery.add(new ContainerRecovered(-i, AppId.of("low"), "r", NodeId.of("n1"), ONE_GPU));
    }
    bare.cycle(recovery);
    bareClock.set(1_000);
    bare.cycle(List.of(new AppSubmitted(AppId.of("high"), "q", "u", 5), new Demand(AppId.of("high"), "r", ONE_GPU, 1)));
    bareClock.set(61_000);
    assertThat(of(bare.cycle(List.of()), RequestCheckpoint.class)).singleElement()
        .satisfies(n -> assertThat(n.allocationIds()).hasSize(8));
  }

  @Test
  void aReservationTimesOutWhenItWouldHaveAndItsBackoffHoldsAcrossFailovers() {
    // Preemption off: reservations and the run times containers declared are kept all the same. A drain cap of 0
    // leaves the timeout alone, though the nodes' drain is known (the next test has it follow the drain).
    FailoverTwin t = twin(ONE, EngineSettings.defaults().withReservations(100_000, 4).withReservationMaxDrainMillis(0),
        2);
    t.cycle(new AppSubmitted(AppId.of("fill"), "q", "u", 0),
        new Demand(AppId.of("fill"), "r", ONE_GPU, 12, PlacementSpec.SINGLE.withMaxRuntimeMillis(1_000_000)));
    CycleResult reserved = at(t, 10_000, new AppSubmitted(AppId.of("gang"), "q", "u", 0),
        new Demand(AppId.of("gang"), "workers", ONE_GPU, 8, PlacementSpec.gang(null, false)));
    assertThat(of(reserved, Decision.Reserve.class)).singleElement()
        .satisfies(r -> assertThat(r.projectedStartMillis()).isEqualTo(1_000_000));

    t.failover();
    assertThat(of(at(t, 109_999), Decision.Wait.class)).isEmpty();
    assertThat(of(at(t, 110_000), Decision.Wait.class))
        .anySatisfy(w -> assertThat(w.reason()).contains("timed out after 100 s"));
    assertThat(t.standbyState().reservationBackoffs()).singleElement()
        .satisfies(b -> assertThat(b.noReservationBeforeMillis()).isEqualTo(210_000));

    t.failover();
    assertThat(of(at(t, 209_999), Decision.Reserve.class)).isEmpty();
    assertThat(of(at(t, 210_000), Decision.Reserve.class)).singleElement()
        .satisfies(r -> assertThat(r.projectedStartMillis()).as("from the declared run times").isEqualTo(1_000_000));
  }

  @Test
  void aReservationThatFollowsTheDrainEndsWhenItWouldHaveAcrossFailoversWithNothingNewKept() {
    // The deadline derives from the reservation's age and the declared ends, both kept: the drain is due at
    // 1,000,000 (fill declared it), so the reservation holds until 1,060,000 (a minute's margin), not the timeout.
    // The node where "stuck" (no declared end) runs is never chosen: its drain is unknown.
    FailoverTwin t = twin(ONE, EngineSettings.defaults().withReservations(100_000, 4), 2);
    t.cycle(new AppSubmitted(AppId.of("fill"), "q", "u", 0),
        new Demand(AppId.of("fill"), "r", ONE_GPU, 12, PlacementSpec.SINGLE.withMaxRuntimeMillis(1_000_000)),
        new AppSubmitted(AppId.of("stuck"), "q", "u", 0), new Demand(AppId.of("stuck"), "r", ONE_GPU, 2));
    at(t, 10_000, new AppSubmitted(AppId.of("gang"), "q", "u", 0),
        new Demand(AppId.of("gang"), "workers", ONE_GPU, 8, PlacementSpec.gang(null, false)));
    t.failover();
    assertThat(of(at(t, 110_000), Decision.Wait.class)).as("past the timeout: still held")
        .noneMatch(w -> w.reason().startsWith("re-queued"));
    t.failover();
    assertThat(t.standbyState().reservations()).singleElement()
        .satisfies(r -> assertThat(r.createdMillis()).isEqualTo(10_000));
    // No end is reported: the fill overran what it declared, and the reservation goes a margin after the drain.
    assertThat(of(at(t, 1_059_999), Decision.Wait.class)).noneMatch(w -> w.reason().startsWith("re-queued"));
    assertThat(of(at(t, 1_060_000), Decision.Wait.class))
        .anySatisfy(w -> assertThat(w.reason()).startsWith("re-queued").contains("held 1050 s"));
  }

  @Test
  void entriesForWhatDidNotComeBackAreDroppedEachWithItsReason() {
    EngineSettings settings = EngineSettings.defaults().withPreemption(ON);
    Engine leader = new Engine(CATALOG, HALVES, RACK, clock, settings);
    leader.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8))));
    CycleResult started = leader.cycle(List.of(new AppSubmitted(AppId.of("x"), "b", "u", 0),
        new Demand(AppId.of("x"), "workers", ONE_GPU, 8, PlacementSpec.gang(null, false)),
        new AppSubmitted(AppId.of("y"), "b", "u", 0), new Demand(AppId.of("y"), "r", ONE_GPU, 4),
        new CheckpointReported(AppId.of("y"), 0, "ckpt://y")));
    clock.set(5_000);
    leader.cycle(List.of(new AppSubmitted(AppId.of("g"), "a", "u", 0),
        new Demand(AppId.of("g"), "workers", ONE_GPU, 8, PlacementSpec.gang(null, false))));
    Map<Long, String> names = new HashMap<>();
    started.allocations().forEach(a -> names.put(a.allocationId(), a.appId() + "-" + a.allocationId()));
    DurableState saved = leader.durableState(names::get);
    assertThat(saved.reservations()).singleElement().satisfies(r -> assertThat(r.nodeIds()).containsExactly(NodeId.of("n2")));

    // n2 has not re-registered, y was not recovered, one of x's containers ended during the failover.
    Engine standby = new Engine(CATALOG, HALVES, RACK, clock, settings);
    List<EngineEvent> recovery = new ArrayList<>(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)),
        new AppSubmitted(AppId.of("x"), "b", "u", 0), new AppSubmitted(AppId.of("g"), "a", "u", 0)));
    Map<String, Long> recovered = new HashMap<>();
    List<Allocate> xs = started.allocations().stream().filter(a -> a.appId().equals(AppId.of("x"))).toList();
    for (Allocate a : xs.subList(1, xs.size())) {
      long id = -a.allocationId();
      recovered.put(names.get(a.allocationId()), id);
      recovery.add(new ContainerRecovered(id, AppId.of("x"), "workers", NodeId.of("n1"), ONE_GPU));
    }
    standby.cycle(recovery);
    RestoreReport report = standby.restore(saved, recovered::get);

    assertThat(report.units()).isEqualTo(1);
    assertThat(report.reservations()).isZero();
    assertThat(report.dropped()).anySatisfy(d -> assertThat(d).contains("reservation of g/workers")
        .contains("node n2 has not re-registered"));
    assertThat(report.dropped()).anySatisfy(d -> assertThat(d).contains("of x/workers")
        .contains("[" + names.get(xs.get(0).allocationId()) + "] not recovered"));
    assertThat(report.dropped()).anySatisfy(d -> assertThat(d).contains("of y/r")
        .contains("none of its containers was recovered"));
    assertThat(report.dropped()).anySatisfy(d -> assertThat(d).contains("checkpoint report of y")
        .contains("application not recovered"));
    assertThat(report.toString()).startsWith("restored 1 units, 0 checkpoint notices, 0 reservations; dropped ");
    // The gang is one unit of the seven that came back, still sized 8: preempted, it is asked for whole.
    assertThat(standby.durableState(id -> "x" + id).units()).singleElement().satisfies(u -> {
      assertThat(u.containers()).hasSize(7);
      assertThat(u.size()).isEqualTo(8);
      assertThat(u.spec().gang()).isTrue();
    });
  }

  @Test
  void restoringAgainOnlyBringsLateContainersIntoTheirUnits() {
    EngineSettings settings = EngineSettings.defaults().withPreemption(ON);
    Engine leader = new Engine(CATALOG, ONE, RACK, clock, settings);
    leader.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8))));
    CycleResult started = leader.cycle(List.of(new AppSubmitted(AppId.of("wide"), "q", "u", 0),
        new Demand(AppId.of("wide"), "workers", ONE_GPU, 16, PlacementSpec.gang(null, false))));
    DurableState saved = leader.durableState(id -> "c" + id);

    Engine standby = new Engine(CATALOG, ONE, RACK, clock, settings);
    Map<String, Long> ids = new HashMap<>();
    List<EngineEvent> early = new ArrayList<>(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)),
        new AppSubmitted(AppId.of("wide"), "q", "u", 0)));
    List<EngineEvent> late = new ArrayList<>(List.of(new NodeAdded(gpuNode("n2", "/r1", 8))));
    for (Allocate a : started.allocations()) {
      ids.put("c" + a.allocationId(), -a.allocationId());
      (a.nodeId().equals(NodeId.of("n1")) ? early : late).add(
          new ContainerRecovered(-a.allocationId(), AppId.of("wide"), "workers", a.nodeId(), ONE_GPU));
    }
    standby.cycle(early);
    RestoreReport first = standby.restore(saved, ids::get);
    assertThat(first.dropped()).singleElement().satisfies(d -> assertThat(d).contains("not recovered"));
    DurableState once = standby.durableState(id -> "c" + -id);
    assertThat(standby.restore(saved, ids::get).dropped()).as("nothing new").isEmpty();
    assertThat(standby.durableState(id -> "c" + -id)).as("a second restore changes nothing").isEqualTo(once);

    standby.cycle(late);
    RestoreReport second = standby.restore(saved, ids::get);
    assertThat(second.units()).isEqualTo(1);
    assertThat(standby.durableState(id -> "c" + -id).units()).as("the gang whole again, as the leader had it")
        .isEqualTo(saved.units());

    // And it is preempted whole: a higher priority gang of the queue names all sixteen.
    clock.set(1_000);
    standby.cycle(List.of(new AppSubmitted(AppId.of("high"), "q", "u", 5),
        new Demand(AppId.of("high"), "workers", ONE_GPU, 2, PlacementSpec.gang(null, false))));
    clock.set(61_000);
    assertThat(of(standby.cycle(List.of()), RequestCheckpoint.class)).singleElement()
        .satisfies(n -> assertThat(n.allocationIds()).hasSize(16));
  }

  @Test
  void theDurableVersionMovesWithTheStateAndNotOnIdleCycles() {
    FailoverTwin t = twin(HALVES, EngineSettings.defaults().withPreemption(ON), 2);
    reservedGangWithAnExtendedNotice(t);
    Engine e = t.reference;
    long before = e.durableVersion();
    DurableState state = e.durableState(t::referenceName);
    for (long now = 100_100; now < 101_000; now += 100) {
      at(t, now);
    }
    assertThat(e.durableVersion()).as("nothing changed").isEqualTo(before);
    assertThat(e.durableState(t::referenceName)).isEqualTo(state);
    at(t, 101_000, new CheckpointReported(AppId.of("vs"), 100_000, "ckpt://vs"));
    assertThat(e.durableVersion()).isGreaterThan(before);
    assertThat(e.durableState(t::referenceName).checkpoints()).singleElement()
        .isEqualTo(new DurableState.CheckpointState(AppId.of("vs"), 100_000, "ckpt://vs"));
  }

  @Test
  void inconsistentStatesAndLateRestoresAreRefused() {
    DurableState.UnitState unit = new DurableState.UnitState(3, AppId.of("app"), "r", ONE_GPU, PlacementSpec.SINGLE, 0, 1,
        List.of("c1"));
    DurableState.NoticeState notice = new DurableState.NoticeState(1, 3, AppId.of("app"), "r",
        List.of(new DurableState.NoticeContainer("c1", NodeId.of("n1"), ONE_GPU, Long.MAX_VALUE, false)), 0, 120_000, 0, 1,
        300_000, "why", null, CheckpointHandshake.State.NOTICED, null);
    Need need = new Need(AppId.of("other"), "r", "root.a", "u", 0, ResourceVector.of(1024, 1, 1), 1, false, true,
        ResourceVector.ZERO, null);
    DurableState.ReclaimState reclaim = new DurableState.ReclaimState(need, false, List.of(notice));

    assertThat(state(2, List.of(unit), List.of(reclaim)).reclaims()).hasSize(1);
    assertThatThrownBy(() -> state(1, List.of(unit), List.of(reclaim)))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("not below nextNoticeId");
    assertThatThrownBy(() -> state(2, List.of(), List.of(reclaim)))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("not among the units");
    assertThatThrownBy(() -> state(2, List.of(unit, unit), List.of()))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("two units with the same id");
    assertThatThrownBy(() -> new DurableState.NoticeState(1, 3, AppId.of("app"), "r", List.of(), 10, 5, 0, 1, 0, "why", null,
        CheckpointHandshake.State.NOTICED, null)).hasMessageContaining("deadlineMillis=5");
    assertThatThrownBy(() -> new DurableState.NoticeState(1, 3, AppId.of("app"), "r", List.of(), 0, 5, 0, 1, 0, "why", null,
        CheckpointHandshake.State.RECLAIMING, null)).hasMessageContaining("needs reclaim reason");

    Engine fresh = new Engine(CATALOG, HALVES, RACK, clock, EngineSettings.defaults().withPreemption(ON));
    assertThatThrownBy(() -> fresh.restore(null, name -> null)).isInstanceOf(InvalidInputException.class);

    // An engine that has issued notices of its own could reuse the old leader's ids: it must not restore.
    FailoverTwin busy = twin(HALVES, EngineSettings.defaults().withPreemption(ON), 2);
    reservedGangWithAnExtendedNotice(busy);
    assertThatThrownBy(() -> busy.reference.restore(DurableState.EMPTY, name -> null))
        .isInstanceOf(IllegalStateException.class);
  }

  private static DurableState state(long nextNoticeId, List<DurableState.UnitState> units,
      List<DurableState.ReclaimState> reclaims) {
    return new DurableState(nextNoticeId, 10, units, List.of(), List.of(), reclaims, List.of(), List.of(),
        new DurableState.StarvationState(List.of(), List.of()), List.of());
  }
}
