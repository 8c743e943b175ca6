package io.spindle.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Stranded MIG slices, by hand. One H100 in MIG mode with instances 3g.40gb@0 and 3g.40gb@4 (8 memory slices).
 * j1 (0..100 s) asks half a GPU: a 3g.40gb. j2 arrives at 10 asking a whole GPU: on an all-MIG cluster that is the
 * 7g.80gb profile, which the busy GPU cannot give. While j2 waits (10..100) the busy GPU has 4 slices not held:
 * stranded. At 100 the GPU is idle and is re-partitioned for 7g.80gb; the instance serves from 100 + 30 s
 * (the engine's re-partition time), so j2 runs 130..180.
 */
class SimMigTest {

  @Test
  void slicesLeftOnABusyGpuWhileAMigRequestWaitsAreStranded() throws Exception {
    ClusterSpec c = ClusterSpecs.fromJson("mig", new ObjectMapper().readTree("""
        {"nodeGroups": [{"name": "g", "gpus": 1, "model": "H100-80GB", "mig": ["3g.40gb@0", "3g.40gb@4"]}],
         "queues": {"root.queues": "default", "root.default.capacity": "100",
                    "root.default.user-limit-factor": "-1"}}
        """));
    Trace trace = new Trace("mig", ColumnMapping.GENERIC, List.of(
        new SimJob("j1", 0, 100_000, "default", "u", 1, 500, 0, 0, null),
        new SimJob("j2", 10_000, 50_000, "default", "u", 1, 1000, 0, 0, null)), Map.of());
    RunResult r = new Simulator(c, Policies.parse("spindle").get(0), SimOptions.defaults()).run(trace, null);

    assertThat(r.jobs().finished()).isEqualTo(2);
    assertThat(r.jct().max()).isEqualTo(170); // j2: 10 -> 180
    assertThat(r.mig().slices()).isEqualTo(8);
    assertThat(r.mig().repartitions()).isEqualTo(1);
    assertThat(r.utilisation().makespanSeconds()).isEqualTo(180);
    // 4 slices stranded for 90 s of 180.
    assertThat(r.mig().strandedSlicesMean()).isCloseTo(4.0 * 90 / 180, within(1e-12));
    // Held: 4 slices for 100 s, 8 slices for 50 s.
    assertThat(r.mig().heldSlicesMean()).isCloseTo((4.0 * 100 + 8 * 50) / 180, within(1e-12));
  }
}
