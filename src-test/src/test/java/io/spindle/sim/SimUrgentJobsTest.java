package io.spindle.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.queue.FairShareCalculator;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The injected urgent workload: its queue's guarantee, and jobs that depend on the seed alone. */
class SimUrgentJobsTest {

  private static Path vcSizes() throws Exception {
    return Paths.get(SimUrgentJobsTest.class.getResource("/traces/philly/vc-sizes.csv").toURI());
  }

  @Test
  void absoluteGuaranteesAreScaledDownAndTheUrgentQueueGetsItsShareOfTheGpus() throws Exception {
    // Quarter size: 6214e9 has 16 nodes (128 GPUs), 88 nodes in all (704 GPUs).
    ClusterSpec c = UrgentJobs.addQueue(ClusterSpecs.fromVcSizes(vcSizes(), 8, 0.25), 0.2);
    assertThat(c.leafNames()).hasSize(12).endsWith(UrgentJobs.QUEUE);
    assertThat(c.totalGpus()).isEqualTo(704);
    assertThat(c.queueConf()).containsEntry("yarn.scheduler.capacity.root.6214e9.capacity", "[yarn.io/gpu=102]")
        .containsEntry("yarn.scheduler.capacity.root.urgent.capacity", "[yarn.io/gpu=140]");
    Map<String, FairShareCalculator.Limits> limits = FairShareCalculator.resolveLimits(c.queueTree(), c.capacity());
    double guaranteed = c.queueTree().leaves().stream().mapToDouble(q -> limits.get(q.path()).guarantee().gpus())
        .sum();
    assertThat(guaranteed).as("guarantees still fit in the cluster").isLessThanOrEqualTo(704);
    assertThat(limits.get("root.urgent").maximum().gpus()).isEqualTo(704);
    assertThat(c.partitions()).doesNotContainValue(UrgentJobs.QUEUE);
  }

  @Test
  void urgentJobsAreDrawnFromTheSeedWithinTheTraceSpanAndMergedInSubmitOrder() {
    List<SimJob> base = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      base.add(SimJob.gpuJob("t" + i, i * 3_600_000L, 60_000, "default", 1));
    }
    Trace trace = new Trace("hourly", ColumnMapping.GENERIC, base, Map.of());
    UrgentJobs.Spec spec = new UrgentJobs.Spec(25, 0.3, List.of(8, 16), 120_000, 240_000);
    Trace a = UrgentJobs.inject(trace, spec, 5);
    assertThat(a.jobs()).hasSize(125);
    assertThat(UrgentJobs.inject(trace, spec, 5).jobs()).isEqualTo(a.jobs());
    assertThat(UrgentJobs.inject(trace, spec, 6).jobs()).isNotEqualTo(a.jobs());
    List<SimJob> urgent = a.jobs().stream().filter(j -> j.queue().equals(UrgentJobs.QUEUE)).toList();
    assertThat(urgent).hasSize(25).allSatisfy(j -> {
      assertThat(j.gpus()).isIn(8, 16);
      assertThat(j.durationMillis()).isBetween(120_000L, 240_000L).matches(d -> d % 1000 == 0);
      assertThat(j.submitMillis()).isBetween(0L, 99 * 3_600_000L);
    });
    assertThat(urgent.get(0).id()).isEqualTo("urgent-0001");
    for (int i = 1; i < a.jobs().size(); i++) {
      assertThat(a.jobs().get(i).submitMillis()).isGreaterThanOrEqualTo(a.jobs().get(i - 1).submitMillis());
    }
    assertThat(a.jobs().stream().filter(j -> !j.queue().equals(UrgentJobs.QUEUE)).toList()).isEqualTo(base);
  }

  @Test
  void theFlagsAreCheckedAndIsolatedQueuesAreRefused() throws Exception {
    String[] base = {"--trace", vcSizes().getParent().resolve("philly-sep-dec-2017.csv").toString(), "--vc-sizes",
        vcSizes().toString(), "--limit", "10", "--progress", "never"};
    assertThatThrownBy(() -> SimMain.simulate(SimMain.parse(concat(base, "--urgent-share", "0.3")), null, false))
        .hasMessageContaining("--urgent-jobs");
    assertThatThrownBy(() -> SimMain.simulate(SimMain.parse(concat(base, "--urgent-jobs", "3", "--policy",
        "spindle-helios")), null, false)).hasMessageContaining("own nodes");
    assertThatThrownBy(() -> SimMain.simulate(SimMain.parse(concat(base, "--urgent-jobs", "3", "--urgent-minutes",
        "30")), null, false)).hasMessageContaining("LO-HI");
    assertThat(SimMain.urgent(SimMain.parse(concat(base, "--urgent-jobs", "3", "--urgent-gpus", "4, 8",
        "--urgent-minutes", "5-15", "--urgent-share", "0.25"))))
        .isEqualTo(new UrgentJobs.Spec(3, 0.25, List.of(4, 8), 300_000, 900_000));
  }

  private static String[] concat(String[] a, String... b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
