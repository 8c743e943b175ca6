package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.Preempt;
import io.spindle.core.engine.Decision.RequestCheckpoint;
import io.spindle.core.engine.EngineEvent.AppFinished;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.CheckpointAnswered;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.preemption.CheckpointAnswer;
import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.queue.AppOrdering;
import io.spindle.core.queue.OrderingRules;
import io.spindle.core.queue.QueueConfigException;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The ranked orderings on a virtual clock: {@code least-attained} by attained GPU service in levels,
 * {@code shortest-first} by a run time learned from finished work, the starvation bound that lifts a job waiting
 * too long, and preemption inside a queue through the checkpoint handshake with its minimum run time.
 */
class RankedOrderingTest {

  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  private static final long MINUTE = 60_000;
  private static final long HOUR = 60 * MINUTE;
  private ManualClock clock = new ManualClock(0);

  private Engine engine(QueueTree tree, PreemptionSettings preemption) {
    Engine e = new Engine(CATALOG, tree, Topology.singleRack(), clock,
        EngineSettings.defaults().withPreemption(preemption));
    e.cycle(List.of(new NodeAdded(gpuNode("n1", Topology.DEFAULT_RACK, 1))));
    return e;
  }

  private static QueueTree leaf(String... more) {
    List<String> kv = new ArrayList<>(List.of("root.queues", "a", "root.a.capacity", "100",
        "root.a.user-limit-factor", "-1"));
    kv.addAll(List.of(more));
    return queues(kv.toArray(String[]::new));
  }

  private CycleResult at(Engine e, long millis, EngineEvent... events) {
    clock.set(millis);
    return e.cycle(List.of(events));
  }

  private static List<EngineEvent> submit(String app, String request, long declaredMillis, String kind) {
    return List.of(new AppSubmitted(AppId.of(app), "a", "u", 0, kind), new Demand(AppId.of(app), request, ONE_GPU,
        1, PlacementSpec.SINGLE.withMaxRuntimeMillis(declaredMillis)));
  }

  private static <T extends Decision> List<T> of(CycleResult r, Class<T> type) {
    return r.decisions().stream().filter(type::isInstance).map(type::cast).toList();
  }

  /** Frees the one GPU {@code times} times, each a minute apart from {@code from}; who got it, in order. */
  private List<String> servedAfter(Engine e, long held, long from, int times) {
    List<String> served = new ArrayList<>();
    for (int i = 0; i < times; i++) {
      Allocate next = at(e, from + i * MINUTE, new ContainerFinished(held)).allocations().get(0);
      served.add(next.appId().value());
      held = next.allocationId();
    }
    return served;
  }

  @Test
  void leastAttainedServesTheApplicationWithLessGpuServiceBeforeAnOlderOneWithMore() {
    Engine e = engine(leaf("root.spindle.ordering", "least-attained"), PreemptionSettings.defaults());
    // "old" runs two hours on the GPU: 7,200 GPU-s, above a threshold of 3,600; it then asks for another container.
    long held = at(e, 0, submit("old", "r1", 0, null).toArray(EngineEvent[]::new)).allocations().get(0)
        .allocationId();
    at(e, MINUTE, submit("young", "r", 0, null).toArray(EngineEvent[]::new));
    at(e, 2 * MINUTE, submit("younger", "r", 0, null).toArray(EngineEvent[]::new));
    assertThat(at(e, 2 * HOUR, new Demand(AppId.of("old"), "r2", ONE_GPU, 1)).allocations()).isEmpty();
    assertThat(servedAfter(e, held, 2 * HOUR + MINUTE, 3)).as("threshold 18,000 GPU-s: all at level 0, so FIFO")
        .containsExactly("old", "young", "younger");

    clock = new ManualClock(0);
    Engine levelled = engine(leaf("root.spindle.ordering", "least-attained",
        "root.spindle.ordering.attained-thresholds-gpu-seconds", "3600"), PreemptionSettings.defaults());
    held = at(levelled, 0, submit("old", "r1", 0, null).toArray(EngineEvent[]::new)).allocations().get(0)
        .allocationId();
    at(levelled, MINUTE, submit("young", "r", 0, null).toArray(EngineEvent[]::new));
    at(levelled, 2 * MINUTE, submit("younger", "r", 0, null).toArray(EngineEvent[]::new));
    at(levelled, 2 * HOUR, new Demand(AppId.of("old"), "r2", ONE_GPU, 1));
    assertThat(levelled.status().app(AppId.of("old")).orElseThrow().ordering())
        .isEqualTo("its queue orders least-attained: level 1 of 2 (7,200 GPU-seconds attained; levels start at "
            + "[3600]); it has waited 0 s of its queue's bound of 259200 s");
    assertThat(io.spindle.core.status.WhyExplainer.explain(AppId.of("young"), levelled.status(), List.of(),
        List.of()).text()).contains("In order: its queue orders least-attained: level 0 of 2 (0 GPU-seconds");
    assertThat(servedAfter(levelled, held, 2 * HOUR + MINUTE, 3)).as("old is at level 1, the others at 0")
        .containsExactly("young", "younger", "old");
    assertThat(levelled.queueTree().leaf("root.a").orElseThrow().ordering()).isEqualTo(AppOrdering.LEAST_ATTAINED);
  }

  @Test
  void shortestFirstOrdersByTheRunTimeLearnedFromFinishedWorkOfTheSameKind() {
    Engine e = engine(leaf("root.spindle.ordering", "shortest-first"), PreemptionSettings.defaults());
    // Teach: "etl" jobs of user u ran 10 minutes, "train" jobs 5 hours.
    long t = 0;
    for (String[] job : new String[][] {{"etl-1", "etl", "10"}, {"train-1", "train", "300"}, {"etl-2", "etl", "10"}}) {
      at(e, t, submit(job[0], "r", 0, job[1]).toArray(EngineEvent[]::new));
      t += Long.parseLong(job[2]) * MINUTE;
      at(e, t, new AppFinished(AppId.of(job[0])));
    }
    long held = at(e, t, submit("blocker", "r", 0, null).toArray(EngineEvent[]::new)).allocations().get(0)
        .allocationId();
    at(e, t + 1_000, submit("train-2", "r", 0, "train").toArray(EngineEvent[]::new));
    at(e, t + 2_000, submit("other", "r", 0, "never seen").toArray(EngineEvent[]::new));
    at(e, t + 3_000, submit("etl-3", "r", 0, "etl").toArray(EngineEvent[]::new));
    // "other" has no kind of its own: it is estimated by its user's median (10 minutes of three runs: 10, 300, 10).
    assertThat(servedAfter(e, held, t + MINUTE, 3)).containsExactly("other", "etl-3", "train-2");
  }

  @Test
  void theStarvationBoundLiftsAJobThatWaitedTooLongAboveShorterOnes() {
    assertThat(servedWhileShortJobsArrive("3600")).as("long has waited an hour from 60 min 1 s on, and goes first then")
        .containsExactly("short-0", "short-1", "short-2", "short-3", "short-4", "short-5", "long", "short-6");
    clock = new ManualClock(0);
    assertThat(servedWhileShortJobsArrive("0")).as("without a bound, long starves").doesNotContain("long");
  }

  /**
   * A ten-hour job waits behind a first one; a ten-minute job arrives a minute before each of eight ten-minute turns
   * of the GPU, each shorter than "long". Who got the GPU, turn by turn, under {@code max-wait-seconds=maxWait}.
   */
  private List<String> servedWhileShortJobsArrive(String maxWait) {
    Engine e = engine(leaf("root.spindle.ordering", "shortest-first", "root.a.spindle.ordering.max-wait-seconds",
        maxWait), PreemptionSettings.defaults());
    long held = at(e, 0, submit("first", "r", 10 * MINUTE, null).toArray(EngineEvent[]::new)).allocations().get(0)
        .allocationId();
    at(e, 1_000, submit("long", "r", 10 * HOUR, null).toArray(EngineEvent[]::new));
    List<String> served = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      long now = (i + 1) * 10 * MINUTE;
      at(e, now - MINUTE, submit("short-" + i, "r", 10 * MINUTE, null).toArray(EngineEvent[]::new));
      Allocate next = at(e, now, new ContainerFinished(held)).allocations().get(0);
      served.add(next.appId().value());
      held = next.allocationId();
    }
    return served;
  }

  @Test
  void aJobWithLessAttainedServiceTakesTheGpuThroughTheHandshakeOnceTheRunnerHasRunItsMinimum() {
    Engine e = engine(leaf("root.spindle.ordering", "least-attained",
        "root.spindle.ordering.attained-thresholds-gpu-seconds", "60", "root.spindle.ordering.preemption", "true",
        "root.spindle.ordering.preemption.min-runtime-seconds", "600"), PreemptionSettings.defaults()
        .withEnabled(true));
    long held = at(e, 0, submit("runner", "r", 0, null).toArray(EngineEvent[]::new)).allocations().get(0)
        .allocationId();
    at(e, 2 * MINUTE, submit("newcomer", "r", 0, null).toArray(EngineEvent[]::new));
    // The runner is at level 1 after a minute, the newcomer starves from 3 minutes on; the runner has run less than
    // its minimum of 10 minutes until then.
    for (long t = 3 * MINUTE; t < 10 * MINUTE; t += 30_000) {
      assertThat(of(at(e, t), RequestCheckpoint.class)).as("at %d s", t / 1000).isEmpty();
    }
    List<RequestCheckpoint> notices = of(at(e, 10 * MINUTE), RequestCheckpoint.class);
    assertThat(notices).singleElement().satisfies(n -> {
      assertThat(n.appId()).isEqualTo(AppId.of("runner"));
      assertThat(n.allocationIds()).containsExactly(held);
      assertThat(n.forAppId()).isEqualTo(AppId.of("newcomer"));
      assertThat(n.reason()).contains("attained less GPU service (level 0, this application 1)");
    });
    CycleResult done = at(e, 11 * MINUTE, new CheckpointAnswered(AppId.of("runner"), notices.get(0).noticeId(),
        CheckpointAnswer.DONE, 0, "hdfs:///ckpt/runner"));
    assertThat(of(done, Preempt.class)).singleElement().satisfies(p -> assertThat(p.checkpointLocation())
        .isEqualTo("hdfs:///ckpt/runner"));
    CycleResult handed = at(e, 11 * MINUTE + 1_000, new ContainerFinished(held));
    assertThat(handed.allocations()).singleElement().satisfies(a -> assertThat(a.appId())
        .isEqualTo(AppId.of("newcomer")));
    // The runner waits again, at level 1: the newcomer, at level 0 until it has run a minute and then at level 1 too,
    // is never taken back by it (a victim must rank strictly after the need).
    for (long t = 12 * MINUTE; t < 40 * MINUTE; t += MINUTE) {
      assertThat(of(at(e, t), RequestCheckpoint.class)).as("at %d min", t / MINUTE).isEmpty();
    }
  }

  @Test
  void withoutPreemptionOnTheQueueNothingIsTakenForOrder() {
    Engine e = engine(leaf("root.spindle.ordering", "least-attained",
        "root.spindle.ordering.attained-thresholds-gpu-seconds", "60"), PreemptionSettings.defaults().withEnabled(true));
    at(e, 0, submit("runner", "r", 0, null).toArray(EngineEvent[]::new));
    at(e, 2 * MINUTE, submit("newcomer", "r", 0, null).toArray(EngineEvent[]::new));
    for (long t = 3 * MINUTE; t < 60 * MINUTE; t += MINUTE) {
      assertThat(of(at(e, t), RequestCheckpoint.class)).as("at %d min", t / MINUTE).isEmpty();
    }
  }

  @Test
  void attainedServiceAndLearnedRunTimesSurviveAFailoverThroughTheAvroState() {
    QueueTree tree = leaf("root.spindle.ordering", "least-attained",
        "root.spindle.ordering.attained-thresholds-gpu-seconds", "3600");
    Engine leader = engine(tree, PreemptionSettings.defaults());
    long running = at(leader, 0, submit("old", "r1", 0, "train").toArray(EngineEvent[]::new)).allocations().get(0)
        .allocationId();
    at(leader, MINUTE, submit("young", "r", 0, null).toArray(EngineEvent[]::new));
    List<EngineEvent> done = new ArrayList<>(submit("done", "r", 0, "etl"));
    done.add(new AppFinished(AppId.of("done")));
    at(leader, 2 * MINUTE, done.toArray(EngineEvent[]::new));
    long version = leader.durableVersion();
    at(leader, 90 * MINUTE);
    assertThat(leader.durableVersion()).as("time passing is no change to save").isEqualTo(version);
    DurableState saved = io.spindle.ha.SchedulerStateCodec.decode(io.spindle.ha.SchedulerStateCodec.encode(
        leader.durableState(id -> id == running ? "c-old" : null), 1)).state();
    assertThat(saved.attained()).extracting(DurableState.AttainedState::appId)
        .containsExactly(AppId.of("old"), AppId.of("young"));
    assertThat(saved.attained().get(1).submittedMillis()).as("the bound counts from the first leader's submission")
        .isEqualTo(MINUTE);

    // The standby learns the same applications and the running container from YARN, two hours in.
    clock = new ManualClock(2 * HOUR);
    Engine standby = engine(tree, PreemptionSettings.defaults());
    standby.cycle(List.of(new AppSubmitted(AppId.of("old"), "a", "u", 0, "train"),
        new AppSubmitted(AppId.of("young"), "a", "u", 0), new EngineEvent.ContainerRecovered(1_000_000,
            AppId.of("old"), "r1", io.spindle.core.model.NodeId.of("n1"), ONE_GPU)));
    standby.restore(saved, name -> name.equals("c-old") ? 1_000_000L : null);
    standby.cycle(List.of(new Demand(AppId.of("young"), "r", ONE_GPU, 1), new Demand(AppId.of("old"), "r2", ONE_GPU,
        1)));
    // "old" has run two hours (7,200 GPU-s: level 1), counted from the leader's clock; "young" nothing (level 0).
    Allocate next = at(standby, 2 * HOUR + MINUTE, new ContainerFinished(1_000_000)).allocations().get(0);
    assertThat(next.appId()).isEqualTo(AppId.of("young"));
  }

  @Test
  void badOrderingKeysAreRefusedWithTheirKey() {
    assertThatThrownBy(() -> leaf("root.a.spindle.ordering", "random")).isInstanceOf(QueueConfigException.class)
        .hasMessageContaining("yarn.scheduler.capacity.root.a.spindle.ordering")
        .hasMessageContaining("least-attained");
    assertThatThrownBy(() -> leaf("root.spindle.ordering.attained-thresholds-gpu-seconds", "100,50"))
        .isInstanceOf(QueueConfigException.class)
        .hasMessageContaining("yarn.scheduler.capacity.root.spindle.ordering.attained-thresholds-gpu-seconds");
    assertThatThrownBy(() -> leaf("root.a.spindle.ordering.max-wait-seconds", "-1"))
        .isInstanceOf(QueueConfigException.class).hasMessageContaining("max-wait-seconds");
    assertThatThrownBy(() -> leaf("root.a.spindle.ordering.preemption", "yes"))
        .isInstanceOf(QueueConfigException.class).hasMessageContaining("true or false");
    OrderingRules inherited = leaf("root.spindle.ordering.max-wait-seconds", "7200",
        "root.spindle.ordering.attained-thresholds-gpu-seconds", "100, 1000").leaf("root.a").orElseThrow()
        .orderingRules();
    assertThat(inherited.maxWaitMillis()).isEqualTo(2 * HOUR);
    assertThat(inherited.attainedThresholdsGpuSeconds()).containsExactly(100L, 1000L);
    assertThat(inherited.level(99)).isZero();
    assertThat(inherited.level(100)).isEqualTo(1);
    assertThat(inherited.level(5000)).isEqualTo(2);
  }
}
