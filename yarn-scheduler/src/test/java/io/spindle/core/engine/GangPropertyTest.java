package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.H100;
import static io.spindle.core.Fixtures.node;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.Reject;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * 1,000 random workloads of gangs and single containers on a virtual clock, on a 2-spine x 2-rack x 2-node cluster
 * of 8-GPU nodes. Checked for every workload: no gang ever holds part of its members (all start in one cycle),
 * every admitted gang stays within its required level, every impossible gang is rejected at once, and every
 * possible job starts eventually — gangs and their reservations never block each other for good.
 */
class GangPropertyTest {

  private static final Topology TOPO = Topology.builder("spine", "rack")
      .location("/s1/r1").location("/s1/r2").location("/s2/r3").location("/s2/r4").build();
  private static final String[] LEVELS = {null, "node", "rack", "spine"};
  private static final int WORKLOADS = 1_000;
  private static final long STEP = 10_000;
  private static final long HORIZON = 20_000_000;

  record Job(AppId app, int members, Resources shape, boolean gang, String level, boolean required,
      long runMillis, boolean declared, boolean impossible) {}

  @Test
  void randomWorkloadsNeverPartialNeverStuckAlwaysWithinTheirLevel() {
    int gangsStarted = 0;
    int impossibleRejected = 0;
    for (int seed = 0; seed < WORKLOADS; seed++) {
      int[] counts = runWorkload(new Random(seed), seed);
      gangsStarted += counts[0];
      impossibleRejected += counts[1];
    }
    assertThat(gangsStarted).as("gangs started over all workloads").isGreaterThan(5_000);
    assertThat(impossibleRejected).as("impossible gangs rejected").isGreaterThan(500);
  }

  private int[] runWorkload(Random rnd, int seed) {
    ManualClock clock = new ManualClock(0);
    QueueTree tree = queues("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
        "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1");
    Engine e = new Engine(CATALOG, tree, TOPO, clock, EngineSettings.defaults().withReservations(300_000, 1 + seed % 4));
    List<EngineEvent> nodes = new ArrayList<>();
    Map<NodeId, String> rackOf = new HashMap<>();
    int n = 0;
    for (String rack : TOPO.locations()) {
      for (int k = 0; k < 2; k++) {
        Node node = node("n" + n++, rack, 1 << 20, 128, H100, 8, rnd.nextBoolean() ? 8 : 4, false);
        rackOf.put(node.id(), rack);
        nodes.add(new EngineEvent.NodeAdded(node));
      }
    }
    e.cycle(nodes);

    List<Job> jobs = new ArrayList<>();
    TreeMap<Long, List<Job>> arrivals = new TreeMap<>();
    for (int j = 0; j < 20; j++) {
      Job job = randomJob(rnd, AppId.of("j" + j));
      jobs.add(job);
      arrivals.computeIfAbsent((long) rnd.nextInt(30) * STEP, t -> new ArrayList<>()).add(job);
    }
    Map<AppId, Job> byApp = new HashMap<>();
    jobs.forEach(job -> byApp.put(job.app(), job));
    Map<AppId, Integer> started = new HashMap<>();
    Set<AppId> rejected = new HashSet<>();
    TreeMap<Long, List<Long>> ends = new TreeMap<>();
    int gangs = 0;

    while (clock.nowMillis() < HORIZON) {
      List<EngineEvent> events = new ArrayList<>();
      for (Job job : arrivals.getOrDefault(clock.nowMillis(), List.of())) {
        events.add(new EngineEvent.AppSubmitted(job.app(), rnd.nextBoolean() ? "a" : "b", "u", rnd.nextInt(3)));
        PlacementSpec spec = new PlacementSpec(job.gang(), job.level(), job.required(),
            job.declared() ? job.runMillis() : 0);
        events.add(new EngineEvent.Demand(job.app(), "r", job.shape(), job.members(), spec));
      }
      for (long id : ends.getOrDefault(clock.nowMillis(), List.of())) {
        events.add(new EngineEvent.ContainerFinished(id));
      }
      CycleResult r = e.cycle(events);

      Map<AppId, List<Allocate>> thisCycle = new HashMap<>();
      for (Decision d : r.decisions()) {
        if (d instanceof Allocate a) {
          thisCycle.computeIfAbsent(a.appId(), k -> new ArrayList<>()).add(a);
          Job job = byApp.get(a.appId());
          ends.computeIfAbsent(clock.nowMillis() + job.runMillis(), t -> new ArrayList<>()).add(a.allocationId());
        } else if (d instanceof Reject j) {
          rejected.add(j.appId());
          if (!byApp.get(j.appId()).impossible()) {
            fail("seed %d: possible job %s rejected: %s", seed, j.appId(), j.reason());
          }
        }
      }
      for (Map.Entry<AppId, List<Allocate>> c : thisCycle.entrySet()) {
        Job job = byApp.get(c.getKey());
        if (job.gang()) {
          assertThat(started).as("seed %d: gang %s started twice", seed, job.app()).doesNotContainKey(job.app());
          assertThat(c.getValue()).as("seed %d: gang %s whole in one cycle", seed, job.app()).hasSize(job.members());
          checkLevel(seed, job, c.getValue(), rackOf);
          gangs++;
        }
        started.merge(job.app(), c.getValue().size(), Integer::sum);
      }
      boolean done = arrivals.lastKey() <= clock.nowMillis() && ends.tailMap(clock.nowMillis(), false).isEmpty()
          && jobs.stream().allMatch(job -> rejected.contains(job.app())
              || started.getOrDefault(job.app(), 0) == job.members());
      if (done) {
        break;
      }
      clock.advance(STEP);
    }
    for (Job job : jobs) {
      if (job.impossible()) {
        assertThat(rejected).as("seed %d: impossible %s rejected", seed, job).contains(job.app());
      } else {
        assertThat(started.getOrDefault(job.app(), 0)).as("seed %d: %s started", seed, job).isEqualTo(job.members());
      }
    }
    return new int[] {gangs, (int) jobs.stream().filter(Job::impossible).count()};
  }

  private static void checkLevel(int seed, Job job, List<Allocate> members, Map<NodeId, String> rackOf) {
    if (!job.required()) {
      return;
    }
    Set<String> domains = new HashSet<>();
    for (Allocate a : members) {
      String rack = rackOf.get(a.nodeId());
      domains.add(switch (job.level()) {
        case "node" -> a.nodeId().value();
        case "rack" -> rack;
        case "spine" -> rack.substring(0, rack.indexOf('/', 1));
        default -> "cluster";
      });
    }
    assertThat(domains).as("seed %d: %s within one %s", seed, job.app(), job.level()).hasSize(1);
  }

  /** Node: 8 GPUs; rack: 16; spine: 32; cluster: 64. A gang is impossible when its level cannot ever hold it. */
  private static Job randomJob(Random rnd, AppId app) {
    long run = (1 + rnd.nextInt(30)) * STEP;
    boolean declared = rnd.nextInt(3) == 0;
    if (rnd.nextInt(3) == 0) {
      Resources shape = Resources.of(1024, 1).withGpus(1 + rnd.nextInt(2));
      return new Job(app, 1 + rnd.nextInt(4), shape, false, null, false, run, declared, false);
    }
    int gpus = new int[] {1, 2, 4, 8}[rnd.nextInt(4)];
    String level = LEVELS[rnd.nextInt(LEVELS.length)];
    boolean required = level != null && rnd.nextBoolean();
    int span = !required ? 64 : switch (level) {
      case "node" -> 8;
      case "rack" -> 16;
      default -> 32;
    };
    int maxMembers = span / gpus;
    boolean impossible = rnd.nextInt(8) == 0;
    int members = impossible ? maxMembers + 1 + rnd.nextInt(4) : 1 + rnd.nextInt(maxMembers);
    return new Job(app, members, Resources.of(1024, 1).withGpus(gpus), true, level, required, run, declared,
        impossible);
  }
}
