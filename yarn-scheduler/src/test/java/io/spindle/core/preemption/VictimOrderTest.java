package io.spindle.core.preemption;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.AppId;
import io.spindle.core.model.ResourceVector;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class VictimOrderTest {

  private static final long NOW = 1_000_000;

  private static Candidate unit(long id, String queue, int priority, int gpus, long start, long checkpoint) {
    return new Candidate(id, AppId.of("app" + id), "r", queue, "u", priority, ResourceVector.of(1024L * gpus, gpus, gpus),
        start, checkpoint, List.of(id * 10));
  }

  private static List<Long> order(Map<String, Double> distance, Candidate... cs) {
    List<Candidate> list = new ArrayList<>(List.of(cs));
    list.sort(VictimOrder.at(NOW, q -> distance.getOrDefault(q, 0.0)));
    return list.stream().map(Candidate::unitId).toList();
  }

  @Test
  void leastWorkLostSinceTheLastCheckpointComesFirst() {
    // 1 GPU for 900 s; 1 GPU for 100 s; 8 GPUs for 100 s (800 GPU-s); 8 GPUs, checkpointed 10 s ago (80 GPU-s).
    assertThat(order(Map.of(), unit(1, "b", 0, 1, 100_000, Long.MIN_VALUE), unit(2, "b", 0, 1, 900_000, Long.MIN_VALUE),
        unit(3, "b", 0, 8, 900_000, Long.MIN_VALUE), unit(4, "b", 0, 8, 0, 990_000)))
        .containsExactly(4L, 2L, 3L, 1L);
  }

  @Test
  void thenTheLowestPriorityThenTheQueueFurthestAboveItsFairShare() {
    Map<String, Double> distance = Map.of("b", 0.10, "c", 0.30);
    // Same work lost (1 GPU for 100 s) everywhere.
    assertThat(order(distance, unit(1, "b", 2, 1, 900_000, Long.MIN_VALUE), unit(2, "b", 1, 1, 900_000, Long.MIN_VALUE),
        unit(3, "c", 2, 1, 900_000, Long.MIN_VALUE), unit(4, "c", 1, 1, 900_000, Long.MIN_VALUE)))
        .containsExactly(4L, 2L, 3L, 1L);
  }

  @Test
  void containersWithoutGpusLoseNoGpuWorkAndTiesGoToTheShortestRunThenTheNewest() {
    Candidate cpuLong = new Candidate(1, AppId.of("a"), "r", "b", "u", 0, ResourceVector.of(4096, 4, 0), 0, Long.MIN_VALUE,
        List.of(1L));
    Candidate cpuShort = new Candidate(2, AppId.of("a"), "r", "b", "u", 0, ResourceVector.of(4096, 4, 0), 500_000,
        Long.MIN_VALUE, List.of(2L));
    Candidate cpuShortNewer = new Candidate(3, AppId.of("a"), "r", "b", "u", 0, ResourceVector.of(4096, 4, 0), 500_000,
        Long.MIN_VALUE, List.of(3L));
    assertThat(cpuLong.workLost(NOW)).isZero();
    assertThat(order(Map.of(), cpuLong, cpuShort, cpuShortNewer, unit(4, "b", 0, 1, 999_000, Long.MIN_VALUE)))
        .containsExactly(3L, 2L, 1L, 4L);
  }
}
