package io.spindle.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Three jobs on two 4-GPU nodes, every figure worked out by hand:
 * <pre>
 *   A: submitted 0 s, runs 100 s, 3 GPUs        (one container, one node)
 *   B: submitted 10 s, runs 50 s, 8 GPUs        (two 4-GPU members: both nodes whole)
 *   C: submitted 20 s, runs 30 s, 1 GPU
 * </pre>
 * A starts at once on n0 (best fit among equals: the first node). B cannot fit until A ends.
 */
class SimTinyTraceTest {

  static final ClusterSpec TWO_NODES = ClusterSpecs.uniform(2, 4, ClusterSpecs.PLAIN_GPU, 0, 0, null);

  static Trace trace() {
    List<SimJob> jobs = List.of(SimJob.gpuJob("A", 0, 100_000, "default", 3),
        SimJob.gpuJob("B", 10_000, 50_000, "default", 8), SimJob.gpuJob("C", 20_000, 30_000, "default", 1));
    return new Trace("tiny", ColumnMapping.GENERIC, jobs, Map.of());
  }

  static RunResult run(String policy) {
    return new Simulator(TWO_NODES, Policies.parse(policy).get(0), SimOptions.defaults()).run(trace(), null);
  }

  @Test
  void fifoLetsNothingPassTheWaitingGang() {
    // B waits for A (starts 100, ends 150); C waits behind B and starts when B ends: 150..180.
    // JCTs A 100, B 140, C 160; queue delays 0, 90, 130.
    RunResult r = run("fifo");
    assertThat(r.jobs().finished()).isEqualTo(3);
    assertThat(r.jct().mean()).isCloseTo(400.0 / 3, within(1e-9));
    assertThat(r.jct().p50()).isEqualTo(140);
    assertThat(r.jct().max()).isEqualTo(160);
    assertThat(r.queueDelay().mean()).isCloseTo(220.0 / 3, within(1e-9));
    assertThat(r.utilisation().makespanSeconds()).isEqualTo(180);
    // GPU-time 3*100 + 8*50 + 1*30 = 730 GPU-s over 8 GPUs x 180 s.
    assertThat(r.utilisation().busy()).isCloseTo(730.0 / (8 * 180), within(1e-12));
    assertThat(r.gangs().partialGpuHours()).isZero();
  }

  @Test
  void spindleReservesForTheGangAndBackfillsTheShortJobThatEndsBeforeIt() {
    // B reserves both nodes at 10 (projected start 100: A declared 100 s). C declares 30 s: it ends at 50 <= 100,
    // so it backfills onto the reserved nodes at 20. B starts at 100 as under FIFO. JCTs A 100, B 140, C 30.
    RunResult r = run("spindle");
    assertThat(r.jct().mean()).isCloseTo(90, within(1e-9));
    assertThat(r.jct().p50()).isEqualTo(100);
    assertThat(r.jct().max()).isEqualTo(140);
    assertThat(r.queueDelay().mean()).isCloseTo(30, within(1e-9));
    assertThat(r.utilisation().makespanSeconds()).isEqualTo(150);
    assertThat(r.utilisation().busy()).isCloseTo(730.0 / (8 * 150), within(1e-12));
    assertThat(r.gangs().partialGpuHours()).isZero();
  }

  @Test
  void withoutDeclaredRunTimesTheReservationKeepsTheShortJobOut() {
    // Same reservation, but C declares nothing, so it may not use the held nodes: it starts when B ends (150).
    RunResult r = run("spindle-helios+backfill+pool+borrow+reserve");
    assertThat(r.jct().mean()).isCloseTo(400.0 / 3, within(1e-9));
    assertThat(r.jct().max()).isEqualTo(160);
  }

  @Test
  void stockYarnGrantsMembersOneByOneAndThePartialGangHoldsGpus() {
    // B's first 4-GPU member takes n1 at 10; the second needs n0 whole, which frees at 100. C takes n0's free GPU at
    // 20 (20..50). B runs 100..150. The partial gang held 4 GPUs from 10 to 100: 360 GPU-s = 0.1 GPU-h.
    RunResult r = run("yarn");
    assertThat(r.jct().mean()).isCloseTo(90, within(1e-9));
    assertThat(r.gangs().partialGpuHours()).isCloseTo(0.1, within(1e-12));
    assertThat(r.gangs().jobsEverPartial()).isEqualTo(1);
    // Held GPU-time: 730 busy + 360 idle in the partial gang, over 8 GPUs x 150 s.
    assertThat(r.utilisation().held()).isCloseTo(1090.0 / (8 * 150), within(1e-12));
  }

  @Test
  void lowerBoundsComeFromTheTraceAlone() {
    RunResult r = run("fifo");
    assertThat(r.bounds().meanDuration()).isCloseTo(60, within(1e-12)); // (100 + 50 + 30) / 3
    assertThat(r.bounds().gpuTimeOverCapacitySeconds()).isCloseTo(91.25, within(1e-12)); // 730 / 8
    assertThat(r.preemption().workLostGpuHours()).isZero();
    assertThat(r.preemption().notices()).isZero();
  }
}
