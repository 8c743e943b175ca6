package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Usage history (issue #26 item 1) on a virtual clock: a queue that borrowed all night gets a smaller part of the idle
 * capacity next morning than one that did not, guarantees untouched; history halves with the half-life and is
 * forgotten after the window; a burst of submissions takes no more than one large request would; a new leader
 * decides the same.
 */
class UsageHistoryTest {

  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  /** a and b are guaranteed 4 GPUs each of 16, c 8; nobody is held to a user limit. */
  private static final QueueTree THIRDS = queues("root.queues", "a,b,c", "root.a.capacity", "25",
      "root.b.capacity", "25", "root.c.capacity", "50", "root.a.user-limit-factor", "-1",
      "root.b.user-limit-factor", "-1", "root.c.user-limit-factor", "-1");
  private static final Topology RACK = Topology.builder("rack").location("/r1").build();
  private static final long HOUR = 3_600_000;
  private static final long DAY = 24 * HOUR;

  private final ManualClock clock = new ManualClock(0);

  private Engine engine(UsageSettings usage) {
    Engine e = new Engine(CATALOG, THIRDS, RACK, clock,
        EngineSettings.defaults().withRegistrationSettleMillis(0).withUsage(usage));
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8))));
    return e;
  }

  private static List<EngineEvent> submit(String app, String queue, int containers) {
    return List.of(new AppSubmitted(AppId.of(app), queue, "u-" + queue, 0),
        new Demand(AppId.of(app), "r", ONE_GPU, containers, PlacementSpec.SINGLE));
  }

  /** Queue a borrows 8 GPUs (12 held, 4 guaranteed) from 0 to 12 h, then lets everything go. */
  private void night(Engine e) {
    List<Allocate> held = e.cycle(submit("night", "root.a", 12)).allocations();
    assertThat(held).hasSize(12);
    clock.set(12 * HOUR);
    e.cycle(held.stream().<EngineEvent>map(a -> new ContainerFinished(a.allocationId())).toList());
  }

  /** The next morning a and b each ask for the whole cluster; c stays idle. Returns GPUs started per queue. */
  private static Map<String, Long> morning(CycleResult r) {
    return Map.of("a", count(r, "a-"), "b", count(r, "b-"));
  }

  private static long count(CycleResult r, String prefix) {
    return r.allocations().stream().filter(a -> a.appId().value().startsWith(prefix)).count();
  }

  private static List<EngineEvent> bothAsk() {
    List<EngineEvent> events = new ArrayList<>(submit("a-morning", "root.a", 16));
    events.addAll(submit("b-morning", "root.b", 16));
    return events;
  }

  private static QueueSnapshot queue(Engine e, String path) {
    return e.queueSnapshots().stream().filter(q -> q.path().equals(path)).findFirst().orElseThrow();
  }

  @Test
  void withoutHistoryTheIdleCapacityIsSplitByWeightAsBefore() {
    Engine e = engine(UsageSettings.OFF);
    night(e);
    clock.set(DAY);

    assertThat(morning(e.cycle(bothAsk()))).isEqualTo(Map.of("a", 8L, "b", 8L));
    assertThat(queue(e, "root.a").usageHistory()).isNull();
  }

  @Test
  void yesterdaysHeavyBorrowerYieldsTheIdleCapacityToTheQueueThatDidNotBorrow() {
    Engine e = engine(UsageSettings.ON);
    night(e);
    clock.set(DAY);

    // Guarantees first (4 each), then c's idle 8 by weights times history factors: a has all the history of the two
    // (share of weight 1/2, of history 1): 1 + (1/2 - 1) = 0.5; b: 1 + (1/2 - 0) = 1.5. So 2 and 6 of the idle 8.
    assertThat(morning(e.cycle(bothAsk()))).isEqualTo(Map.of("a", 6L, "b", 10L));
    assertThat(queue(e, "root.a").historyFactor()).isEqualTo(0.5);
    assertThat(queue(e, "root.b").historyFactor()).isEqualTo(1.5);
    assertThat(queue(e, "root.a").fairShare().gpus()).isEqualTo(6.0);
    assertThat(queue(e, "root.a").guarantee().gpus()).as("guarantees stay as they are").isEqualTo(4.0);
  }

  @Test
  void historyWithinTheGuaranteeIsNotHeldAgainstAQueue() {
    Engine e = engine(UsageSettings.ON);
    List<Allocate> held = e.cycle(submit("night", "root.a", 4)).allocations();
    clock.set(12 * HOUR);
    e.cycle(held.stream().<EngineEvent>map(a -> new ContainerFinished(a.allocationId())).toList());
    clock.set(DAY);

    assertThat(morning(e.cycle(bothAsk()))).isEqualTo(Map.of("a", 8L, "b", 8L));
    assertThat(queue(e, "root.a").usageHistory().gpuSeconds()).isZero();
    assertThat(queue(e, "root.a").userHistory().get("u-root.a").gpuSeconds()).as("the user's own usage counts")
        .isGreaterThan(0);
  }

  @Test
  void historyHalvesWithTheHalfLifeAndIsForgottenAfterTheWindow() {
    Engine e = engine(UsageSettings.ON);
    night(e);
    double halfLife = DAY / 1000.0;
    double expected = 8 * halfLife / Math.log(2) * (1 - Math.pow(2, -0.5)); // 8 GPUs borrowed for half a half-life
    assertThat(queue(e, "root.a").usageHistory().gpuSeconds()).isCloseTo(expected, within(1e-6));

    clock.set(12 * HOUR + DAY);
    e.cycle(List.of());
    assertThat(queue(e, "root.a").usageHistory().gpuSeconds()).isCloseTo(expected / 2, within(1e-6));
    assertThat(queue(e, "root.b").usageHistory().gpuSeconds()).isZero();

    clock.set(12 * HOUR + 7 * DAY + 1);
    e.cycle(List.of());
    assertThat(queue(e, "root.a").usageHistory().gpuSeconds()).as("past the window").isZero();
    assertThat(e.durableState(id -> "c" + id).usageHistory()).as("forgotten in the saved state too").isEmpty();
  }

  @Test
  void whyNamesTheUsageHistoryReasonOfAWaitingApplication() {
    Engine e = engine(UsageSettings.ON);
    night(e);
    clock.set(DAY);
    e.cycle(bothAsk());

    String why = io.spindle.core.status.WhyExplainer.explain(AppId.of("a-morning"), e.status(), List.of(), List.of())
        .text();
    assertThat(why).contains("Usage history: root.a's weight for idle capacity is x0.50 because it borrowed more"
        + " than its siblings lately (");
    assertThat(why).contains("GPU-hours above its guarantee, decayed); guarantees are not affected.");
  }

  @Test
  void aBurstOfSubmissionsTakesNoMoreIdleCapacityThanOneLargeRequest() {
    // b borrowed last night; a did not. This morning a sends 40 one-GPU applications in one heartbeat, b one of 16.
    // A strict order by history (Kueue's admission fair sharing before its entry penalty) would hand a all of c's
    // idle 8 before its usage had accrued; here history sets a's share and its current usage, counted as each
    // container starts, fills it: a gets exactly what one request of 40 would get, and b keeps its part.
    Engine burst = engine(UsageSettings.ON);
    List<Allocate> held = burst.cycle(submit("night", "root.b", 12)).allocations();
    clock.set(12 * HOUR);
    burst.cycle(held.stream().<EngineEvent>map(a -> new ContainerFinished(a.allocationId())).toList());
    clock.set(DAY);
    List<EngineEvent> events = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      events.addAll(submit("a-" + i, "root.a", 1));
    }
    events.addAll(submit("b-morning", "root.b", 16));
    CycleResult r = burst.cycle(events);

    assertThat(morning(r)).isEqualTo(Map.of("a", 10L, "b", 6L));
    clock.set(DAY + 60_000);
    assertThat(burst.cycle(List.of()).allocations()).as("nothing more for the burst later").isEmpty();
    assertThat(queue(burst, "root.a").usageHistory().gpuSeconds())
        .as("the burst's borrowing is charged from its own cycle").isCloseTo(6 * 60.0, within(0.1));
  }

  @Test
  void aNewLeaderWeighsIdleCapacityByTheSameHistory() {
    FailoverTwin twin = new FailoverTwin(clock, c -> new Engine(CATALOG, THIRDS, RACK, c,
        EngineSettings.defaults().withRegistrationSettleMillis(0).withUsage(UsageSettings.ON)));
    twin.cycle(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8)));
    List<Allocate> held = twin.cycle(submit("night", "root.a", 12)).allocations();
    clock.set(6 * HOUR);
    RestoreReport report = twin.failover(); // while a still borrows: the new leader counts on at the saved rate
    assertThat(report.dropped()).isEmpty();
    twin.cycle();
    clock.set(12 * HOUR);
    twin.cycle(held.stream().<EngineEvent>map(a -> new ContainerFinished(a.allocationId())).toArray(EngineEvent[]::new));
    clock.set(18 * HOUR);
    twin.failover();
    clock.set(DAY);

    CycleResult r = twin.cycle(bothAsk().toArray(EngineEvent[]::new)); // the twin checks the standby decides the same
    assertThat(morning(r)).isEqualTo(Map.of("a", 6L, "b", 10L));
    assertThat(queue(twin.standby(), "root.a").usageHistory())
        .isEqualTo(queue(twin.reference, "root.a").usageHistory());
    assertThat(twin.standbyState().usageHistory()).isEqualTo(twin.reference.durableState(twin::referenceName)
        .usageHistory());
  }

  @Test
  void badSettingsAreRefusedNamingTheKey() {
    assertThatThrownBy(() -> EngineSettings.fromConfiguration(Map.of(UsageSettings.HALF_LIFE_SECONDS, "-1")))
        .hasMessageContaining(UsageSettings.HALF_LIFE_SECONDS);
    assertThatThrownBy(() -> EngineSettings.fromConfiguration(Map.of(UsageSettings.HALF_LIFE_SECONDS, "a day")))
        .hasMessageContaining(UsageSettings.HALF_LIFE_SECONDS).hasMessageContaining("not a whole number");
    assertThatThrownBy(() -> EngineSettings.fromConfiguration(Map.of(UsageSettings.WINDOW_SECONDS, "0")))
        .hasMessageContaining(UsageSettings.WINDOW_SECONDS);
    assertThatThrownBy(() -> EngineSettings.fromConfiguration(Map.of(UsageSettings.STRENGTH, "101")))
        .hasMessageContaining(UsageSettings.STRENGTH);
    assertThatThrownBy(() -> EngineSettings.fromConfiguration(Map.of(UsageSettings.HALF_LIFE_SECONDS, "864000",
        UsageSettings.WINDOW_SECONDS, "86400"))).hasMessageContaining("longer than");
    assertThat(EngineSettings.fromConfiguration(Map.of()).usage()).isEqualTo(UsageSettings.OFF);
    assertThat(EngineSettings.fromConfiguration(Map.of(UsageSettings.HALF_LIFE_SECONDS, "86400")).usage())
        .isEqualTo(UsageSettings.ON);
  }
}
