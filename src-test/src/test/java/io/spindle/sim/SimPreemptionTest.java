package io.spindle.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.spindle.sim.RunResult.Preemption;
import io.spindle.sim.RunResult.QueueResult;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * One preemption on one 8-GPU node, every figure worked out by hand. Queues {@code default} and {@code urgent}, each
 * guaranteed 4 GPUs ({@link UrgentJobs#addQueue} with share 0.5), both may borrow the whole node:
 * <pre>
 *   B1: default, submitted 0 s,    runs 10,000 s, 4 GPUs
 *   B2: default, submitted 100 s,  runs  5,000 s, 4 GPUs   (default borrows the urgent queue's half)
 *   U:  urgent,  submitted 1,000 s, runs    600 s, 4 GPUs
 * </pre>
 * U cannot fit. Fair shares with this demand: 4 GPUs each, so default is 4 above its own and urgent 4 below. After
 * the starvation delay (60 s: at 1,060 s) the engine notices the victim that loses least since its last checkpoint
 * (B2: 960 s x 4 GPUs against B1's 1,060 s x 4; with 10-minute checkpoints, 360 s against 460 s). Taking B1 and B2
 * would push default below its fair share, so one victim only.
 */
class SimPreemptionTest {

  static final ClusterSpec NODE = UrgentJobs.addQueue(ClusterSpecs.uniform(1, 8, ClusterSpecs.PLAIN_GPU, 0, 0, null),
      0.5);

  static Trace trace() {
    List<SimJob> jobs = List.of(SimJob.gpuJob("B1", 0, 10_000_000, "default", 4),
        SimJob.gpuJob("B2", 100_000, 5_000_000, "default", 4),
        SimJob.gpuJob("U", 1_000_000, 600_000, UrgentJobs.QUEUE, 4));
    return new Trace("one-preemption", ColumnMapping.GENERIC, jobs, Map.of());
  }

  static RunResult run(String policy, long checkpointIntervalMillis) {
    return run(policy, checkpointIntervalMillis, 60_000);
  }

  static RunResult run(String policy, long checkpointIntervalMillis, long writeMillis) {
    SimOptions options = SimOptions.defaults().withCheckpoints(checkpointIntervalMillis, writeMillis);
    return new Simulator(NODE, Policies.parse(policy).get(0), options).run(trace(), null);
  }

  static QueueResult queue(RunResult r, String name) {
    return r.queues().stream().filter(q -> q.queue().equals(name)).findFirst().orElseThrow();
  }

  @Test
  void theUrgentQueueIsCarvedOutOfTheOthersGuarantee() {
    assertThat(NODE.leafNames()).containsExactly("default", UrgentJobs.QUEUE);
    assertThat(NODE.queueConf()).containsEntry("yarn.scheduler.capacity.root.default.capacity", "50")
        .containsEntry("yarn.scheduler.capacity.root.urgent.capacity", "50")
        .containsEntry("yarn.scheduler.capacity.root.urgent.maximum-capacity", "100");
  }

  @Test
  void withoutPreemptionTheUrgentJobWaitsForTheBorrowerToEnd() {
    // B2 ends at 5,100 s; U runs 5,100..5,700: waits 4,100 s.
    RunResult r = run("spindle", SimOptions.DEFAULT_CHECKPOINT_INTERVAL_MILLIS);
    Preemption p = r.preemption();
    assertThat(p.notices()).isZero();
    assertThat(p.preemptions()).isZero();
    assertThat(p.workLostGpuHours()).isZero();
    assertThat(p.urgentWait().count()).isEqualTo(1);
    assertThat(p.urgentWait().max()).isEqualTo(4_100);
    assertThat(p.model()).startsWith("none");
  }

  @Test
  void killAfter15SecondsLosesEverythingSinceTheStartWhenNoCheckpointWasWritten() {
    // Notice at 1,060 s, silence, kill at 1,075 s: B2 ran 975 s since its start (first checkpoint due at 1,900 s).
    // Lost 975 s x 4 GPUs = 3,900 GPU-s. U runs 1,075..1,675 (wait 75 s); B2 starts over at 1,675 and ends at
    // 6,675 (JCT 6,575 s); B1 is untouched (JCT 10,000 s).
    RunResult r = run("spindle+preempt-kill-15s", 30 * 60_000);
    Preemption p = r.preemption();
    assertThat(p.notices()).isEqualTo(1);
    assertThat(p.withdrawn()).isZero();
    assertThat(p.preemptions()).isEqualTo(1);
    assertThat(p.preemptionsForUrgent()).isEqualTo(1);
    assertThat(p.jobsPreempted()).isEqualTo(1);
    assertThat(p.urgentServedByPreemption()).isEqualTo(1);
    assertThat(p.workLostGpuHours()).isCloseTo(3_900 / 3_600.0, within(1e-12));
    assertThat(p.checkpointGpuHours()).isZero();
    assertThat(p.urgentWait().max()).isEqualTo(75);
    assertThat(queue(r, UrgentJobs.QUEUE).jct().max()).isEqualTo(675);
    assertThat(queue(r, "default").jct().max()).isEqualTo(10_000);
    assertThat(queue(r, "default").jct().mean()).isCloseTo((10_000 + 6_575) / 2.0, within(1e-9));
    // Queueing delay counts the wait after the preemption too: B2 started at once, then waited 1,075..1,675 s.
    assertThat(queue(r, "default").queueDelay().max()).isEqualTo(600);
    assertThat(r.jobs().finished()).isEqualTo(3);
  }

  @Test
  void killAfter15SecondsLosesWhatWasDoneSinceTheLastPeriodicCheckpoint() {
    // Checkpoints every 10 min of run time: B2 (started 100 s) checkpointed at 700 s (600 s of progress). Killed at
    // 1,075 s: lost 375 s x 4 = 1,500 GPU-s. It resumes at 1,675 s with 4,400 s to go: ends 6,075 (JCT 5,975 s).
    RunResult r = run("spindle+preempt-kill-15s", 10 * 60_000);
    Preemption p = r.preemption();
    assertThat(p.preemptions()).isEqualTo(1);
    assertThat(p.workLostGpuHours()).isCloseTo(1_500 / 3_600.0, within(1e-12));
    assertThat(p.urgentWait().max()).isEqualTo(75);
    assertThat(queue(r, "default").jct().mean()).isCloseTo((10_000 + 5_975) / 2.0, within(1e-9));
  }

  @Test
  void aCheckpointOnNoticeLosesNothingAndCostsTheWriteTime() {
    // Notice at 1,060 s: B2 stops and writes its state (960 s of progress) for 60 s, answers DONE at 1,120 s and is
    // killed then. Lost 0; writing 60 s x 4 = 240 GPU-s. U runs 1,120..1,720 (wait 120 s); B2 resumes at 1,720 with
    // 4,040 s to go and ends at 5,760 (JCT 5,660 s).
    RunResult r = run("spindle+preempt-checkpoint", 30 * 60_000);
    Preemption p = r.preemption();
    assertThat(p.notices()).isEqualTo(1);
    assertThat(p.preemptions()).isEqualTo(1);
    assertThat(p.workLostGpuHours()).isZero();
    assertThat(p.checkpointGpuHours()).isCloseTo(240 / 3_600.0, within(1e-12));
    assertThat(p.wastedGpuHours()).isCloseTo(240 / 3_600.0, within(1e-12));
    assertThat(p.urgentWait().max()).isEqualTo(120);
    assertThat(queue(r, UrgentJobs.QUEUE).jct().max()).isEqualTo(720);
    assertThat(queue(r, "default").jct().mean()).isCloseTo((10_000 + 5_660) / 2.0, within(1e-9));
    assertThat(r.utilisation().makespanSeconds()).isEqualTo(10_000);
  }

  @Test
  void aPeriodicCheckpointBeforeTheNoticeChangesNothingForTheCheckpointingVictim() {
    // The write at the notice holds all 960 s of B2's progress whatever it checkpointed before.
    RunResult r = run("spindle+preempt-checkpoint", 10 * 60_000);
    assertThat(r.preemption().workLostGpuHours()).isZero();
    assertThat(r.preemption().checkpointGpuHours()).isCloseTo(240 / 3_600.0, within(1e-12));
    assertThat(queue(r, "default").jct().mean()).isCloseTo((10_000 + 5_660) / 2.0, within(1e-9));
  }

  @Test
  void aVictimWhoseCheckpointOutlastsTheGraceAsksForAnExtensionAndLosesNothing() {
    // A 150 s write against 120 s of grace: B2 asks for 90 s more at the notice (1,060 s), granted (one extension of
    // up to 300 s); written at 1,210 s, DONE, killed. Lost 0; writing 150 s x 4 = 600 GPU-s; U waits 210 s.
    RunResult r = run("spindle+preempt-checkpoint", 30 * 60_000, 150_000);
    assertThat(r.preemption().preemptions()).isEqualTo(1);
    assertThat(r.preemption().workLostGpuHours()).isZero();
    assertThat(r.preemption().checkpointGpuHours()).isCloseTo(600 / 3_600.0, within(1e-12));
    assertThat(r.preemption().urgentWait().max()).isEqualTo(210);
    // B2 resumes at 1,810 s (U ends) with 4,040 s to go: ends 5,850 (JCT 5,750 s).
    assertThat(queue(r, "default").jct().mean()).isCloseTo((10_000 + 5_750) / 2.0, within(1e-9));
  }

  @Test
  void aWriteLongerThanGraceAndExtensionIsCutOffAtTheDeadlineAndLosesWhatFollowedTheLastCheckpoint() {
    // A 500 s write: the extension asked (380 s) is capped at 300 s, so the deadline is 1,060 + 120 + 300 = 1,480 s
    // and B2 is killed mid-write. It falls back to its start (no periodic checkpoint yet): lost 960 s x 4 =
    // 3,840 GPU-s, and 420 s x 4 = 1,680 GPU-s were spent on the write that never finished. U waits 480 s.
    RunResult r = run("spindle+preempt-checkpoint", 30 * 60_000, 500_000);
    assertThat(r.preemption().preemptions()).isEqualTo(1);
    assertThat(r.preemption().workLostGpuHours()).isCloseTo(3_840 / 3_600.0, within(1e-12));
    assertThat(r.preemption().checkpointGpuHours()).isCloseTo(1_680 / 3_600.0, within(1e-12));
    assertThat(r.preemption().urgentWait().max()).isEqualTo(480);
    // B2 starts over at 2,080 s (U ends): ends 7,080 (JCT 6,980 s).
    assertThat(queue(r, "default").jct().mean()).isCloseTo((10_000 + 6_980) / 2.0, within(1e-9));
  }

  @Test
  void aVictimThatWouldEndBeforeItsCheckpointIsWrittenJustFinishes() {
    // B2 runs only 1,000 s: at the notice (1,060 s) it has 40 s left, less than a 60 s write, so it carries on and
    // ends at 1,100 s, which completes the reclaim: U starts then. No work lost, no write.
    List<SimJob> jobs = List.of(SimJob.gpuJob("B1", 0, 10_000_000, "default", 4),
        SimJob.gpuJob("B2", 100_000, 1_000_000, "default", 4),
        SimJob.gpuJob("U", 1_000_000, 600_000, UrgentJobs.QUEUE, 4));
    RunResult r = new Simulator(NODE, Policies.parse("spindle+preempt-checkpoint").get(0), SimOptions.defaults())
        .run(new Trace("short-victim", ColumnMapping.GENERIC, jobs, Map.of()), null);
    assertThat(r.preemption().notices()).isEqualTo(1);
    assertThat(r.preemption().preemptions()).isZero();
    assertThat(r.preemption().wastedGpuHours()).isZero();
    assertThat(r.preemption().urgentWait().max()).isEqualTo(100);
  }

  @Test
  void preemptCompareRunsTheThreeVariantsSideBySide() {
    assertThat(Policies.parse("preempt-compare")).extracting(SimPolicy::name)
        .containsExactly("spindle", "spindle+preempt-kill-15s", "spindle+preempt-checkpoint");
    assertThat(Policies.parse("spindle-helios+backfill+pool+borrow+preempt-checkpoint").get(0).preemption())
        .isEqualTo(PreemptionMode.CHECKPOINT);
  }
}
