package io.spindle.nm;

import io.spindle.core.placement.NvlinkIslands;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Chooses which devices of this node a container gets, by the rule the scheduler uses, so that the devices the
 * NodeManager hands out are the ones the scheduler counted.
 */
public final class GpuAllocator {

  private GpuAllocator() {}

  /**
   * What is left of one shared GPU for another share.
   *
   * @param freeMilli compute not held by shares, in thousandths (its free share devices)
   * @param freeMemoryMb memory not held by shares this node knows the amount of
   */
  public record ShareRoom(int gpuIndex, int freeMilli, long freeMemoryMb) {

    public boolean fits(int milli, long memoryMb) {
      return milli > 0 && milli <= freeMilli && memoryMb <= freeMemoryMb;
    }

    @Override
    public String toString() {
      return "GPU " + gpuIndex + ": " + freeMilli + " milli, " + freeMemoryMb + " MB free";
    }
  }

  /**
   * The GPU a share goes to by the scheduler's within-node rule: the one it fits most tightly (least compute left
   * after it), ties to the lowest index. Partly used GPUs fill before idle ones, which stay whole.
   *
   * @param rooms the node's shared GPUs, in any order
   * @return empty when it fits none
   */
  public static Optional<ShareRoom> chooseShareGpu(List<ShareRoom> rooms, int milli, long memoryMb) {
    return rooms.stream().filter(r -> r.fits(milli, memoryMb))
        .min(Comparator.comparingInt((ShareRoom r) -> r.freeMilli() - milli).thenComparingInt(ShareRoom::gpuIndex));
  }

  /**
   * Chooses {@code count} whole GPUs by the scheduler's own rule ({@link NvlinkIslands}: keep NVLink islands whole).
   *
   * @param free the free whole GPUs, in any order
   * @return the chosen GPUs in index order, or an empty list when fewer than {@code count} are free
   */
  public static List<DiscoveredGpu> chooseWholeGpus(List<DiscoveredGpu> free, int count) {
    if (count <= 0 || count > free.size()) {
      return List.of();
    }
    List<DiscoveredGpu> ordered = new ArrayList<>(free);
    ordered.sort(Comparator.comparingInt(DiscoveredGpu::index));
    int[] islands = ordered.stream().mapToInt(DiscoveredGpu::nvlinkIsland).toArray();
    boolean[] all = new boolean[islands.length];
    Arrays.fill(all, true);
    List<DiscoveredGpu> chosen = new ArrayList<>(count);
    for (int position : NvlinkIslands.choose(islands, all, count)) {
      chosen.add(ordered.get(position));
    }
    chosen.sort(Comparator.comparingInt(DiscoveredGpu::index));
    return List.copyOf(chosen);
  }

  /**
   * Chooses {@code count} existing MIG instances of {@code profileName}, preferring GPUs that already have
   * instances in use (then lower GPU index, then lower start): packing onto busy GPUs keeps idle GPUs idle, and an
   * idle GPU is one the scheduler can re-partition.
   *
   * @param gpus the node's GPUs
   * @param held UUIDs of instances held by containers or running work; they are neither chosen nor free
   * @return the chosen instances, or an empty list when fewer than {@code count} are free
   */
  public static List<DiscoveredMigInstance> chooseMigInstances(List<DiscoveredGpu> gpus, String profileName,
      int count, Set<String> held) {
    if (count <= 0) {
      return List.of();
    }
    List<DiscoveredMigInstance> free = new ArrayList<>();
    Map<Integer, Integer> inUse = new TreeMap<>();
    for (DiscoveredGpu g : gpus) {
      if (!g.migEnabled()) {
        continue;
      }
      for (DiscoveredMigInstance i : g.migInstances()) {
        boolean taken = i.busy() || (i.uuid() != null && held.contains(i.uuid()));
        if (taken) {
          inUse.merge(g.index(), 1, Integer::sum);
        } else if (i.usable() && i.profileName().equals(profileName)) {
          free.add(i);
        }
      }
    }
    if (free.size() < count) {
      return List.of();
    }
    List<DiscoveredMigInstance> chosen = new ArrayList<>(count);
    while (chosen.size() < count) {
      Comparator<DiscoveredMigInstance> preference = Comparator
          .comparingInt((DiscoveredMigInstance i) -> -inUse.getOrDefault(i.gpuIndex(), 0))
          .thenComparingInt(DiscoveredMigInstance::gpuIndex)
          .thenComparingInt(i -> i.placement().start());
      DiscoveredMigInstance best = free.stream().min(preference).orElseThrow();
      free.remove(best);
      chosen.add(best);
      inUse.merge(best.gpuIndex(), 1, Integer::sum);
    }
    return List.copyOf(chosen);
  }
}
