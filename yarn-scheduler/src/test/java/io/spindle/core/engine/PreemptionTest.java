package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.CancelCheckpoint;
import io.spindle.core.engine.Decision.Preempt;
import io.spindle.core.engine.Decision.RequestCheckpoint;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.CheckpointAnswered;
import io.spindle.core.engine.EngineEvent.CheckpointReported;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.preemption.CheckpointAnswer;
import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Preemption end to end on a virtual clock: starvation delay, victim choice, the checkpoint handshake (DONE,
 * silence, extensions), whole gangs, re-queueing, and the fairness rules. Defaults unless a test says otherwise:
 * starvation 60 s, grace 120 s, one extension of at most 300 s.
 */
class PreemptionTest {

  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  private static final Topology RACK = Topology.builder("rack").location("/r1").build();
  private static final PreemptionSettings ON = PreemptionSettings.defaults().withEnabled(true);
  /** Two queues of 8 GPUs each on 16 GPUs; no user limit, so one user may borrow the whole cluster. */
  private static final QueueTree HALVES = queues("root.queues", "a,b", "root.a.capacity", "50",
      "root.b.capacity", "50", "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1");

  private ManualClock clock = new ManualClock(0);

  private Engine engine(QueueTree tree, PreemptionSettings p, int nodes) {
    Engine e = new Engine(CATALOG, tree, RACK, clock, EngineSettings.defaults().withPreemption(p));
    List<EngineEvent> add = new ArrayList<>();
    for (int i = 1; i <= nodes; i++) {
      add.add(new NodeAdded(gpuNode("n" + i, "/r1", 8)));
    }
    e.cycle(add);
    return e;
  }

  private static <T extends Decision> List<T> of(CycleResult r, Class<T> type) {
    return r.decisions().stream().filter(type::isInstance).map(type::cast).toList();
  }

  private CycleResult at(Engine e, long millis, EngineEvent... events) {
    clock.set(millis);
    return e.cycle(List.of(events));
  }

  private static List<EngineEvent> finished(List<Long> ids) {
    return ids.stream().map(id -> (EngineEvent) new ContainerFinished(id)).toList();
  }

  /** Queue b borrows all 16 GPUs as single containers; returns their allocation ids. */
  private List<Long> borrowEverything(Engine e) {
    CycleResult r = e.cycle(List.of(new AppSubmitted(AppId.of("borrower"), "b", "u", 0), new Demand(AppId.of("borrower"), "r", ONE_GPU, 16)));
    assertThat(r.allocations()).hasSize(16);
    return r.allocations().stream().map(Allocate::allocationId).toList();
  }

  @Test
  void noContainerOfAQueueWithPreemptionDisabledIsEverAVictim() {
    // CapacityScheduler's disable_preemption, set on root and inherited by b (which borrows), overridden by nobody.
    QueueTree tree = queues("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
        "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1", "root.disable_preemption", "true",
        "root.a.disable_preemption", "FALSE");
    Engine e = engine(tree, ON, 2);
    borrowEverything(e);
    at(e, 10_000, new AppSubmitted(AppId.of("owner"), "a", "u", 0), new Demand(AppId.of("owner"), "r", ONE_GPU, 4));
    for (long t = 20_000; t < 600_000; t += 10_000) {
      assertThat(of(at(e, t), RequestCheckpoint.class)).as("at %d ms", t).isEmpty();
    }
  }

  @Test
  void aQueueBelowItsGuaranteeGetsGpusBackAfterTheStarvationDelayAndNotBefore() {
    Engine e = engine(HALVES, ON, 2);
    borrowEverything(e);
    CycleResult asked = at(e, 10_000, new AppSubmitted(AppId.of("owner"), "a", "u", 0), new Demand(AppId.of("owner"), "r", ONE_GPU, 4));
    assertThat(asked.allocations()).isEmpty();

    for (long t = 20_000; t < 70_000; t += 10_000) {
      assertThat(of(at(e, t), RequestCheckpoint.class)).as("at %d ms", t).isEmpty();
    }
    assertThat(of(at(e, 69_999), RequestCheckpoint.class)).isEmpty();
    List<RequestCheckpoint> notices = of(at(e, 70_000), RequestCheckpoint.class);
    // Preempt only what is needed: four single GPUs for four single containers, nothing more.
    assertThat(notices).hasSize(4).allSatisfy(n -> {
      assertThat(n.appId()).isEqualTo(AppId.of("borrower"));
      assertThat(n.allocationIds()).hasSize(1);
      assertThat(n.deadlineMillis()).isEqualTo(190_000);
      assertThat(n.forAppId()).isEqualTo(AppId.of("owner"));
      assertThat(n.reason()).contains("root.a is below its fair share");
    });
    // Victims still count as used while the application checkpoints: nothing moves, nobody is asked twice.
    assertThat(e.appUsage(AppId.of("borrower"))).contains(ResourceVector.of(16 * 1024, 16, 16));
    assertThat(of(at(e, 100_000), RequestCheckpoint.class)).isEmpty();

    // Silence: reclaimed at the deadline exactly.
    assertThat(of(at(e, 189_999), Preempt.class)).isEmpty();
    List<Preempt> preempts = of(at(e, 190_000), Preempt.class);
    assertThat(preempts).hasSize(4);
    assertThat(preempts.stream().flatMap(p -> p.allocationIds().stream()).toList())
        .containsExactlyInAnyOrderElementsOf(notices.stream().flatMap(n -> n.allocationIds().stream()).toList());
    assertThat(preempts.get(0).reason()).contains("deadline");
    assertThat(e.appUsage(AppId.of("borrower"))).as("charged until the driver reports them ended")
        .contains(ResourceVector.of(16 * 1024, 16, 16));

    List<Long> killed = preempts.stream().flatMap(p -> p.allocationIds().stream()).toList();
    clock.set(190_500);
    CycleResult after = e.cycle(finished(killed));
    assertThat(after.allocations()).hasSize(4).allMatch(a -> a.appId().equals(AppId.of("owner")));
    assertThat(of(after, Decision.Wait.class)).anySatisfy(w -> {
      assertThat(w.appId()).isEqualTo(AppId.of("borrower"));
      assertThat(w.reason()).startsWith("re-queued after preemption");
    });
    assertThat(e.pendingContainers()).as("the borrower's 4 wait again").isEqualTo(4);

    // The borrower is at its fair share now (12 of 16: it asks 16, the owner 4): it takes nothing back, ever.
    for (long t = 200_000; t < 1_000_000; t += 10_000) {
      CycleResult r = at(e, t);
      assertThat(of(r, RequestCheckpoint.class)).isEmpty();
    }
  }

  @Test
  void anApplicationMasterIsNeverAVictimWhetherStartedOrRecovered() {
    Resources amShape = Resources.of(1024, 1).withGpus(1);
    Engine e = engine(HALVES, ON, 2);
    // Queue b holds all 16 GPUs: 15 in application masters (one started, 14 recovered) and 1 in a worker.
    CycleResult started = e.cycle(List.of(new AppSubmitted(AppId.of("borrower"), "b", "u", 0),
        new Demand(AppId.of("borrower"), "am", amShape, 1, PlacementSpec.APPLICATION_MASTER),
        new Demand(AppId.of("borrower"), "worker", ONE_GPU, 1)));
    assertThat(started.allocations()).hasSize(2);
    long worker = started.allocations().stream().filter(a -> a.requestKey().equals("worker")).findFirst()
        .orElseThrow().allocationId();
    List<EngineEvent> recovered = new ArrayList<>();
    for (int i = 0; i < 14; i++) {
      recovered.add(new EngineEvent.ContainerRecovered(-1 - i, AppId.of("borrower"), "recovered-am", NodeId.of(i < 6 ? "n1" : "n2"),
          amShape, false));
    }
    e.cycle(recovered);

    at(e, 1_000, new AppSubmitted(AppId.of("owner"), "a", "u", 0), new Demand(AppId.of("owner"), "r", ONE_GPU, 4));
    List<RequestCheckpoint> notices = of(at(e, 61_000), RequestCheckpoint.class);
    assertThat(notices).as("only the worker can be taken back; masters stay").singleElement()
        .satisfies(n -> assertThat(n.allocationIds()).containsExactly(worker));
  }

  @Test
  void aHigherPriorityGangPreemptsALowerPriorityGangOfItsQueueWholeAndDoneReclaimsAtOnce() {
    QueueTree one = queues("root.queues", "q", "root.q.capacity", "100", "root.q.user-limit-factor", "-1");
    Engine e = engine(one, ON, 1);
    CycleResult low = e.cycle(List.of(new AppSubmitted(AppId.of("low"), "q", "u", 0),
        new Demand(AppId.of("low"), "workers", ONE_GPU, 8, PlacementSpec.gang(null, false))));
    List<Long> lowIds = low.allocations().stream().map(Allocate::allocationId).toList();
    assertThat(lowIds).hasSize(8);

    at(e, 1_000, new AppSubmitted(AppId.of("high"), "q", "u", 5),
        new Demand(AppId.of("high"), "workers", ONE_GPU, 4, PlacementSpec.gang(null, false)));
    assertThat(of(at(e, 60_999), RequestCheckpoint.class)).isEmpty();
    List<RequestCheckpoint> notices = of(at(e, 61_000), RequestCheckpoint.class);
    assertThat(notices).singleElement().satisfies(n -> {
      assertThat(n.appId()).isEqualTo(AppId.of("low"));
      assertThat(n.allocationIds()).as("the whole gang, never part of it").containsExactlyInAnyOrderElementsOf(lowIds);
      assertThat(n.reason()).contains("outranks");
    });

    long notice = notices.get(0).noticeId();
    CycleResult done = at(e, 75_000,
        new CheckpointAnswered(AppId.of("low"), notice, CheckpointAnswer.DONE, 0, "hdfs:///ckpt/low/step-900"));
    assertThat(of(done, Preempt.class)).singleElement().satisfies(p -> {
      assertThat(p.noticeId()).isEqualTo(notice);
      assertThat(p.allocationIds()).containsExactlyInAnyOrderElementsOf(lowIds);
      assertThat(p.checkpointLocation()).isEqualTo("hdfs:///ckpt/low/step-900");
      assertThat(p.reason()).contains("checkpoint done");
    });

    // The kills are reported over two cycles: the capacity appears only once the whole victim has ended.
    CycleResult half = at(e, 75_500, finished(lowIds.subList(0, 4)).toArray(EngineEvent[]::new));
    assertThat(half.allocations()).isEmpty();
    CycleResult all = at(e, 76_000, finished(lowIds.subList(4, 8)).toArray(EngineEvent[]::new));
    assertThat(all.allocations()).hasSize(4).allMatch(a -> a.appId().equals(AppId.of("high")));
    assertThat(e.resumeCheckpoint(AppId.of("low"), "workers")).contains("hdfs:///ckpt/low/step-900");
    assertThat(of(all, Decision.Wait.class)).anySatisfy(w -> {
      assertThat(w.appId()).isEqualTo(AppId.of("low"));
      assertThat(w.reason()).contains("resumes from hdfs:///ckpt/low/step-900");
    });
    assertThat(e.pendingContainers()).as("the gang of 8 waits again, whole").isEqualTo(8);

    // The re-queued gang of 8 waits whole; a lower priority never preempts a higher one.
    for (long t = 80_000; t < 500_000; t += 10_000) {
      assertThat(of(at(e, t), RequestCheckpoint.class)).isEmpty();
    }
  }

  /**
   * spindle-run's training test as the engine sees it: a low-priority gang holds the whole cluster (its queue's half
   * and the idle sibling's). A higher-priority gang of the same queue that is smaller would leave the queue below its
   * fair share, which rule (S) forbids even inside one queue (architecture.md, "Why preemption cannot loop"); one of
   * the same size keeps the queue where it is and preempts.
   */
  @Test
  void insideABorrowingQueueAHigherPriorityGangPreemptsOnlyWhereTheQueueStaysAtItsFairShare() {
    Engine e = engine(HALVES, ON, 2);
    Resources eight = Resources.of(2048, 2).withGpus(8);
    CycleResult low = e.cycle(List.of(new AppSubmitted(AppId.of("low"), "a", "u", 0),
        new Demand(AppId.of("low"), "workers", eight, 2, PlacementSpec.gang(null, false))));
    assertThat(low.allocations()).hasSize(2);
    at(e, 1_000, new AppSubmitted(AppId.of("smaller"), "a", "u", 5),
        new Demand(AppId.of("smaller"), "workers", Resources.of(1024, 1).withGpus(4), 2,
            PlacementSpec.gang(null, false)));
    assertThat(of(at(e, 61_000), RequestCheckpoint.class)).as("the queue would fall to 8 of its 16 GPUs").isEmpty();

    at(e, 62_000, new Demand(AppId.of("smaller"), "workers", Resources.NONE, 0),
        new AppSubmitted(AppId.of("same"), "a", "u", 5),
        new Demand(AppId.of("same"), "workers", eight, 2, PlacementSpec.gang(null, false)));
    assertThat(of(at(e, 123_000), RequestCheckpoint.class)).singleElement()
        .satisfies(n -> assertThat(n.appId()).isEqualTo(AppId.of("low")));
  }

  @Test
  void theVictimIsTheOneThatLosesLeastWorkSinceItsLastCheckpoint() {
    Engine e = engine(HALVES, ON, 2);
    // Queue b: "old" started at 0; "fresh" at 50 s; "saved" started at 0 but checkpointed at 55 s. Each 1 GPU.
    // "filler" (two 6-GPU containers) and "pad" (1 GPU) fill the rest from 0.
    e.cycle(List.of(new AppSubmitted(AppId.of("old"), "b", "u", 0), new Demand(AppId.of("old"), "r", ONE_GPU, 1),
        new AppSubmitted(AppId.of("saved"), "b", "u", 0), new Demand(AppId.of("saved"), "r", ONE_GPU, 1),
        new AppSubmitted(AppId.of("filler"), "b", "u", 0), new Demand(AppId.of("filler"), "r", ONE_GPU.withGpus(6), 2),
        new AppSubmitted(AppId.of("pad"), "b", "u", 0), new Demand(AppId.of("pad"), "r", ONE_GPU, 1)));
    at(e, 50_000, new AppSubmitted(AppId.of("fresh"), "b", "u", 0), new Demand(AppId.of("fresh"), "r", ONE_GPU, 1));
    at(e, 55_000, new CheckpointReported(AppId.of("saved"), 55_000, "s3://saved/55"));
    at(e, 60_000, new AppSubmitted(AppId.of("owner"), "a", "u", 0), new Demand(AppId.of("owner"), "r", ONE_GPU, 1));
    CycleResult r = at(e, 120_000);
    // Work lost at 120 s, in GPU-seconds: saved 65, fresh 70, old and pad 120, filler 720 each.
    assertThat(of(r, RequestCheckpoint.class)).singleElement()
        .satisfies(n -> assertThat(n.appId()).isEqualTo(AppId.of("saved")));
    // Silent until the deadline: the last reported checkpoint is what it resumes from.
    CycleResult reclaimed = at(e, 240_000);
    assertThat(of(reclaimed, Preempt.class)).singleElement()
        .satisfies(p -> assertThat(p.checkpointLocation()).isEqualTo("s3://saved/55"));
  }

  @Test
  void extensionsAreGrantedUpToTheQueueBoundThenRefusedAndTheDeadlineHolds() {
    QueueTree tree = queues("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
        "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1",
        "root.b.spindle.preemption.max-extensions", "2", "root.b.spindle.preemption.max-extension-seconds", "30");
    Engine e = engine(tree, ON, 2);
    borrowEverything(e);
    at(e, 10_000, new AppSubmitted(AppId.of("owner"), "a", "u", 0), new Demand(AppId.of("owner"), "r", ONE_GPU, 1));
    RequestCheckpoint n = of(at(e, 70_000), RequestCheckpoint.class).get(0);
    assertThat(n.deadlineMillis()).isEqualTo(190_000);
    assertThat(n.extensionsLeft()).isEqualTo(2);

    // Asks for 60 s, gets the queue's 30 s.
    RequestCheckpoint first = of(at(e, 100_000,
        new CheckpointAnswered(AppId.of("borrower"), n.noticeId(), CheckpointAnswer.EXTEND, 60_000, null)),
        RequestCheckpoint.class).get(0);
    assertThat(first.noticeId()).isEqualTo(n.noticeId());
    assertThat(first.deadlineMillis()).isEqualTo(220_000);
    assertThat(first.extensionsLeft()).isEqualTo(1);
    RequestCheckpoint second = of(at(e, 110_000,
        new CheckpointAnswered(AppId.of("borrower"), n.noticeId(), CheckpointAnswer.EXTEND, 10_000, null)),
        RequestCheckpoint.class).get(0);
    assertThat(second.deadlineMillis()).isEqualTo(230_000);
    assertThat(second.extensionsLeft()).isZero();
    RequestCheckpoint refused = of(at(e, 120_000,
        new CheckpointAnswered(AppId.of("borrower"), n.noticeId(), CheckpointAnswer.EXTEND, 10_000, null)),
        RequestCheckpoint.class).get(0);
    assertThat(refused.deadlineMillis()).isEqualTo(230_000);
    assertThat(refused.refusal()).contains("no extensions left");
    assertThat(refused.reason()).as("the reason stays the notice's").isEqualTo(n.reason());
    assertThat(first.refusal()).isNull();
    assertThat(List.of(n.extensionsGranted(), first.extensionsGranted(), second.extensionsGranted()))
        .containsExactly(0, 1, 2);
    assertThat(n.maxExtensions()).isEqualTo(2);
    assertThat(n.maxExtensionMillis()).isEqualTo(30_000);

    assertThat(of(at(e, 229_999), Preempt.class)).isEmpty();
    assertThat(of(at(e, 230_000), Preempt.class)).singleElement()
        .satisfies(p -> assertThat(p.reason()).contains("after 2 extensions"));
    // A late answer changes nothing.
    assertThat(at(e, 231_000, new CheckpointAnswered(AppId.of("borrower"), n.noticeId(), CheckpointAnswer.DONE, 0, "x"))
        .decisions()).isEmpty();
  }

  @Test
  void nothingIsTakenFromAQueueAtOrBelowItsFairShare() {
    Engine e = engine(HALVES, ON, 2);
    // Both queues hold their 8 GPUs; b asks for 8 more. Its fair share is 8 (a asks for what it holds): b is at it.
    e.cycle(List.of(new AppSubmitted(AppId.of("x"), "a", "u", 0), new Demand(AppId.of("x"), "r", ONE_GPU, 8),
        new AppSubmitted(AppId.of("y"), "b", "u", 0), new Demand(AppId.of("y"), "r", ONE_GPU, 8)));
    at(e, 1_000, new AppSubmitted(AppId.of("z"), "b", "u", 9), new Demand(AppId.of("z"), "r", ONE_GPU, 8));
    for (long t = 10_000; t < 1_000_000; t += 10_000) {
      CycleResult r = at(e, t);
      // z outranks y inside b; still, b may not be pushed below its fair share... and it is not: y's GPUs go to z.
      for (RequestCheckpoint n : of(r, RequestCheckpoint.class)) {
        assertThat(n.appId()).as("never queue a, which is at its fair share").isEqualTo(AppId.of("y"));
      }
    }
  }

  @Test
  void aGangLargerThanTheVictimQueueCanSpareIsNeverTakenPartly() {
    Engine e = engine(HALVES, ON, 2);
    // b runs one gang of 16 over both nodes; a wants 4 GPUs. Taking the gang whole would leave b at 0 — below its
    // fair share of 8 — and a part of it is never taken: a waits for the gang to end.
    CycleResult gang = e.cycle(List.of(new AppSubmitted(AppId.of("g"), "b", "u", 0),
        new Demand(AppId.of("g"), "w", ONE_GPU, 16, PlacementSpec.gang(null, false))));
    assertThat(gang.allocations()).hasSize(16);
    at(e, 1_000, new AppSubmitted(AppId.of("owner"), "a", "u", 0), new Demand(AppId.of("owner"), "r", ONE_GPU, 4));
    for (long t = 10_000; t < 600_000; t += 10_000) {
      assertThat(of(at(e, t), RequestCheckpoint.class)).isEmpty();
    }
  }

  @Test
  void aNoticeIsWithdrawnWhenItsRequestStartsOtherwise() {
    Engine e = engine(HALVES, ON, 2);
    List<Long> borrowed = borrowEverything(e);
    at(e, 10_000, new AppSubmitted(AppId.of("owner"), "a", "u", 0), new Demand(AppId.of("owner"), "r", ONE_GPU, 1));
    RequestCheckpoint n = of(at(e, 70_000), RequestCheckpoint.class).get(0);
    long other = borrowed.stream().filter(id -> !n.allocationIds().contains(id)).findFirst().orElseThrow();
    // Another of the borrower's containers ends on its own: the owner gets it, and the notice is withdrawn.
    CycleResult r = at(e, 80_000, new ContainerFinished(other));
    assertThat(r.allocations()).singleElement().satisfies(a -> assertThat(a.appId()).isEqualTo(AppId.of("owner")));
    assertThat(of(r, CancelCheckpoint.class)).singleElement()
        .satisfies(c -> assertThat(c.noticeId()).isEqualTo(n.noticeId()));
    assertThat(of(at(e, 190_000), Preempt.class)).isEmpty();
  }

  @Test
  void offByDefault() {
    Engine e = new Engine(CATALOG, HALVES, RACK, clock);
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8))));
    borrowEverything(e);
    at(e, 1_000, new AppSubmitted(AppId.of("owner"), "a", "u", 0), new Demand(AppId.of("owner"), "r", ONE_GPU, 4));
    for (long t = 10_000; t < 1_000_000; t += 10_000) {
      CycleResult r = at(e, t);
      assertThat(r.decisions()).noneMatch(d -> d instanceof RequestCheckpoint || d instanceof Preempt);
    }
  }

  @Test
  void maxVictimsPerCycleSpreadsNoticesOverCycles() {
    Engine e = engine(HALVES, ON.withMaxVictimsPerCycle(3), 2);
    borrowEverything(e);
    at(e, 10_000, new AppSubmitted(AppId.of("owner"), "a", "u", 0), new Demand(AppId.of("owner"), "r", ONE_GPU, 8));
    Map<Long, Long> perCycle = new java.util.TreeMap<>();
    for (long t = 70_000; t <= 100_000; t += 10_000) {
      perCycle.put(t, (long) of(at(e, t), RequestCheckpoint.class).size());
    }
    assertThat(perCycle.values()).containsExactly(3L, 3L, 2L, 0L);
  }

  @Test
  void theSameEventsGiveTheSameDecisions() {
    List<String> first = script();
    List<String> second = script();
    assertThat(second).isEqualTo(first);
    assertThat(first.stream().filter(s -> s.startsWith("Preempt")).count()).isPositive();
  }

  private List<String> script() {
    clock = new ManualClock(0);
    Engine e = engine(HALVES, ON, 2);
    List<String> out = new ArrayList<>();
    borrowEverything(e);
    at(e, 5_000, new AppSubmitted(AppId.of("o1"), "a", "u", 1), new Demand(AppId.of("o1"), "r", ONE_GPU, 3),
        new AppSubmitted(AppId.of("o2"), "a", "u", 0), new Demand(AppId.of("o2"), "g", ONE_GPU, 2, PlacementSpec.gang(null, false)));
    for (long t = 10_000; t < 400_000; t += 5_000) {
      CycleResult r = at(e, t);
      out.addAll(r.decisions().stream().map(Object::toString).collect(Collectors.toList()));
      List<EngineEvent> kills = new ArrayList<>();
      for (Preempt p : of(r, Preempt.class)) {
        kills.addAll(finished(p.allocationIds()));
      }
      if (!kills.isEmpty()) {
        clock.set(t + 1_000);
        out.addAll(e.cycle(kills).decisions().stream().map(Object::toString).toList());
      }
    }
    return out;
  }

  /**
   * The YARN integration scenario (CheckpointPreemptionTest) on the engine alone: queue a borrows all 16 GPUs with two
   * gangs of 2 x 4 GPUs, a gang of 2 x 4 in queue b (below its guarantee) reserves a node and starves. Taking either
   * gang of a leaves a at its fair share; only the gang on the reserved node can help, so that one is asked, although
   * the other has less work to lose.
   */
  @Test
  void aStarvingGangThatReservedANodeGetsAWholeGangReclaimed() {
    Engine e = engine(HALVES, ON.withStarvationMillis(1_000).withCheckpointGraceMillis(6_000), 2);
    Resources four = Resources.of(2048, 1).withGpus(4);
    at(e, 0, new AppSubmitted(AppId.of("older"), "a", "u", 0), new Demand(AppId.of("older"), "w", four, 2,
        PlacementSpec.gang(null, false)));
    at(e, 1000, new AppSubmitted(AppId.of("young"), "a", "u", 0), new Demand(AppId.of("young"), "w", four, 2,
        PlacementSpec.gang(null, false)));
    at(e, 2000, new AppSubmitted(AppId.of("urgent"), "b", "u", 0), new Demand(AppId.of("urgent"), "w", four, 2,
        PlacementSpec.gang(null, false)));
    List<RequestCheckpoint> notices = new ArrayList<>();
    for (long t = 2100; t < 10_000 && notices.isEmpty(); t += 100) {
      notices.addAll(of(at(e, t), RequestCheckpoint.class));
    }
    assertThat(notices).hasSize(1);
    assertThat(notices.get(0).allocationIds()).hasSize(2);
    assertThat(notices.get(0).forAppId()).isEqualTo(AppId.of("urgent"));
  }
}
