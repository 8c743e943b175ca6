package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision.Preempt;
import io.spindle.core.engine.Decision.RequestCheckpoint;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The thrash guards on a virtual clock (issue #26): a queue's minimum run time before preemption
 * ({@code spindle.preemption.min-runtime-seconds}) and its preemption delay ({@code spindle.preemption.delay-seconds}),
 * both inherited down the tree. Cluster defaults otherwise: starvation 60 s, grace 120 s.
 */
class PreemptionThrashTest {

  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  private static final Topology RACK = Topology.builder("rack").location("/r1").build();
  private static final PreemptionSettings ON = PreemptionSettings.defaults().withEnabled(true);
  private static final String MIN_RUNTIME = "spindle.preemption.min-runtime-seconds";
  private static final String DELAY = "spindle.preemption.delay-seconds";

  private ManualClock clock = new ManualClock(0);
  /** When each container started, by allocation id. */
  private final Map<Long, Long> startedAt = new HashMap<>();

  private Engine engine(QueueTree tree) {
    Engine e = new Engine(CATALOG, tree, RACK, clock, EngineSettings.defaults().withPreemption(ON));
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8))));
    return e;
  }

  /** Two halves of 16 GPUs, then {@code more} keys. */
  private static QueueTree halves(String... more) {
    List<String> keys = new ArrayList<>(List.of("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity",
        "50", "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1"));
    keys.addAll(List.of(more));
    return queues(keys.toArray(String[]::new));
  }

  private CycleResult at(Engine e, long millis, EngineEvent... events) {
    return at(e, millis, List.of(events));
  }

  private CycleResult at(Engine e, long millis, List<EngineEvent> events) {
    clock.set(millis);
    CycleResult r = e.cycle(events);
    r.allocations().forEach(a -> startedAt.put(a.allocationId(), millis));
    return r;
  }

  private static <T extends Decision> List<T> of(CycleResult r, Class<T> type) {
    return r.decisions().stream().filter(type::isInstance).map(type::cast).toList();
  }

  private static EngineEvent[] app(String id, String queue, int gpus) {
    return new EngineEvent[] {new AppSubmitted(AppId.of(id), queue, "u", 0), new Demand(AppId.of(id), "r", ONE_GPU,
        gpus)};
  }

  /**
   * The borrower's work starts in two waves, 200 s apart, and the owner starves from 270 s: without the guard the
   * second wave (least work lost) would be its victims at once. With 310 s the first wave is taken, at 310 s exactly
   * (not at the next minute, when planning that found nothing would run again anyway), and no victim, over a run of
   * cycles with the victims killed and re-queued, is ever younger than 310 s.
   */
  @Test
  void noVictimIsYoungerThanItsQueuesMinimumRunTime() {
    Engine e = engine(halves("root.b." + MIN_RUNTIME, "310"));
    assertThat(at(e, 0, app("early", "b", 8)).allocations()).hasSize(8);
    assertThat(at(e, 200_000, app("late", "b", 8)).allocations()).hasSize(8);
    at(e, 210_000, app("owner", "a", 8));

    List<RequestCheckpoint> noticed = new ArrayList<>();
    Map<Long, Long> noticedAt = new HashMap<>();
    final List<EngineEvent> next = new ArrayList<>();
    for (long t = 215_000; t <= 1_500_000; t += 5_000) {
      CycleResult r = at(e, t, List.copyOf(next));
      next.clear();
      for (RequestCheckpoint n : of(r, RequestCheckpoint.class)) {
        if (noticedAt.putIfAbsent(n.noticeId(), t) == null) {
          noticed.add(n);
          for (long id : n.allocationIds()) {
            assertThat(t - startedAt.get(id)).as("victim %d's age at %d ms", id, t).isGreaterThanOrEqualTo(310_000);
          }
        }
      }
      for (Preempt p : of(r, Preempt.class)) {
        p.allocationIds().forEach(id -> next.add(new ContainerFinished(id)));
      }
      if (t == 305_000) {
        assertThat(noticed).as("the owner starved at 270 s, but all of b is younger than 310 s").isEmpty();
        assertThat(e.status().app(AppId.of("owner")).orElseThrow().requests().get(0).reason())
            .contains("minimum run time before preemption is protected, the first until 1970-01-01T00:05:10Z");
      }
    }
    assertThat(noticedAt).as("the first wave, at 310 s exactly: planning runs again when it comes of age")
        .containsValue(310_000L);
    assertThat(noticed).hasSize(8).allMatch(n -> n.appId().equals(AppId.of("early")));
  }

  @Test
  void withoutTheGuardTheYoungestWorkGoesFirst() {
    Engine e = engine(halves());
    at(e, 0, app("early", "b", 8));
    at(e, 200_000, app("late", "b", 8));
    at(e, 210_000, app("owner", "a", 8));
    assertThat(of(at(e, 265_000), RequestCheckpoint.class)).isEmpty();
    assertThat(of(at(e, 270_000), RequestCheckpoint.class)).hasSize(8)
        .allMatch(n -> n.appId().equals(AppId.of("late")));
  }

  /** A queue's delay holds preemption off exactly as long as it says, and the status view says until when. */
  @Test
  void aQueuesDelayHoldsPreemptionOffExactlyThatLong() {
    Engine e = engine(halves("root.a." + DELAY, "200"));
    at(e, 0, app("borrower", "b", 16));
    at(e, 10_000, app("owner", "a", 4));
    for (long t = 15_000; t < 210_000; t += 5_000) {
      assertThat(of(at(e, t), RequestCheckpoint.class)).as("at %d ms", t).isEmpty();
    }
    assertThat(e.status().app(AppId.of("owner")).orElseThrow().requests().get(0).reason())
        .contains("nothing is preempted for it before 1970-01-01T00:03:30Z (queue root.a waits 200 s");
    assertThat(of(at(e, 209_999), RequestCheckpoint.class)).isEmpty();
    assertThat(of(at(e, 210_000), RequestCheckpoint.class)).hasSize(4);
    assertThat(e.status().app(AppId.of("owner")).orElseThrow().requests().get(0).reason())
        .doesNotContain("preempted for it before");
  }

  /**
   * Set on a parent, the delay and the minimum run time hold for the queues below it; a child that sets its own
   * overrides them. Root's delay stands in for the cluster's starvation-seconds.
   */
  @Test
  void bothAreInheritedDownTheTreeAndAChildOverridesItsParent() {
    String[] tree = {"root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
        "root.a.queues", "x,y", "root.a.x.capacity", "50", "root.a.y.capacity", "50",
        "root.a.x.user-limit-factor", "-1", "root.a.y.user-limit-factor", "-1", "root.b.user-limit-factor", "-1",
        "root." + DELAY, "120", "root.a.y." + DELAY, "30", "root." + MIN_RUNTIME, "600", "root.b." + MIN_RUNTIME,
        "100"};
    // x inherits root's 120 s; y overrides it with 30 s. b's own 100 s overrides root's 600 s minimum run time.
    for (String leaf : List.of("x", "y")) {
      clock = new ManualClock(0);
      Engine e = engine(queues(tree));
      at(e, 0, app("borrower", "b", 16));
      at(e, 110_000, app("owner", leaf, 4));
      long due = 110_000 + (leaf.equals("x") ? 120_000 : 30_000);
      for (long t = 115_000; t < due; t += 5_000) {
        assertThat(of(at(e, t), RequestCheckpoint.class)).as("%s at %d ms", leaf, t).isEmpty();
      }
      assertThat(of(at(e, due), RequestCheckpoint.class)).as(leaf).hasSize(4);
    }
    // With root's 600 s for b as well, y's owner would wait for b's work to come of age.
    String[] strict = java.util.Arrays.copyOf(tree, tree.length - 2);
    clock = new ManualClock(0);
    startedAt.clear();
    Engine e = engine(queues(strict));
    at(e, 0, app("borrower", "b", 16));
    at(e, 110_000, app("owner", "y", 4));
    for (long t = 115_000; t < 600_000; t += 5_000) {
      assertThat(of(at(e, t), RequestCheckpoint.class)).as("at %d ms", t).isEmpty();
    }
    assertThat(of(at(e, 600_000), RequestCheckpoint.class)).hasSize(4);
  }

  /** Unset, nothing changes: the cluster's starvation-seconds is every queue's delay, and no run is protected. */
  @Test
  void unsetTheClusterDelayHoldsAndNothingIsProtected() {
    Engine e = engine(halves());
    at(e, 0, app("borrower", "b", 16));
    at(e, 10_000, app("owner", "a", 4));
    assertThat(of(at(e, 65_000), RequestCheckpoint.class)).isEmpty();
    List<RequestCheckpoint> n = of(at(e, 70_000), RequestCheckpoint.class);
    assertThat(n).hasSize(4);
    assertThat(n.stream().mapToLong(x -> startedAt.get(x.allocationIds().get(0))).max().orElseThrow()).isZero();
  }

  /** A delay of 0 preempts for a starving request at once, but still only while its queue is below its fair share. */
  @Test
  void aDelayOfZeroPreemptsAtOnceButOnlyForAQueueBelowItsShare() {
    Engine e = engine(halves("root." + DELAY, "0"));
    at(e, 0, app("borrower", "b", 16));
    assertThat(of(at(e, 10_000, app("owner", "a", 4)), RequestCheckpoint.class)).hasSize(4);
    // b, at its fair share once the owner's 4 are reclaimed (12 of 16: it asks 16, the owner 4), takes nothing back.
    final List<EngineEvent> next = new ArrayList<>();
    for (long t = 15_000; t < 600_000; t += 5_000) {
      CycleResult r = at(e, t, List.copyOf(next));
      next.clear();
      for (Preempt p : of(r, Preempt.class)) {
        p.allocationIds().forEach(id -> next.add(new ContainerFinished(id)));
      }
      assertThat(of(r, RequestCheckpoint.class)).as("at %d ms", t)
          .allMatch(x -> !x.forAppId().equals(AppId.of("borrower")));
    }
    assertThat(e.appUsage(AppId.of("owner")).orElseThrow().gpus()).isEqualTo(4.0);
  }
}
