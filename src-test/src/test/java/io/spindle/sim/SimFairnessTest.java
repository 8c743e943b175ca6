package io.spindle.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Share against fair share, by hand. One node with 2 GPUs, queues a and b guaranteed 50% each, borrowing allowed.
 * a1 (queue a, 2 GPUs, 0..100 s) takes both GPUs while b asks nothing; b1 (queue b, 1 GPU) arrives at 50 and waits
 * for a1 (no preemption), then runs 100..110.
 * <pre>
 *   [0, 50)    only a demands: share 1, fair 1                     dev 0,   Jain over {a: 1}      = 1
 *   [50, 100)  a share 1, fair 0.5; b share 0, fair 0.5           dev 0.5, Jain over {2, 0}      = 4 / (2 * 4) = 0.5
 *   [100, 110) only b demands: share 0.5, fair 0.5                dev 0,   Jain over {b: 1}      = 1
 * </pre>
 * Over the 110 s with demand: mean deviation 25 / 110, Jain (50 + 25 + 10) / 110, largest deviation 0.5.
 */
class SimFairnessTest {

  @Test
  void deviationAndJainIndexOverTime() {
    ClusterSpec cluster = ClusterSpecs.uniform(1, 2, ClusterSpecs.PLAIN_GPU, 0, 0, "a:50,b:50");
    Trace trace = new Trace("fair", ColumnMapping.GENERIC, List.of(SimJob.gpuJob("a1", 0, 100_000, "a", 2),
        SimJob.gpuJob("b1", 50_000, 10_000, "b", 1)), Map.of());
    RunResult r = new Simulator(cluster, Policies.parse("spindle").get(0), SimOptions.defaults()).run(trace, null);

    assertThat(r.fairness().contendedSeconds()).isEqualTo(110);
    assertThat(r.fairness().maxDeviation()).isCloseTo(0.5, within(1e-12));
    assertThat(r.fairness().meanDeviation()).isCloseTo(25.0 / 110, within(1e-12));
    assertThat(r.fairness().jainIndex()).isCloseTo(85.0 / 110, within(1e-12));
    // Queue a over the whole run (110 s): share 1 for 100 s; fair share 1 for 50 s and 0.5 for 50 s.
    RunResult.QueueResult a = r.queues().get(0);
    assertThat(a.queue()).isEqualTo("a");
    assertThat(a.meanShare()).isCloseTo(100.0 / 110, within(1e-12));
    assertThat(a.meanFairShare()).isCloseTo(75.0 / 110, within(1e-12));
    assertThat(a.guaranteeShare()).isCloseTo(0.5, within(1e-12));
    assertThat(r.queues().get(1).queueDelay().max()).isEqualTo(50); // b1 waited 50..100
  }

  @Test
  void heliosRulesKeepEachQueueInsideItsGuarantee() {
    // No borrowing: a1 (2 GPUs) can never fit a's 1-GPU guarantee and is rejected at once; b1 runs on arrival.
    ClusterSpec cluster = ClusterSpecs.uniform(1, 2, ClusterSpecs.PLAIN_GPU, 0, 0, "a:50,b:50");
    Trace trace = new Trace("fair", ColumnMapping.GENERIC, List.of(SimJob.gpuJob("a1", 0, 100_000, "a", 2),
        SimJob.gpuJob("b1", 50_000, 10_000, "b", 1)), Map.of());
    RunResult r = new Simulator(cluster, Policies.parse("spindle-helios").get(0), SimOptions.defaults())
        .run(trace, null);
    assertThat(r.jobs().rejected()).isEqualTo(1);
    assertThat(r.jobs().finished()).isEqualTo(1);
    assertThat(r.queueDelay().max()).isZero();
  }
}
