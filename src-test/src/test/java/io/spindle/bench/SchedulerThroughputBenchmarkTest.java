package io.spindle.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.bench.SchedulerThroughputBenchmark.Ask;
import io.spindle.bench.SchedulerThroughputBenchmark.Result;
import io.spindle.yarn.SpindleScheduler;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.junit.jupiter.api.Test;

/** The throughput harness at toy scale: same workload for both schedulers, both really allocate through the RM. */
class SchedulerThroughputBenchmarkTest {

  @Test
  void theWorkloadCoversTheRequestedShareOfGpusWithTheDeclaredSizes() {
    List<Ask> asks = SchedulerThroughputBenchmark.workload(100, 20, 0.5, new Random(3));
    assertThat(asks).hasSize(20);
    assertThat(asks).allMatch(a -> List.of(1, 2, 4, 8).contains(a.gpus()) && a.containers() >= 1);
    long gpus = asks.stream().mapToLong(a -> (long) a.gpus() * a.containers()).sum();
    assertThat(gpus).isBetween(300L, 400L);
    assertThat(SchedulerThroughputBenchmark.workload(100, 20, 0.5, new Random(3))).isEqualTo(asks);
  }

  @Test
  void bothSchedulersAllocateTheSameSmallWorkloadThroughTheResourceManager() throws Exception {
    List<Ask> asks = List.of(new Ask(0, 1, 8), new Ask(1, 2, 4), new Ask(0, 8, 1));
    Result cs = SchedulerThroughputBenchmark.run(CapacityScheduler.class.getName(), "cs", 4, asks);
    Result spindle = SchedulerThroughputBenchmark.run(SpindleScheduler.class.getName(), "spindle", 4, asks);
    assertThat(cs.asked()).isEqualTo(13);
    assertThat(cs.allocated()).isPositive();
    assertThat(spindle.allocated()).isEqualTo(13);
    assertThat(spindle.perSecond()).isPositive();
  }
}
