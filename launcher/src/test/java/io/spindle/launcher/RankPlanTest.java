package io.spindle.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RankPlanTest {

  @Test
  void ranksAreConsecutiveOnANodeThenARackWhateverOrderContainersCameIn() {
    // Containers arrive interleaved across racks and nodes, as allocations do.
    List<WorkerSlot> arrived = List.of(
        new WorkerSlot("c5", "h3:8041", "h3", "/r2", List.of(0, 1), List.of(0, 0)),
        new WorkerSlot("c1", "h1:8041", "h1", "/r1", List.of(4, 5), List.of(1, 1)),
        new WorkerSlot("c4", "h2:8041", "h2", "/r1", List.of(0, 1), List.of(0, 0)),
        new WorkerSlot("c2", "h1:8041", "h1", "/r1", List.of(0, 1), List.of(0, 0)),
        new WorkerSlot("c6", "h3:8041", "h3", "/r2", List.of(2, 3), List.of(0, 0)));
    RankPlan plan = new RankPlan(arrived, 29_500);
    assertThat(plan.ranked()).extracting(WorkerSlot::containerId).containsExactly("c2", "c1", "c4", "c5", "c6");
    for (int r = 1; r < plan.ranked().size(); r++) {
      WorkerSlot prev = plan.ranked().get(r - 1);
      WorkerSlot cur = plan.ranked().get(r);
      // A rank's neighbour leaves its node only when no rank of that node is left, and its rack likewise.
      long hostChanges = plan.ranked().subList(0, r + 1).stream().map(WorkerSlot::host).distinct().count();
      assertThat(hostChanges).isLessThanOrEqualTo(r + 1);
      if (!prev.host().equals(cur.host())) {
        assertThat(plan.ranked().subList(r, plan.ranked().size())).noneMatch(w -> w.host().equals(prev.host()));
      }
      if (!prev.rack().equals(cur.rack())) {
        assertThat(plan.ranked().subList(r, plan.ranked().size())).noneMatch(w -> w.rack().equals(prev.rack()));
      }
    }
  }

  @Test
  void eachWorkerIsToldItsRankTheWorldTheRendezvousAndItsGpus() {
    RankPlan plan = new RankPlan(List.of(
        new WorkerSlot("c9", "h2:8041", "h2", "/r1", List.of(3), List.of()),
        new WorkerSlot("c7", "h1:8041", "h1", "/r1", List.of(6, 7), List.of(1, 1)),
        new WorkerSlot("c8", "h1:8041", "h1", "/r1", List.of(0, 1), List.of(0, 0))), 29_500);
    assertThat(plan.environment("c7")).isEqualTo(Map.ofEntries(Map.entry("RANK", "1"), Map.entry("WORLD_SIZE", "3"),
        Map.entry("LOCAL_RANK", "1"), Map.entry("LOCAL_WORLD_SIZE", "2"), Map.entry("NODE_RANK", "1"),
        Map.entry("NNODES", "3"), Map.entry("MASTER_ADDR", "h1"), Map.entry("MASTER_PORT", "29500"),
        Map.entry("PET_NNODES", "3"), Map.entry("PET_NODE_RANK", "1"), Map.entry("PET_MASTER_ADDR", "h1"),
        Map.entry("PET_MASTER_PORT", "29500"), Map.entry("CUDA_VISIBLE_DEVICES", "6,7")));
    assertThat(plan.environment("c9")).containsEntry("RANK", "2").containsEntry("LOCAL_RANK", "0")
        .containsEntry("CUDA_VISIBLE_DEVICES", "3");
    assertThat(plan.describe().get(0)).isEqualTo("rank 0: h1:8041 /r1 GPUs [0, 1] (c8)");
  }

  /** Two NodeManagers on one host (a test cluster) are two nodes: local ranks count per node, not per host name. */
  @Test
  void nodesAreNodeManagersNotHostNames() {
    RankPlan plan = new RankPlan(List.of(
        new WorkerSlot("c2", "localhost:2002", "localhost", "/r1", List.of(0), List.of()),
        new WorkerSlot("c1", "localhost:2001", "localhost", "/r1", List.of(0), List.of())), 29_500);
    assertThat(plan.environment("c1")).containsEntry("RANK", "0").containsEntry("LOCAL_RANK", "0")
        .containsEntry("LOCAL_WORLD_SIZE", "1").containsEntry("MASTER_ADDR", "localhost");
    assertThat(plan.environment("c2")).containsEntry("RANK", "1").containsEntry("LOCAL_RANK", "0");
  }
}
