package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.H100;
import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.spindle.core.Fixtures;
import io.spindle.core.engine.EngineEvent.AppFinished;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.fuzz.FuzzInput;
import io.spindle.fuzz.HostileInput;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Hostile resource requests reaching the engine: any {@link Demand} an application can express — negative or
 * enormous counts, shapes no node holds, unknown GPU models, MIG profiles and topology levels, gangs larger than the
 * cluster — is either taken (and then placed, reserved or left waiting) or answered with a {@link Decision.Reject}
 * and its reason. {@link Engine#cycle} never throws for it and never runs away (a container of nothing, asked for
 * two billion times, must not be placed two billion times).
 */
class EngineDemandFuzzTest {

  private static final String TARGET = "resource requests (engine)";
  private static final Topology RACKS = Topology.builder("rack").location("/r1").location("/r2").build();
  private static final List<String> MODELS = List.of("H100-80GB", "A100-40GB", "h100-80gb", "Z9000", " ");
  private static final List<String> PROFILES = List.of("1g.10gb", "3g.40gb", "7g.80gb", "1g.5gb", "9g.99gb", "");
  private static final List<String> LEVELS = List.of("rack", "node", "spine", "", "RACK");

  @Test
  void randomDemandsArePlacedOrRejectedWithAReason() {
    HostileInput.Tally tally = HostileInput.run(TARGET, EngineDemandFuzzTest::check);
    assertThat(tally.rejected()).as("bad requests tried").isPositive();
    assertThat(tally.accepted()).as("good requests tried").isPositive();
  }

  /** Found by this test: an empty container fits anywhere, so the engine placed it until the cycle never ended. */
  @Test
  void anEmptyContainerIsRejectedNotPlacedWithoutEnd() {
    Engine engine = engineWithCluster(new ManualClock(1_000), "a");
    CycleResult r = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(20),
        () -> engine.cycle(List.of(new Demand(AppId.of("app"), "nothing", Resources.of(0, 0), Integer.MAX_VALUE))));
    assertThat(r.decisions()).singleElement().isInstanceOfSatisfying(Decision.Reject.class,
        reject -> assertThat(reject.reason()).contains("memory, vcores or GPUs"));
  }

  /** Drivers withdraw a request with an empty shape and a count of 0: a withdrawal, never a rejection. */
  @Test
  void aWithdrawalWithAnEmptyShapeIsNoRejection() {
    Engine engine = engineWithCluster(new ManualClock(1_000), "a");
    engine.cycle(List.of(new Demand(AppId.of("app"), "k", Resources.of(1024, 1), 1_000)));
    CycleResult r = engine.cycle(List.of(new Demand(AppId.of("app"), "k", Resources.NONE, 0)));
    assertThat(r.decisions()).noneMatch(Decision.Reject.class::isInstance);
    assertThat(engine.pendingContainers()).isZero();
  }

  @FuzzTest(maxExecutions = 10_000)
  void coverageGuided(byte[] bytes) {
    HostileInput.once(TARGET, EngineDemandFuzzTest::check, bytes);
  }

  @AfterAll
  static void report() {
    HostileInput.report(TARGET);
  }

  static String check(FuzzInput in) {
    ManualClock clock = new ManualClock(1_000);
    Engine engine = engineWithCluster(clock, in.pick("a", "b", "root.a"));

    List<Demand> demands = new ArrayList<>();
    String constructionRejected = null;
    int n = in.intIn(1, 4);
    for (int i = 0; i < n; i++) {
      try {
        demands.add(new Demand(AppId.of("app"), "k" + i, shape(in), count(in), spec(in)));
      } catch (IllegalArgumentException e) {
        // Resources and PlacementSpec refuse what no driver may build; the YARN adapter hits the same checks.
        constructionRejected = HostileInput.rejected(e, IllegalArgumentException.class);
      }
    }
    if (demands.isEmpty()) {
      return constructionRejected;
    }
    CycleResult first = engine.cycle(demands);
    Map<String, String> rejected = new HashMap<>();
    for (Decision d : first.decisions()) {
      if (d instanceof Decision.Reject r) {
        HostileInput.requireReadable(r.reason(), null);
        rejected.put(r.requestKey(), r.reason());
      }
    }
    long allocated = first.decisions().stream().filter(Decision.Allocate.class::isInstance).count();
    // Every container holds at least 1 MB, a vcore or a GPU: more than the cluster's 10,240 MB + 40 vcores + 16 GPUs
    // (the MIG GPUs counted among them) means the engine placed containers that hold nothing.
    assertThat(allocated).as("containers allocated in one cycle").isLessThanOrEqualTo(10_240 + 40 + 16);

    clock.advance(60_000);
    engine.cycle(List.of());
    engine.cycle(List.of(new AppFinished(AppId.of("app"))));
    assertThat(engine.status().nodes()).isNotEmpty();
    return rejected.isEmpty() ? HostileInput.ACCEPTED : "rejected: Decision.Reject";
  }

  /** Two GPU nodes (one of MIG GPUs) and a CPU node on two racks; queue b capped at 60%; "app" submitted. */
  private static Engine engineWithCluster(ManualClock clock, String queue) {
    Engine engine = new Engine(CATALOG, Fixtures.queues("root.queues", "a,b", "root.a.capacity", "50",
        "root.b.capacity", "50", "root.b.maximum-capacity", "60"), RACKS, clock);
    // Small memory, so that a thousand-fold ask for containers of a few MB fills the cluster in a few thousand steps.
    engine.cycle(List.of(new NodeAdded(Fixtures.node("h1", "/r1", 4_096, 16, H100, 8, 8, false)),
        new NodeAdded(Fixtures.node("h2", "/r2", 4_096, 16, H100, 8, 4, true)),
        new NodeAdded(Fixtures.cpuNode("c1", "/r2", 2_048, 8)),
        new AppSubmitted(AppId.of("app"), queue, "alice", 0)));
    clock.advance(EngineSettings.DEFAULT_REGISTRATION_SETTLE_MILLIS); // Impossible asks are rejected, not parked.
    return engine;
  }

  private static Resources shape(FuzzInput in) {
    long memory = in.bool() ? in.longIn(0, 5_000) : in.interestingLong();
    int vcores = in.bool() ? in.intIn(0, 20) : in.interestingInt();
    Resources base = Resources.of(memory, vcores);
    return switch (in.below(4)) {
      case 0 -> base;
      case 1 -> base.withGpus(in.bool() ? in.intIn(0, 20) : in.interestingInt());
      case 2 -> base.withMig(in.pick(PROFILES), in.bool() ? in.intIn(0, 8) : in.interestingInt());
      default -> base.withGpus(in.intIn(0, 9)).withGpuModel(in.pick(MODELS));
    };
  }

  private static int count(FuzzInput in) {
    return in.bool() ? in.intIn(-1, 20) : in.pick(Integer.MAX_VALUE, Integer.MIN_VALUE, 1 << 20, in.interestingInt());
  }

  private static PlacementSpec spec(FuzzInput in) {
    return switch (in.below(3)) {
      case 0 -> PlacementSpec.SINGLE;
      case 1 -> new PlacementSpec(true, in.bool() ? null : in.pick(LEVELS), in.bool(), in.bool() ? 0 : in.interestingLong());
      default -> new PlacementSpec(in.bool(), in.pick(LEVELS), false, in.longIn(0, 1 << 30));
    };
  }
}
