package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.CancelCheckpoint;
import io.spindle.core.engine.Decision.Preempt;
import io.spindle.core.engine.Decision.RequestCheckpoint;
import io.spindle.core.engine.Decision.Resize;
import io.spindle.core.model.AppId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.preemption.CheckpointAnswer;
import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * 1,000 random workloads of elastic gangs, rigid gangs and single containers with preemption on, on four 8-GPU nodes
 * in three queues; a driver plays the applications (answers notices DONE soon, DONE late or not at all; kills what
 * is preempted a little later; ends each job whole). Half the workloads are stable (jobs arrive in the first 300 s and
 * run for ever), half have jobs that end.
 *
 * <p>Checked every cycle:
 * <ul>
 *   <li><b>no member lost without a notice</b>: the engine charges each application exactly what the driver knows
 *       runs (plus what a notice named and has ended), so nothing was taken silently; a Preempt names only containers
 *       of its notice, at its deadline or when DONE came; no gang is restarted;
 *   <li><b>never below the minimum</b>: an elastic gang runs with none or at least its minimum of members; a resize
 *       notice names only members it grew by, a whole number of steps, with a target at or above the minimum; a
 *       notice that stops an elastic gang whole names every member, once none it grew by is left;
 *   <li><b>no grow/shrink loop</b>: capacity is reclaimed only for a request that waits (never for growth), so no
 *       gang is shrunk to grow another; a group is never reclaimed for a request that was already starved when the
 *       group grew (it would have had to give it back at once); no reclaim edge reverses without a change of load;
 *       stable workloads go quiet;
 *   <li><b>accounting balances</b>: charged plus free GPUs is the cluster, and workloads that end leave nothing
 *       charged.
 * </ul>
 */
class ElasticPropertyTest {

  private static final int WORKLOADS = 1_000;
  private static final long STEP = 5_000;
  private static final long STARVATION = 30_000;
  private static final long GRACE = 40_000;
  private static final long ARRIVALS_UNTIL = 300_000;
  private static final long STABLE_HORIZON = 1_800_000;
  private static final long QUIET_FROM = 1_200_000;
  private static final long CHURN_HORIZON = 6_000_000;
  private static final Topology RACKS = Topology.builder("rack").location("/r1").location("/r2").build();

  enum Kind { SINGLES, RIGID, ELASTIC }

  record Job(AppId app, String queue, int priority, Kind kind, int members, int min, int step, Resources shape,
      long runMillis, long arrival, int behaviour) {}

  record Edge(AppId victim, String victimQueue, AppId forApp, String forQueue, long at) {}

  @Test
  void elasticAndRigidWorkloadsNeverLoseAMemberWithoutANoticeNeverLoopAndBalance() {
    int resizes = 0;
    int grown = 0;
    int whole = 0;
    for (int seed = 0; seed < WORKLOADS; seed++) {
      int[] c = new Workload(seed).run();
      resizes += c[0];
      grown += c[1];
      whole += c[2];
    }
    // The workloads must exercise what they check.
    assertThat(grown).as("growth steps").isGreaterThan(2_000);
    assertThat(resizes).as("resize notices").isGreaterThan(300);
    assertThat(whole).as("whole-gang or single notices").isGreaterThan(300);
  }

  private static final class Workload {
    final int seed;
    final Random rnd;
    final boolean stable;
    final ManualClock clock = new ManualClock(0);
    Engine engine;
    final Map<AppId, Job> jobs = new LinkedHashMap<>();
    final TreeMap<Long, List<EngineEvent>> inbox = new TreeMap<>();
    final Map<Long, Allocate> running = new HashMap<>();
    final Map<Long, Allocate> endedNamed = new HashMap<>();
    final Set<Long> named = new HashSet<>();
    final Set<Long> preempted = new HashSet<>();
    /** Grown member id -> when its group grew. */
    final Map<Long, Long> grownAt = new HashMap<>();
    final Map<Long, RequestCheckpoint> notices = new HashMap<>();
    final Map<Long, Long> doneSentAt = new HashMap<>();
    final Map<Long, Long> noticedAt = new HashMap<>();
    /** When each waiting request (by app) last started waiting; absent while nothing of it waits. */
    final Map<AppId, Long> waitingSince = new HashMap<>();
    final Set<AppId> started = new HashSet<>();
    final Set<AppId> finished = new HashSet<>();
    final List<Edge> edges = new ArrayList<>();
    final List<Long> loadChanges = new ArrayList<>();
    int resizeNotices;
    int growSteps;
    int wholeNotices;

    Workload(int seed) {
      this.seed = seed;
      this.rnd = new Random(seed);
      this.stable = seed % 2 == 0;
    }

    int[] run() {
      QueueTree tree = queues("root.queues", "a,b,c", "root.a.capacity", "50", "root.b.capacity", "25",
          "root.c.capacity", "25", "root.a.user-limit-factor", "-1", "root.b.user-limit-factor", "-1",
          "root.c.user-limit-factor", "-1");
      PreemptionSettings p = PreemptionSettings.defaults().withEnabled(true).withStarvationMillis(STARVATION)
          .withCheckpointGraceMillis(GRACE).withExtensions(0, 0).withMaxVictimsPerCycle(2 + rnd.nextInt(10));
      // Reservations time out after 120 s and are not made again for as long: a stable load's gangs take turns at
      // them, and a reclaim into a fresh reservation is legitimate, so quiet is asked of the last 600 s.
      engine = new Engine(CATALOG, tree, RACKS, clock, EngineSettings.defaults().withReservations(120_000, 2)
          .withPreemption(p));
      List<EngineEvent> nodes = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        nodes.add(new EngineEvent.NodeAdded(gpuNode("n" + i, i < 2 ? "/r1" : "/r2", 8)));
      }
      engine.cycle(nodes);
      int jobCount = 5 + rnd.nextInt(8);
      for (int j = 0; j < jobCount; j++) {
        Job job = randomJob(AppId.of("j" + j));
        jobs.put(job.app(), job);
        PlacementSpec spec = switch (job.kind()) {
          case SINGLES -> PlacementSpec.SINGLE;
          case RIGID -> PlacementSpec.gang(null, false);
          case ELASTIC -> PlacementSpec.gang(null, false).withElasticity(Elasticity.of(job.min(), job.step()));
        };
        at(job.arrival(), new EngineEvent.AppSubmitted(job.app(), job.queue(), "u", job.priority()));
        at(job.arrival(), new EngineEvent.Demand(job.app(), "r", job.shape(), job.members(), spec));
        loadChanges.add(job.arrival());
      }
      long horizon = stable ? STABLE_HORIZON : CHURN_HORIZON;
      while (clock.nowMillis() <= horizon) {
        long now = clock.nowMillis();
        List<EngineEvent> events = deliverable(inbox.containsKey(now) ? inbox.remove(now) : List.of(), now);
        for (EngineEvent e : events) {
          if (e instanceof EngineEvent.Demand d) {
            waitingSince.putIfAbsent(d.appId(), now);
          }
        }
        CycleResult r = engine.cycle(events);
        observe(r, now);
        check(now);
        if (!stable && finished.size() == jobs.size() && inbox.isEmpty()) {
          break;
        }
        clock.advance(STEP);
      }
      if (!stable) {
        assertThat(finished).as("seed %d: every job ended", seed).hasSize(jobs.size());
        assertThat(engine.runningContainers()).isZero();
        for (QueueSnapshot s : engine.queueSnapshots()) {
          assertThat(s.usage()).as("seed %d: %s charged at the end", seed, s.path()).isEqualTo(ResourceVector.ZERO);
        }
      }
      checkNoLoops();
      return new int[] {resizeNotices, growSteps, wholeNotices};
    }

    private List<EngineEvent> deliverable(List<EngineEvent> events, long now) {
      List<EngineEvent> out = new ArrayList<>();
      for (EngineEvent e : events) {
        if (e instanceof EngineEvent.ContainerFinished f) {
          Allocate a = running.remove(f.allocationId());
          if (a == null) {
            continue;
          }
          if (named.contains(f.allocationId())) {
            endedNamed.put(f.allocationId(), a);
          }
        } else if (e instanceof EngineEvent.AppFinished f) {
          running.values().removeIf(a -> a.appId().equals(f.appId()));
          endedNamed.values().removeIf(a -> a.appId().equals(f.appId()));
          notices.values().removeIf(n -> n.appId().equals(f.appId()));
          waitingSince.remove(f.appId());
          finished.add(f.appId());
          loadChanges.add(now);
        } else if (e instanceof EngineEvent.CheckpointAnswered ans) {
          if (!notices.containsKey(ans.noticeId()) || finished.contains(ans.appId())) {
            continue;
          }
          doneSentAt.putIfAbsent(ans.noticeId(), now);
        }
        out.add(e);
      }
      return out;
    }

    private void observe(CycleResult r, long now) {
      Map<AppId, Integer> allocated = new HashMap<>();
      for (Allocate a : r.allocations()) {
        assertThat(finished).as("seed %d: allocation to a finished job", seed).doesNotContain(a.appId());
        running.put(a.allocationId(), a);
        allocated.merge(a.appId(), 1, Integer::sum);
        if (started.add(a.appId()) && !stable) {
          // A job ends whole, its run time after it first started.
          at(now + jobs.get(a.appId()).runMillis(), new EngineEvent.AppFinished(a.appId()));
        }
      }
      Set<Long> grownNow = new HashSet<>();
      for (Decision d : r.decisions()) {
        if (d instanceof Resize z && z.grew()) {
          Job job = jobs.get(z.appId());
          assertThat(job.kind()).isEqualTo(Kind.ELASTIC);
          assertThat(z.allocationIds().size() % job.step()).as("seed %d: grows by whole steps", seed).isZero();
          z.allocationIds().forEach(id -> grownAt.put(id, now));
          grownNow.addAll(z.allocationIds());
          growSteps++;
        }
      }
      allocated.forEach((app, n) -> {
        long grownCount = r.allocations().stream().filter(a -> a.appId().equals(app))
            .filter(a -> grownNow.contains(a.allocationId())).count();
        if (n > grownCount && pendingNothing(app)) {
          waitingSince.remove(app); // What it waited for (all of it, or its minimum) started.
        }
      });
      for (Decision d : r.decisions()) {
        if (d instanceof RequestCheckpoint n) {
          onNotice(n, now);
        } else if (d instanceof CancelCheckpoint c) {
          RequestCheckpoint n = notices.remove(c.noticeId());
          assertThat(n).as("seed %d: cancel of an unknown notice", seed).isNotNull();
        } else if (d instanceof Preempt p) {
          onPreempt(p, now);
        } else if (d instanceof Decision.RestartGang g) {
          fail("seed %d: gang restarted with no member lost: %s", seed, g);
        } else if (d instanceof Decision.Reject j) {
          fail("seed %d: %s rejected: %s", seed, j.appId(), j.reason());
        }
      }
    }

    private boolean pendingNothing(AppId app) {
      return engine.pendingReasons(app).isEmpty();
    }

    private void onNotice(RequestCheckpoint n, long now) {
      if (notices.containsKey(n.noticeId())) {
        return; // A re-issue.
      }
      Job victim = jobs.get(n.appId());
      Job beneficiary = jobs.get(n.forAppId());
      assertThat(engine.pendingReasons(n.forAppId())).as("seed %d: reclaimed only for a request that waits", seed)
          .containsKey(n.forRequestKey());
      Long since = waitingSince.get(n.forAppId());
      assertThat(since).as("seed %d: %s waits", seed, n.forAppId()).isNotNull();
      assertThat(now - since).as("seed %d: %s starved", seed, n.forAppId()).isGreaterThanOrEqualTo(STARVATION);
      List<Long> mine = running.values().stream().filter(a -> a.appId().equals(n.appId()))
          .map(Allocate::allocationId).toList();
      assertThat(mine).as("seed %d: notice names running containers", seed).containsAll(n.allocationIds());
      if (n.isResize()) {
        resizeNotices++;
        assertThat(victim.kind()).isEqualTo(Kind.ELASTIC);
        assertThat(n.targetSize()).as("seed %d: never below the minimum", seed).isGreaterThanOrEqualTo(victim.min());
        assertThat(n.allocationIds().size() % victim.step()).isZero();
        for (long id : n.allocationIds()) {
          assertThat(grownAt).as("seed %d: only grown members are resized away", seed).containsKey(id);
          // It grew while the beneficiary was not yet starved: not grown into capacity due back at once.
          assertThat(grownAt.get(id)).as("seed %d: grew before %s starved", seed, n.forAppId())
              .isLessThan(since + STARVATION);
        }
      } else {
        wholeNotices++;
        if (victim.kind() != Kind.SINGLES) {
          assertThat(new HashSet<>(n.allocationIds())).as("seed %d: a gang is named whole", seed)
              .isEqualTo(new HashSet<>(mine));
        }
        if (victim.kind() == Kind.ELASTIC) {
          assertThat(mine).as("seed %d: shrunk to its minimum before it is taken whole", seed)
              .noneMatch(grownAt::containsKey);
        }
      }
      n.allocationIds().forEach(named::add);
      notices.put(n.noticeId(), n);
      noticedAt.put(n.noticeId(), now);
      edges.add(new Edge(n.appId(), victim.queue(), n.forAppId(), beneficiary.queue(), now));
      switch (victim.behaviour()) {
        case 0 -> at(now + STEP * rnd.nextInt(3), new EngineEvent.CheckpointAnswered(n.appId(), n.noticeId(),
            CheckpointAnswer.DONE, 0, "ckpt://" + n.appId() + "/" + now));
        case 1 -> at(now + GRACE - STEP, new EngineEvent.CheckpointAnswered(n.appId(), n.noticeId(),
            CheckpointAnswer.DONE, 0, null));
        default -> { } // Silent: reclaimed at the deadline.
      }
    }

    private void onPreempt(Preempt p, long now) {
      RequestCheckpoint n = notices.remove(p.noticeId());
      assertThat(n).as("seed %d: Preempt without a live notice", seed).isNotNull();
      assertThat(n.allocationIds()).as("seed %d: Preempt names only its notice's containers", seed)
          .containsAll(p.allocationIds());
      Long done = doneSentAt.get(p.noticeId());
      long due = done != null && done < n.deadlineMillis() ? done : n.deadlineMillis();
      assertThat(now).as("seed %d: notice %d reclaimed on time", seed, p.noticeId()).isEqualTo(due);
      assertThat(p.targetSize()).isEqualTo(n.isResize() ? p.targetSize() : 0);
      long kill = now + STEP * rnd.nextInt(3);
      for (long id : p.allocationIds()) {
        preempted.add(id);
        grownAt.remove(id);
        at(kill, new EngineEvent.ContainerFinished(id));
      }
      if (!n.isResize()) {
        waitingSince.putIfAbsent(p.appId(), now); // Re-queued: it waits again.
      }
    }

    private void check(long now) {
      long free = engine.cluster().freeWholeGpusByNode().values().stream().mapToLong(Integer::longValue).sum();
      QueueSnapshot root = engine.queueSnapshots().get(0);
      assertThat(root.usage().gpuUnits() + free * ResourceVector.GPU_UNITS).as("seed %d: charged + free", seed)
          .isEqualTo(root.guarantee().gpuUnits());
      Map<AppId, Long> live = new HashMap<>();
      Map<AppId, Long> maybe = new HashMap<>();
      Map<AppId, Integer> members = new HashMap<>();
      running.values().forEach(a -> {
        live.merge(a.appId(), a.charge().gpuUnits(), Long::sum);
        members.merge(a.appId(), 1, Integer::sum);
      });
      endedNamed.values().forEach(a -> maybe.merge(a.appId(), a.charge().gpuUnits(), Long::sum));
      for (Job job : jobs.values()) {
        long used = engine.appUsage(job.app()).map(ResourceVector::gpuUnits).orElse(0L);
        long low = live.getOrDefault(job.app(), 0L);
        assertThat(used).as("seed %d at %d: %s charged what runs", seed, now, job.app())
            .isBetween(low, low + maybe.getOrDefault(job.app(), 0L));
        int n = members.getOrDefault(job.app(), 0);
        if (job.kind() == Kind.ELASTIC && n > 0) {
          assertThat(n).as("seed %d at %d: %s at or above its minimum", seed, now, job.app())
              .isGreaterThanOrEqualTo(Math.min(job.min(), job.members()));
        }
      }
    }

    private void checkNoLoops() {
      for (Edge first : edges) {
        for (Edge later : edges) {
          if (later.at() < first.at() || changedBetween(first.at(), later.at())) {
            continue;
          }
          boolean cross = !first.victimQueue().equals(first.forQueue());
          boolean loop = later.victim().equals(first.forApp())
              && (cross ? later.forQueue().equals(first.victimQueue()) : later.forApp().equals(first.victim()));
          if (loop) {
            fail("seed %d: reclaim loop: %s then %s", seed, first, later);
          }
        }
      }
      if (stable) {
        assertThat(edges).as("seed %d: stable load goes quiet; jobs %s", seed, jobs.values())
            .noneMatch(e -> e.at() >= QUIET_FROM);
      }
    }

    private boolean changedBetween(long from, long to) {
      for (long t : loadChanges) {
        if (t > from && t <= to) {
          return true;
        }
      }
      return false;
    }

    private void at(long t, EngineEvent e) {
      inbox.computeIfAbsent(t, k -> new ArrayList<>()).add(e);
    }

    private Job randomJob(AppId app) {
      String queue = List.of("a", "b", "c").get(rnd.nextInt(3));
      int priority = rnd.nextInt(3);
      long arrival = STEP * rnd.nextInt((int) (ARRIVALS_UNTIL / STEP) + 1);
      long run = stable ? Long.MAX_VALUE / 4 : STEP * (12 + rnd.nextInt(120));
      int behaviour = rnd.nextInt(3);
      int gpus = rnd.nextInt(4) == 0 ? 2 : 1;
      Resources shape = Resources.of(8_192L * gpus, 2 * gpus).withGpus(gpus);
      int kind = rnd.nextInt(10);
      if (kind < 3) {
        return new Job(app, queue, priority, Kind.SINGLES, 1 + rnd.nextInt(4), 0, 1, shape, run, arrival, behaviour);
      }
      int members = 2 + rnd.nextInt(16 / gpus - 1);
      if (kind < 5) {
        return new Job(app, queue, priority, Kind.RIGID, members, 0, 1, shape, run, arrival, behaviour);
      }
      int min = Math.max(1, members / 4);
      int step = (members - min) % 2 == 0 && rnd.nextBoolean() ? 2 : 1;
      return new Job(app, queue, priority, Kind.ELASTIC, members, min, step, shape, run, arrival, behaviour);
    }
  }
}
