package io.spindle.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Elastic gangs in the simulator, worked out by hand on one 8-GPU node with one container per GPU
 * ({@code --member-gpus 1}) and a checkpoint taking 60 s:
 * <pre>
 *   A: submitted 0 s,   runs 1,000 s, 6 GPUs (elastic: minimum 1)
 *   B: submitted 100 s, runs 1,000 s, 8 GPUs (elastic: minimum 2)
 * </pre>
 * Rigid, B waits for A: it runs 1,000..2,000 s (JCT 1,900 s). Elastic, A starts whole (6 fit) and B starts at once on
 * the 2 idle GPUs; when A ends at 1,000 s, B grows to 8, writes a checkpoint (60 s, no progress) and runs on at full
 * speed.
 */
class SimElasticTest {

  static final ClusterSpec NODE = ClusterSpecs.uniform(1, 8, ClusterSpecs.PLAIN_GPU, 0, 0, null);

  static Trace trace() {
    return new Trace("elastic", ColumnMapping.GENERIC, List.of(SimJob.gpuJob("A", 0, 1_000_000, "default", 6),
        SimJob.gpuJob("B", 100_000, 1_000_000, "default", 8)), Map.of());
  }

  static RunResult run(String policy, ElasticModel model) {
    SimOptions options = SimOptions.defaults().withMemberGpus(1).withElastic(model);
    return new Simulator(NODE, Policies.parse(policy, options).get(0), options).run(trace(), null);
  }

  @Test
  void rigidGangsWaitForTheWholeNode() {
    RunResult r = run("spindle", ElasticModel.LINEAR_ALL);
    assertThat(r.jct().mean()).isEqualTo((1_000 + 1_900) / 2.0);
    assertThat(r.preemption().resizes()).isZero();
  }

  @Test
  void underTheLinearModelBStartsAtItsMinimumAndGrowsWhenAEnds() {
    // B at 2 of 8 GPUs from 100 s: 900 s x 2/8 = 225 s of its run. Grows at 1,000 s, writes until 1,060 s, then the
    // 775 s left at full speed: ends at 1,835 s (JCT 1,735 s).
    RunResult r = run("spindle+elastic", ElasticModel.LINEAR_ALL);
    assertThat(r.jct().mean()).isEqualTo((1_000 + 1_735) / 2.0);
    assertThat(r.queueDelay().max()).isZero();
    assertThat(r.preemption().resizes()).isEqualTo(1);
    // The checkpoint written to grow: 60 s on all 8 GPUs.
    assertThat(r.preemption().resizingGpuHours()).isCloseTo(60 * 8 / 3600.0, within(1e-9));
    assertThat(r.implementation()).contains("linear speed-up").contains("a model, not a measurement");
  }

  @Test
  void underAmdahlsLawASmallStartCostsLess() {
    // S(k) = 1 / (0.05 + 0.95 / k): on 2 of 8 B runs at S(2)/S(8) = 0.3214 of full speed; 900 s there do 289.285 s
    // of its run; the 710.715 s left after the 60 s write end it at 1,770.715 s.
    RunResult r = run("spindle+elastic", ElasticModel.parse("amdahl:0.05", 1));
    assertThat(r.jct().mean()).isCloseTo((1_000 + 1_670.715) / 2.0, within(0.01));
  }

  @Test
  void aFractionOfNoneLeavesEveryGangRigid() {
    RunResult r = run("spindle+elastic", ElasticModel.parse("linear", 0));
    assertThat(r.jct().mean()).isEqualTo((1_000 + 1_900) / 2.0);
  }

  @Test
  void aResizeNoticeShrinksARunningGangWhichLosesNoWork() {
    // Queues default and urgent, 4 GPUs each, both may borrow: A (default) runs whole on 8; U (urgent, 4 GPUs,
    // rigid: its one container) starves; A gives grown members back through a resize notice, checkpointing first.
    ClusterSpec node = UrgentJobs.addQueue(NODE, 0.5);
    SimOptions options = SimOptions.defaults().withMemberGpus(1).withCheckpoints(30 * 60_000, 60_000);
    Trace trace = new Trace("shrink", ColumnMapping.GENERIC, List.of(
        SimJob.gpuJob("A", 0, 10_000_000, "default", 8),
        SimJob.gpuJob("U", 1_000_000, 600_000, UrgentJobs.QUEUE, 1)), Map.of());
    RunResult r = new Simulator(node, Policies.parse("spindle+preempt-checkpoint+elastic", options).get(0), options)
        .run(trace, null);
    assertThat(r.jobs().finished()).isEqualTo(2);
    assertThat(r.preemption().notices()).isEqualTo(1);
    assertThat(r.preemption().preemptions()).as("a resize is not a preemption").isZero();
    assertThat(r.preemption().workLostGpuHours()).isZero();
    // U waited the starvation delay (60 s) and A's checkpoint on notice (60 s); A shrank to 7, ran 600 s at 7/8 of
    // its speed, and grew back to 8 when U ended (another 60 s checkpoint): 10,000 + 60 + 75 + 60 = 10,195 s.
    assertThat(r.preemption().urgentWait().max()).isEqualTo(120);
    assertThat(r.preemption().resizes()).isEqualTo(2);
    assertThat(r.preemption().checkpointGpuHours()).isCloseTo(60 * 8 / 3600.0, within(1e-9));
    assertThat(r.preemption().resizingGpuHours()).isCloseTo(60 * 8 / 3600.0, within(1e-9));
    assertThat(r.jct().max()).isEqualTo(10_195);
  }

  @Test
  void badModelsAreRefused() {
    assertThatThrownBy(() -> ElasticModel.parse("amdahl:1.5", 1)).hasMessageContaining("0 <= f < 1");
    assertThatThrownBy(() -> ElasticModel.parse("quadratic", 1)).hasMessageContaining("linear or amdahl:f");
    assertThatThrownBy(() -> ElasticModel.parse("linear", 2)).hasMessageContaining("--elastic-fraction");
  }
}
