package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.Preempt;
import io.spindle.core.engine.Decision.RequestCheckpoint;
import io.spindle.core.engine.EngineEvent.AppFinished;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.CheckpointAnswered;
import io.spindle.core.engine.EngineEvent.CheckpointReported;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.preemption.CheckpointAnswer;
import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * 200 random workloads on four 8-GPU nodes in two racks, with gangs (some confined to a rack), single containers,
 * CPU-only work, application masters, declared run times, reservations that time out, and (in most workloads)
 * preemption with applications that answer DONE, ask for extensions or stay silent and report checkpoints. The
 * scheduler fails over one to three times at random moments; each new leader is built from scratch from what YARN
 * recovers plus the durable state the previous one exported ({@link FailoverTwin}).
 *
 * <p>Checked every cycle: the leader in charge decides what a leader that never failed decides (allocation ids
 * renamed), and exports the same durable state; and {@link Engine#durableVersion} moves whenever the durable state
 * changed, so a driver that saves only then loses nothing.
 */
class FailoverPropertyTest {

  private static final int WORKLOADS = 200;
  private static final long STEP = 5_000;
  private static final long ARRIVALS_UNTIL = 300_000;
  private static final long FAILOVERS_UNTIL = 900_000;
  private static final long HORIZON = 6_000_000;
  private static final Topology RACKS = Topology.builder("rack").location("/r1").location("/r2").build();
  private static final QueueTree TREE = queues("root.queues", "a,b,c", "root.a.capacity", "50",
      "root.b.capacity", "25", "root.c.capacity", "25", "root.a.user-limit-factor", "-1",
      "root.b.user-limit-factor", "-1", "root.c.user-limit-factor", "-1",
      // The ranked orders keep what applications attained and learned run times across failovers.
      "root.b.spindle.ordering", "least-attained", "root.b.spindle.ordering.preemption", "true",
      "root.b.spindle.ordering.attained-thresholds-gpu-seconds", "120",
      "root.b.spindle.ordering.preemption.min-runtime-seconds", "30", "root.c.spindle.ordering", "shortest-first");
  private static final Resources AM = Resources.of(1024, 1);

  enum Behaviour { DONE_SOON, DONE_LATE, EXTEND_THEN_DONE, SILENT }

  record Job(AppId app, String queue, int priority, int members, Resources shape, PlacementSpec spec,
      long runMillis, long arrival, Behaviour behaviour, boolean reportsCheckpoints) {}

  @Test
  void aNewLeaderDecidesAsTheOldOneWouldHaveAfterFailoversAtRandomMoments() {
    int[] totals = new int[5];
    for (int seed = 0; seed < WORKLOADS; seed++) {
      int[] c = new Workload(seed).run();
      for (int i = 0; i < totals.length; i++) {
        totals[i] += c[i];
      }
    }
    // The workloads must exercise what they check.
    assertThat(totals[0]).as("failovers").isGreaterThan(WORKLOADS);
    assertThat(totals[1]).as("failovers with checkpoint notices in flight").isGreaterThan(25);
    assertThat(totals[2]).as("failovers with reservations held").isGreaterThan(25);
    assertThat(totals[3]).as("reclaims after a failover").isGreaterThan(80);
    assertThat(totals[4]).as("allocations after a failover").isGreaterThan(1_000);
  }

  private static final class Workload {
    final int seed;
    final Random rnd;
    final ManualClock clock = new ManualClock(0);
    final FailoverTwin twin;
    final Map<AppId, Job> jobs = new HashMap<>();
    final TreeMap<Long, List<EngineEvent>> inbox = new TreeMap<>();
    final Map<AppId, Integer> completed = new HashMap<>();
    final Set<AppId> done = new HashSet<>();
    final Set<Long> answered = new HashSet<>();
    final TreeSet<Long> failoverAt = new TreeSet<>();
    final int[] counts = new int[5];

    Workload(int seed) {
      this.seed = seed;
      this.rnd = new Random(seed);
      boolean preemption = rnd.nextInt(5) > 0;
      PreemptionSettings p = PreemptionSettings.defaults().withEnabled(preemption).withStarvationMillis(30_000)
          .withCheckpointGraceMillis(60_000).withExtensions(1, 30_000).withMaxVictimsPerCycle(1 + rnd.nextInt(8));
      EngineSettings settings = EngineSettings.defaults()
          .withReservations(STEP * (10 + rnd.nextInt(60)), 1 + rnd.nextInt(2)).withPreemption(p);
      twin = new FailoverTwin(clock, c -> new Engine(CATALOG, TREE, RACKS, c, settings));
    }

    int[] run() {
      List<EngineEvent> nodes = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        nodes.add(new NodeAdded(gpuNode("n" + i, i < 2 ? "/r1" : "/r2", 8)));
      }
      twin.cycle(nodes);
      int jobCount = 6 + rnd.nextInt(8);
      for (int j = 0; j < jobCount; j++) {
        Job job = randomJob(AppId.of("j" + j));
        jobs.put(job.app(), job);
        at(job.arrival(), new AppSubmitted(job.app(), job.queue(), "u" + rnd.nextInt(2), job.priority(),
            "kind" + job.priority()));
        at(job.arrival(), new Demand(job.app(), "am", AM, 1, PlacementSpec.APPLICATION_MASTER));
        at(job.arrival(), new Demand(job.app(), "r", job.shape(), job.members(), job.spec()));
      }
      int failovers = 1 + rnd.nextInt(3);
      while (failoverAt.size() < failovers) {
        failoverAt.add(STEP * (1 + rnd.nextInt((int) (FAILOVERS_UNTIL / STEP))));
      }

      DurableState[] saved = new DurableState[2];
      long[] versions = new long[2];
      while (clock.nowMillis() <= HORIZON && (done.size() < jobs.size() || !inbox.isEmpty())) {
        long now = clock.nowMillis();
        List<EngineEvent> events = deliverable(inbox.containsKey(now) ? inbox.remove(now) : List.of());
        CycleResult r;
        try {
          r = twin.cycle(events);
        } catch (AssertionError e) {
          throw new AssertionError("seed " + seed + ", after " + twin.failovers() + " failovers: " + e.getMessage(),
              e);
        }
        checkVersion(twin.reference, twin.reference.durableState(twin::referenceName), saved, versions, 0);
        if (twin.standby() != null) {
          checkVersion(twin.standby(), twin.standbyState(), saved, versions, 1);
        }
        if (twin.failovers() > 0) {
          counts[3] += r.decisions().stream().filter(Preempt.class::isInstance).count();
          counts[4] += r.allocations().size();
        }
        react(r, now);
        if (failoverAt.contains(now)) {
          DurableState before = twin.reference.durableState(twin::referenceName);
          counts[0]++;
          counts[1] += before.reclaims().isEmpty() ? 0 : 1;
          counts[2] += before.reservations().isEmpty() ? 0 : 1;
          RestoreReport report = twin.failover();
          assertThat(report.dropped()).as("seed %d: nothing is lost when everything comes back", seed).isEmpty();
          saved[1] = null;
        }
        clock.advance(STEP);
      }
      if (done.size() < jobs.size()) {
        fail("seed %d: jobs never finished: %s", seed, jobs.keySet().stream().filter(j -> !done.contains(j)).toList());
      }
      return counts;
    }

    /** The durable state changed since the last cycle only if the version moved. */
    private void checkVersion(Engine e, DurableState now, DurableState[] saved, long[] versions, int i) {
      long v = e.durableVersion();
      if (saved[i] != null && !now.equals(saved[i])) {
        assertThat(v).as("seed %d at %d ms: the state changed, the version must move", seed, clock.nowMillis())
            .isNotEqualTo(versions[i]);
      }
      saved[i] = now;
      versions[i] = v;
    }

    /** Drops what no longer applies: the end of a container already gone, a report of a finished application. */
    private List<EngineEvent> deliverable(List<EngineEvent> events) {
      List<EngineEvent> out = new ArrayList<>();
      for (EngineEvent e : events) {
        if (e instanceof ContainerFinished f) {
          Allocate a = twin.running.get(f.allocationId());
          if (a == null) {
            continue;
          }
          if (!a.requestKey().equals("am") && !killed.contains(f.allocationId())) {
            int c = completed.merge(a.appId(), 1, Integer::sum);
            if (c >= jobs.get(a.appId()).members() && done.add(a.appId())) {
              at(clock.nowMillis() + STEP, new AppFinished(a.appId()));
            }
          }
        } else if ((e instanceof CheckpointReported rep && done.contains(rep.appId()))
            || (e instanceof CheckpointAnswered ans && done.contains(ans.appId()))) {
          continue;
        }
        out.add(e);
      }
      return out;
    }

    final Set<Long> killed = new HashSet<>();

    private void react(CycleResult r, long now) {
      for (Allocate a : r.allocations()) {
        Job job = jobs.get(a.appId());
        if (!a.requestKey().equals("am")) {
          at(now + job.runMillis(), new ContainerFinished(a.allocationId()));
        }
      }
      for (Decision d : r.decisions()) {
        if (d instanceof RequestCheckpoint n && answered.add(n.noticeId())) {
          answer(jobs.get(n.appId()), n, now);
        } else if (d instanceof Preempt p) {
          long kill = now + STEP * rnd.nextInt(3);
          for (long id : p.allocationIds()) {
            killed.add(id);
            at(kill, new ContainerFinished(id));
          }
        } else if (d instanceof Decision.Reject j) {
          fail("seed %d: %s rejected: %s", seed, j.appId(), j.reason());
        }
      }
    }

    private void answer(Job victim, RequestCheckpoint n, long now) {
      String where = "ckpt://" + victim.app() + "/" + now;
      switch (victim.behaviour()) {
        case DONE_SOON -> at(now + STEP * rnd.nextInt(4),
            new CheckpointAnswered(victim.app(), n.noticeId(), CheckpointAnswer.DONE, 0, where));
        case DONE_LATE -> at(now + 60_000 + STEP * rnd.nextInt(6),
            new CheckpointAnswered(victim.app(), n.noticeId(), CheckpointAnswer.DONE, 0, where));
        case EXTEND_THEN_DONE -> {
          at(now + STEP, new CheckpointAnswered(victim.app(), n.noticeId(), CheckpointAnswer.EXTEND,
              STEP * (1 + rnd.nextInt(12)), null));
          at(now + STEP * (2 + rnd.nextInt(20)),
              new CheckpointAnswered(victim.app(), n.noticeId(), CheckpointAnswer.DONE, 0, where));
        }
        case SILENT -> { }
      }
      if (victim.reportsCheckpoints()) {
        at(now + STEP, new CheckpointReported(victim.app(), now, where));
      }
    }

    private void at(long t, EngineEvent e) {
      inbox.computeIfAbsent(t, k -> new ArrayList<>()).add(e);
    }

    private Job randomJob(AppId app) {
      String queue = List.of("a", "b", "c").get(rnd.nextInt(3));
      int priority = rnd.nextInt(3);
      long arrival = STEP * rnd.nextInt((int) (ARRIVALS_UNTIL / STEP) + 1);
      long run = STEP * (12 + rnd.nextInt(120));
      Behaviour behaviour = Behaviour.values()[rnd.nextInt(Behaviour.values().length)];
      boolean reports = rnd.nextInt(4) == 0;
      boolean declares = rnd.nextInt(3) == 0;
      int kind = rnd.nextInt(20);
      if (kind < 3) {
        PlacementSpec spec = declares ? PlacementSpec.SINGLE.withMaxRuntimeMillis(run) : PlacementSpec.SINGLE;
        return new Job(app, queue, priority, 1 + rnd.nextInt(4), Resources.of(96_000, 4), spec, run, arrival,
            behaviour, reports);
      }
      int gpus = new int[] {1, 1, 2, 4}[rnd.nextInt(4)];
      Resources shape = Resources.of(8_192L * gpus, 2 * gpus).withGpus(gpus);
      if (kind < 10) {
        PlacementSpec spec = declares ? PlacementSpec.SINGLE.withMaxRuntimeMillis(run) : PlacementSpec.SINGLE;
        return new Job(app, queue, priority, 1 + rnd.nextInt(6), shape, spec, run, arrival, behaviour, reports);
      }
      boolean rack = rnd.nextBoolean();
      int members = 1 + rnd.nextInt((rack ? 15 : 30) / gpus);
      PlacementSpec spec = rack ? PlacementSpec.gang("rack", true) : PlacementSpec.gang(null, false);
      return new Job(app, queue, priority, members, shape, spec, run, arrival, behaviour, reports);
    }
  }
}
