package io.spindle.nm;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.placement.Placement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class GpuAllocatorTest {

  private static final GpuModel H100 = GpuModelCatalog.builtIn().find("H100-80GB").orElseThrow();
  private static final GpuModel A100 = GpuModelCatalog.builtIn().find("A100-40GB").orElseThrow();

  @Test
  void bestFittingIslandWins() {
    // Islands {0,1,2,3} and {4,5,6,7}; GPU 1 is taken, so island 0 has 3 free and island 1 has 4.
    List<DiscoveredGpu> free = wholeGpus(new int[] {0, 0, 0, 0, 1, 1, 1, 1}, Set.of(1));

    assertThat(indices(GpuAllocator.chooseWholeGpus(free, 3))).containsExactly(0, 2, 3);
    assertThat(indices(GpuAllocator.chooseWholeGpus(free, 4))).containsExactly(4, 5, 6, 7);
    assertThat(indices(GpuAllocator.chooseWholeGpus(free, 1))).containsExactly(0);
  }

  @Test
  void tiesGoToTheLowerIsland() {
    List<DiscoveredGpu> free = wholeGpus(new int[] {0, 0, 0, 0, 1, 1, 1, 1}, Set.of());

    assertThat(indices(GpuAllocator.chooseWholeGpus(free, 2))).containsExactly(0, 1);
  }

  @Test
  void spansAsFewIslandsAsPossibleLargestFirst() {
    // Islands of 2, 3 and 1 free GPUs; 4 GPUs: the island of 3, then the island of 2.
    List<DiscoveredGpu> free = wholeGpus(new int[] {0, 0, 1, 1, 1, 2}, Set.of());

    assertThat(indices(GpuAllocator.chooseWholeGpus(free, 4))).containsExactly(0, 2, 3, 4);
    assertThat(GpuAllocator.chooseWholeGpus(free, 7)).isEmpty();
    assertThat(GpuAllocator.chooseWholeGpus(free, 0)).isEmpty();
  }

  /** The node's choice must be the scheduler's: the same free GPUs give the same GPUs as core placement. */
  @Test
  void agreesWithTheSchedulersPlacement() {
    Random random = new Random(20250304);
    for (int round = 0; round < 300; round++) {
      int gpuCount = 1 + random.nextInt(8);
      int[] islands = new int[gpuCount];
      for (int i = 0; i < gpuCount; i++) {
        islands[i] = random.nextInt(1 + random.nextInt(4));
      }
      List<Gpu> gpus = new ArrayList<>();
      for (int i = 0; i < gpuCount; i++) {
        gpus.add(new Gpu(i, H100, islands[i], false));
      }
      ClusterState cluster = new ClusterState(Topology.singleRack());
      cluster.addNode(new Node(NodeId.of("n" + round), Topology.DEFAULT_RACK, 1 << 20, 256, gpus));
      List<GpuSlot> taken = new ArrayList<>();
      List<Integer> takenIndices = new ArrayList<>();
      for (int i = 0; i < gpuCount; i++) {
        if (random.nextInt(3) == 0) {
          taken.add(GpuSlot.whole(i));
          takenIndices.add(i);
        }
      }
      if (!taken.isEmpty()) {
        Resources busy = Resources.of(0, 0).withGpus(taken.size());
        cluster.commit(busy, new Placement(NodeId.of("n" + round), taken, ResourceVector.of(0, 0, taken.size())));
      }
      List<DiscoveredGpu> free = wholeGpus(islands, Set.copyOf(takenIndices));
      for (int want = 1; want <= free.size(); want++) {
        Placement scheduler = cluster.find(Resources.of(1, 1).withGpus(want));
        List<Integer> expected = scheduler.gpus().stream().map(GpuSlot::gpuIndex).sorted().toList();
        assertThat(indices(GpuAllocator.chooseWholeGpus(free, want)))
            .as("round %d: islands %s, taken %s, want %d", round, List.of(islands), takenIndices, want)
            .isEqualTo(expected);
      }
    }
  }

  @Test
  void aShareGoesWhereItFitsMostTightlyThenToTheLowestIndex() {
    List<GpuAllocator.ShareRoom> rooms = List.of(new GpuAllocator.ShareRoom(0, 1000, 81_920),
        new GpuAllocator.ShareRoom(1, 600, 40_000), new GpuAllocator.ShareRoom(2, 300, 81_920),
        new GpuAllocator.ShareRoom(3, 600, 81_920));

    assertThat(GpuAllocator.chooseShareGpu(rooms, 250, 0)).map(GpuAllocator.ShareRoom::gpuIndex).contains(2);
    assertThat(GpuAllocator.chooseShareGpu(rooms, 300, 0)).map(GpuAllocator.ShareRoom::gpuIndex).contains(2);
    // GPUs 1 and 3 leave the same 100 milli; the lower index wins.
    assertThat(GpuAllocator.chooseShareGpu(rooms, 500, 0)).map(GpuAllocator.ShareRoom::gpuIndex).contains(1);
    // GPU 1 has the compute but not the memory.
    assertThat(GpuAllocator.chooseShareGpu(rooms, 500, 50_000)).map(GpuAllocator.ShareRoom::gpuIndex).contains(3);
    assertThat(GpuAllocator.chooseShareGpu(rooms, 1000, 0)).map(GpuAllocator.ShareRoom::gpuIndex).contains(0);
    assertThat(GpuAllocator.chooseShareGpu(rooms, 1001, 0)).isEmpty();
    assertThat(GpuAllocator.chooseShareGpu(rooms, 700, 90_000)).isEmpty();
    assertThat(GpuAllocator.chooseShareGpu(List.of(), 1, 0)).isEmpty();
  }

  @Test
  void migInstancePacksOntoGpusAlreadyInUse() {
    // GPU 0: 1g.5gb@0 free, 3g.20gb@4 running work. GPU 1: three 1g.5gb instances, nothing in use.
    DiscoveredGpu gpu0 = migGpu(0, instance(0, "MIG-a", "1g.5gb", 0, false), instance(0, "MIG-b", "3g.20gb", 4, true));
    DiscoveredGpu gpu1 = migGpu(1, instance(1, "MIG-c", "1g.5gb", 0, false), instance(1, "MIG-d", "1g.5gb", 1, false),
        instance(1, "MIG-f", "1g.5gb", 2, false));
    List<DiscoveredGpu> gpus = List.of(gpu0, gpu1);

    assertThat(uuids(GpuAllocator.chooseMigInstances(gpus, "1g.5gb", 1, Set.of()))).containsExactly("MIG-a");
    // Once containers hold two instances of GPU 1, it is the GPU most in use.
    assertThat(uuids(GpuAllocator.chooseMigInstances(gpus, "1g.5gb", 1, Set.of("MIG-d", "MIG-f"))))
        .containsExactly("MIG-c");
    // Taking MIG-a makes GPU 0 the most used, so the second instance comes from it too if it can; it cannot.
    assertThat(uuids(GpuAllocator.chooseMigInstances(gpus, "1g.5gb", 2, Set.of()))).containsExactly("MIG-a", "MIG-c");
  }

  @Test
  void migInstanceOfTheRightProfileOnlyAndNeverAHeldOne() {
    DiscoveredGpu gpu0 = migGpu(0, instance(0, "MIG-a", "2g.10gb", 0, false), instance(0, "MIG-b", "3g.20gb", 4, false));
    DiscoveredGpu gpu1 = migGpu(1, instance(1, "MIG-c", "3g.20gb", 0, false), instance(1, "MIG-d", "2g.10gb", 4, false),
        instance(1, "MIG-e", "1g.5gb", 6, false));

    assertThat(uuids(GpuAllocator.chooseMigInstances(List.of(gpu0, gpu1), "3g.20gb", 1, Set.of("MIG-e"))))
        .containsExactly("MIG-c");
    assertThat(GpuAllocator.chooseMigInstances(List.of(gpu0, gpu1), "3g.20gb", 1, Set.of("MIG-b", "MIG-c")))
        .isEmpty();
    assertThat(GpuAllocator.chooseMigInstances(List.of(gpu0, gpu1), "4g.20gb", 1, Set.of())).isEmpty();
  }

  @Test
  void instanceWithoutComputeInstanceIsNeverHandedOut() {
    DiscoveredGpu gpu0 = migGpu(0, new DiscoveredMigInstance(0, null, at("1g.5gb", 0), 7, -1, false));

    assertThat(GpuAllocator.chooseMigInstances(List.of(gpu0), "1g.5gb", 1, Set.of())).isEmpty();
  }

  private static List<DiscoveredGpu> wholeGpus(int[] islands, Set<Integer> taken) {
    List<DiscoveredGpu> free = new ArrayList<>();
    for (int i = 0; i < islands.length; i++) {
      if (!taken.contains(i)) {
        free.add(new DiscoveredGpu(i, "GPU-" + i, H100, false, islands[i], i, "bus" + i, false, List.of()));
      }
    }
    return free;
  }

  private static DiscoveredGpu migGpu(int index, DiscoveredMigInstance... instances) {
    boolean busy = List.of(instances).stream().anyMatch(DiscoveredMigInstance::busy);
    return new DiscoveredGpu(index, "GPU-" + index, A100, true, 0, index, "bus" + index, busy, List.of(instances));
  }

  private static DiscoveredMigInstance instance(int gpu, String uuid, String profile, int start, boolean busy) {
    return new DiscoveredMigInstance(gpu, uuid, at(profile, start), start + 1, 0, busy);
  }

  private static MigPlacement at(String profile, int start) {
    return new MigPlacement(A100.profile(profile).orElseThrow(), start);
  }

  private static List<Integer> indices(List<DiscoveredGpu> gpus) {
    return gpus.stream().map(DiscoveredGpu::index).toList();
  }

  private static List<String> uuids(List<DiscoveredMigInstance> instances) {
    return instances.stream().map(DiscoveredMigInstance::uuid).toList();
  }
}
