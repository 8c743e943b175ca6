package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.Preempt;
import io.spindle.core.engine.Decision.RequestCheckpoint;
import io.spindle.core.engine.Decision.Resize;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.CheckpointAnswered;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.preemption.CheckpointAnswer;
import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Elastic gangs on a virtual clock: a gang starts at its minimum, grows into what is idle, gives back what it grew
 * by through resize notices before any whole gang is preempted, never below its minimum, and grows close to itself.
 * Preemption defaults: starvation 60 s, grace 120 s.
 */
class ElasticGangTest {

  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);
  private static final PreemptionSettings ON = PreemptionSettings.defaults().withEnabled(true);
  private static final QueueTree HALVES = queues("root.queues", "a,b", "root.a.capacity", "50",
      "root.b.capacity", "50", "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1");
  private static final AppId ELASTIC = AppId.of("elastic");

  private final ManualClock clock = new ManualClock(0);

  private Engine engine(QueueTree tree, Topology topology, Map<String, String> nodes, int gpus) {
    Engine e = new Engine(CATALOG, tree, topology, clock, EngineSettings.defaults().withPreemption(ON));
    List<EngineEvent> add = new ArrayList<>();
    nodes.forEach((name, location) -> add.add(new NodeAdded(gpuNode(name, location, gpus))));
    e.cycle(add);
    return e;
  }

  private Engine twoNodes(QueueTree tree) {
    return engine(tree, Topology.builder("rack").location("/r1").build(), Map.of("n1", "/r1", "n2", "/r1"), 8);
  }

  private static PlacementSpec elastic(int min, int step) {
    return PlacementSpec.gang(null, false).withElasticity(Elasticity.of(min, step));
  }

  private static <T extends Decision> List<T> of(CycleResult r, Class<T> type) {
    return r.decisions().stream().filter(type::isInstance).map(type::cast).toList();
  }

  private CycleResult at(Engine e, long millis, EngineEvent... events) {
    clock.set(millis);
    return e.cycle(List.of(events));
  }

  private static List<Long> ids(List<Allocate> allocations, AppId app) {
    return allocations.stream().filter(a -> a.appId().equals(app)).map(Allocate::allocationId).toList();
  }

  private static int gpus(Engine e, AppId app) {
    return e.appUsage(app).map(u -> (int) (u.gpuUnits() / io.spindle.core.model.ResourceVector.GPU_UNITS))
        .orElse(0);
  }

  @Test
  void startsAtItsMinimumWhileTheRestIsBusyAndGrowsAsContainersEnd() {
    Engine e = twoNodes(queues("root.queues", "a", "root.a.capacity", "100", "root.a.user-limit-factor", "-1"));
    CycleResult busy = at(e, 0, new AppSubmitted(AppId.of("busy"), "a", "u", 0),
        new Demand(AppId.of("busy"), "r", ONE_GPU, 14));
    List<Long> busyIds = ids(busy.allocations(), AppId.of("busy"));
    assertThat(busyIds).hasSize(14);

    // Size 8, minimum 2, in steps of 2: the two idle GPUs start it at once, not 8 of them some day.
    CycleResult started = at(e, 1_000, new AppSubmitted(ELASTIC, "a", "u", 0), new Demand(ELASTIC, "g", ONE_GPU, 8,
        elastic(2, 2)));
    assertThat(ids(started.allocations(), ELASTIC)).hasSize(2);
    assertThat(of(started, Resize.class)).isEmpty();
    assertThat(e.pendingReasons(ELASTIC)).isEmpty(); // Growth is not a waiting request.

    // One GPU frees: not a whole step, nothing grows. A second: one step of two.
    CycleResult one = at(e, 2_000, new ContainerFinished(busyIds.get(0)));
    assertThat(one.allocations()).isEmpty();
    CycleResult two = at(e, 3_000, new ContainerFinished(busyIds.get(1)));
    assertThat(ids(two.allocations(), ELASTIC)).hasSize(2);
    assertThat(of(two, Resize.class)).singleElement().satisfies(r -> {
      assertThat(r.fromSize()).isEqualTo(2);
      assertThat(r.toSize()).isEqualTo(4);
      assertThat(r.allocationIds()).containsExactlyElementsOf(ids(two.allocations(), ELASTIC));
    });

    // Everything else ends: it grows to the 8 it asks for, and no further.
    List<EngineEvent> rest = new ArrayList<>();
    busyIds.subList(2, 14).forEach(id -> rest.add(new ContainerFinished(id)));
    clock.set(4_000);
    CycleResult all = e.cycle(rest);
    assertThat(ids(all.allocations(), ELASTIC)).hasSize(4);
    assertThat(of(all, Resize.class)).extracting(Resize::toSize).containsExactly(6, 8);
    assertThat(gpus(e, ELASTIC)).isEqualTo(8);
    assertThat(at(e, 5_000).allocations()).isEmpty();
  }

  @Test
  void aReservationHoldsRoomForTheMinimumOnly() {
    Engine e = twoNodes(queues("root.queues", "a", "root.a.capacity", "100", "root.a.user-limit-factor", "-1"));
    CycleResult busy = at(e, 0, new AppSubmitted(AppId.of("busy"), "a", "u", 0),
        new Demand(AppId.of("busy"), "r", ONE_GPU, 16));
    CycleResult asked = at(e, 1_000, new AppSubmitted(ELASTIC, "a", "u", 0),
        new Demand(ELASTIC, "g", ONE_GPU, 16, elastic(4, 4)));
    Decision.Reserve reserve = of(asked, Decision.Reserve.class).get(0);
    assertThat(reserve.nodeIds()).hasSize(1); // Four GPUs fit on one node: one node drains, not both.
    List<EngineEvent> ends = new ArrayList<>();
    ids(busy.allocations(), AppId.of("busy")).stream()
        .filter(id -> busy.allocations().stream().anyMatch(a -> a.allocationId() == id
            && a.nodeId().equals(reserve.nodeIds().get(0))))
        .limit(4).forEach(id -> ends.add(new ContainerFinished(id)));
    clock.set(2_000);
    assertThat(ids(e.cycle(ends).allocations(), ELASTIC)).hasSize(4);
  }

  @Test
  void anUrgentGangGetsItsGpusByShrinkingElasticMembersBeforeAnyWholeGangIsPreempted() {
    Engine e = twoNodes(HALVES);
    AppId rigid = AppId.of("rigid");
    CycleResult r0 = at(e, 0, new AppSubmitted(rigid, "b", "u", 0),
        new Demand(rigid, "g", ONE_GPU, 4, PlacementSpec.gang(null, false)),
        new AppSubmitted(ELASTIC, "b", "u", 0), new Demand(ELASTIC, "g", ONE_GPU, 12, elastic(4, 2)));
    assertThat(ids(r0.allocations(), rigid)).hasSize(4);
    // All 12 fit: it starts whole, the 8 above its minimum of 4 reclaimable first, as if grown at once.
    List<Long> elasticIds = ids(r0.allocations(), ELASTIC);
    assertThat(elasticIds).hasSize(12);
    List<Long> grown = elasticIds.subList(4, 12);
    assertThat(of(r0, Resize.class)).singleElement().satisfies(r -> {
      assertThat(r.fromSize()).isEqualTo(4);
      assertThat(r.toSize()).isEqualTo(12);
      assertThat(r.allocationIds()).containsExactlyElementsOf(grown);
    });

    AppId urgent = AppId.of("urgent");
    at(e, 10_000, new AppSubmitted(urgent, "a", "u", 0),
        new Demand(urgent, "g", ONE_GPU, 4, PlacementSpec.gang(null, false)));
    List<RequestCheckpoint> notices = new ArrayList<>();
    for (long t = 20_000; t <= 80_000 && notices.isEmpty(); t += 10_000) {
      notices.addAll(of(at(e, t), RequestCheckpoint.class));
    }
    // Two grown groups of two, named by resize notices; the rigid gang and the elastic gang's core untouched.
    assertThat(notices).hasSize(2).allSatisfy(n -> {
      assertThat(n.appId()).isEqualTo(ELASTIC);
      assertThat(n.isResize()).isTrue();
      assertThat(n.targetSize()).isEqualTo(8);
      assertThat(grown).containsAll(n.allocationIds());
      assertThat(n.allocationIds()).hasSize(2);
    });
    long now = clock.nowMillis();
    List<Preempt> preempts = new ArrayList<>();
    for (RequestCheckpoint n : notices) {
      preempts.addAll(of(at(e, now, new CheckpointAnswered(ELASTIC, n.noticeId(), CheckpointAnswer.DONE, 0,
          "ckpt://elastic/1")), Preempt.class));
    }
    assertThat(preempts).hasSize(2).allSatisfy(p -> assertThat(p.targetSize()).isEqualTo(8));
    List<EngineEvent> killed = new ArrayList<>();
    preempts.forEach(p -> p.allocationIds().forEach(id -> killed.add(new ContainerFinished(id))));
    clock.set(now + 1_000);
    CycleResult placed = e.cycle(killed);
    assertThat(ids(placed.allocations(), urgent)).hasSize(4);
    assertThat(of(placed, Resize.class)).extracting(Resize::toSize).containsExactly(10, 8);
    assertThat(gpus(e, ELASTIC)).isEqualTo(8);
    assertThat(gpus(e, rigid)).isEqualTo(4);
    // It asks for the four again as growth; nothing is idle, so nothing grows back into what was just given.
    for (long t = now + 10_000; t < now + 600_000; t += 10_000) {
      CycleResult r = at(e, t);
      assertThat(r.allocations()).isEmpty();
      assertThat(of(r, RequestCheckpoint.class)).isEmpty();
    }
  }

  @Test
  void neverShrinksBelowItsMinimumForFairShare() {
    Engine e = twoNodes(HALVES);
    // Queue b holds everything: an elastic gang of 12 with minimum 6, and 4 single containers.
    CycleResult r0 = at(e, 0, new AppSubmitted(ELASTIC, "b", "u", 0),
        new Demand(ELASTIC, "g", ONE_GPU, 12, elastic(6, 2)),
        new AppSubmitted(AppId.of("singles"), "b", "u", 0), new Demand(AppId.of("singles"), "r", ONE_GPU, 4));
    assertThat(ids(r0.allocations(), ELASTIC)).hasSize(12);
    // Queue a asks its whole guarantee of 8: the grown 6 go by resize notices, the rest from the singles, and the
    // minimum of 6 is never cut into.
    at(e, 10_000, new AppSubmitted(AppId.of("owner"), "a", "u", 0), new Demand(AppId.of("owner"), "r", ONE_GPU, 8));
    Map<Long, RequestCheckpoint> live = new LinkedHashMap<>();
    Set<Long> resizeIds = new HashSet<>();
    for (long t = 20_000; t <= 1_200_000; t += 10_000) {
      CycleResult r = at(e, t);
      List<EngineEvent> next = new ArrayList<>();
      for (RequestCheckpoint n : of(r, RequestCheckpoint.class)) {
        if (n.appId().equals(ELASTIC)) {
          assertThat(n.isResize()).as("the elastic gang is only ever resized").isTrue();
          assertThat(n.targetSize()).isGreaterThanOrEqualTo(6);
          resizeIds.addAll(n.allocationIds());
        }
        live.put(n.noticeId(), n);
        next.add(new CheckpointAnswered(n.appId(), n.noticeId(), CheckpointAnswer.DONE, 0, null));
      }
      for (Preempt p : of(r, Preempt.class)) {
        p.allocationIds().forEach(id -> next.add(new ContainerFinished(id)));
      }
      if (!next.isEmpty()) {
        clock.set(t + 5_000);
        CycleResult answered = e.cycle(next);
        for (Preempt p : of(answered, Preempt.class)) {
          clock.set(t + 6_000);
          e.cycle(p.allocationIds().stream().map(id -> (EngineEvent) new ContainerFinished(id)).toList());
        }
      }
      assertThat(gpus(e, ELASTIC)).as("at %d ms", t).isGreaterThanOrEqualTo(6);
    }
    assertThat(resizeIds).hasSize(6);
    assertThat(gpus(e, ELASTIC)).isEqualTo(6);
    assertThat(gpus(e, AppId.of("owner"))).isEqualTo(8);
  }

  @Test
  void growsOnTheGangsRackBeforeABetterFitElsewhere() {
    Topology racks = Topology.builder("rack").location("/r1").location("/r2").build();
    Map<String, String> nodes = new LinkedHashMap<>();
    nodes.put("a1", "/r1");
    nodes.put("a2", "/r1");
    nodes.put("b1", "/r2");
    nodes.put("b2", "/r2");
    Engine e = engine(queues("root.queues", "a", "root.a.capacity", "100", "root.a.user-limit-factor", "-1"), racks,
        nodes, 4);
    // Singles fill three nodes; the elastic gang's minimum of 4 takes the fourth.
    CycleResult busy = at(e, 0, new AppSubmitted(AppId.of("busy"), "a", "u", 0),
        new Demand(AppId.of("busy"), "r", ONE_GPU, 12));
    CycleResult started = at(e, 1_000, new AppSubmitted(ELASTIC, "a", "u", 0),
        new Demand(ELASTIC, "g", ONE_GPU, 4, elastic(4, 2)));
    NodeId home = started.allocations().get(0).nodeId();
    assertThat(started.allocations()).hasSize(4).allSatisfy(a -> assertThat(a.nodeId()).isEqualTo(home));
    String homeRack = nodes.get(home.value().split(":")[0]);
    String sibling = nodes.entrySet().stream().filter(n -> n.getValue().equals(homeRack)
        && !NodeId.of(n.getKey()).equals(home) && !home.value().startsWith(n.getKey())).findFirst().orElseThrow()
        .getKey();
    String away = nodes.keySet().stream().filter(n -> !nodes.get(n).equals(homeRack)).findFirst().orElseThrow();
    // Three GPUs free on the gang's rack, two on the other: the two are the better fit, the three are closer.
    List<EngineEvent> ends = new ArrayList<>();
    addEnds(busy, sibling, 3, ends);
    addEnds(busy, away, 2, ends);
    clock.set(2_000);
    e.cycle(ends);
    CycleResult grew = at(e, 3_000, new Demand(ELASTIC, "g", ONE_GPU, 2, elastic(4, 2)));
    assertThat(grew.allocations()).hasSize(2)
        .allSatisfy(a -> assertThat(a.nodeId().value()).startsWith(sibling));
  }

  @Test
  void aGangWaitingInTheSameQueueAtTheSamePriorityGetsTheGrownMembersBack() {
    Engine e = twoNodes(queues("root.queues", "a", "root.a.capacity", "100", "root.a.user-limit-factor", "-1"));
    CycleResult r0 = at(e, 0, new AppSubmitted(ELASTIC, "a", "u", 0),
        new Demand(ELASTIC, "g", ONE_GPU, 16, elastic(4, 4)));
    assertThat(ids(r0.allocations(), ELASTIC)).hasSize(16);
    AppId peer = AppId.of("peer");
    at(e, 1_000, new AppSubmitted(peer, "a", "u", 0), new Demand(peer, "g", ONE_GPU, 8,
        PlacementSpec.gang(null, false)));
    List<RequestCheckpoint> notices = new ArrayList<>();
    for (long t = 10_000; t <= 70_000 && notices.isEmpty(); t += 10_000) {
      notices.addAll(of(at(e, t), RequestCheckpoint.class));
    }
    // Lent idle capacity comes back for an equal: two grown groups of 4, the minimum of 4 untouched.
    assertThat(notices).hasSize(2).allSatisfy(n -> {
      assertThat(n.appId()).isEqualTo(ELASTIC);
      assertThat(n.targetSize()).isEqualTo(8);
      // Said as it is: the peer does not outrank it (same priority); it takes back what was lent.
      assertThat(n.reason()).startsWith("it grew into capacity that was idle; request g of application peer")
          .doesNotContain("outranks");
    });
  }

  private static void addEnds(CycleResult busy, String node, int count, List<EngineEvent> out) {
    busy.allocations().stream().filter(a -> a.nodeId().value().startsWith(node)).limit(count)
        .forEach(a -> out.add(new ContainerFinished(a.allocationId())));
  }
}
