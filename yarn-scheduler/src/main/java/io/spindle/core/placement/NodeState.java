package io.spindle.core.placement;

import io.spindle.core.model.Gpu;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Node;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What is free on one node right now. Mutable, owned by {@link ClusterState}, which re-indexes the node around
 * every change (the index orders nodes by these very fields).
 */
final class NodeState {

  final Node node;
  final int seq;
  long freeMemoryMb;
  int freeVcores;
  /** Per GPU position in {@code node.gpus()}: taken by a whole-GPU container (non-MIG GPUs only). */
  private final boolean[] wholeTaken;
  int freeWholeGpus;
  /** Per GPU position: instances in use on a MIG-mode GPU, {@code null} for a non-MIG GPU. */
  private final MigLayout[] mig;
  int freeMigSlices;
  /** Per GPU position: its NVLink island as a dense index 0..islandCount-1, in order of island id. */
  private final int[] island;
  private final int islandCount;

  /** A key-only instance for ceiling lookups in {@link ClusterState}'s ordered sets. */
  static NodeState probe(int freeWholeGpus, long freeMemoryMb) {
    return new NodeState(freeWholeGpus, freeMemoryMb);
  }

  private NodeState(int freeWholeGpus, long freeMemoryMb) {
    this.node = null;
    this.seq = Integer.MIN_VALUE;
    this.freeWholeGpus = freeWholeGpus;
    this.freeMemoryMb = freeMemoryMb;
    this.freeVcores = Integer.MIN_VALUE;
    this.wholeTaken = new boolean[0];
    this.mig = new MigLayout[0];
    this.island = new int[0];
    this.islandCount = 0;
  }

  NodeState(Node node, int seq) {
    this.node = node;
    this.seq = seq;
    this.freeMemoryMb = node.memoryMb();
    this.freeVcores = node.vcores();
    List<Gpu> gpus = node.gpus();
    this.wholeTaken = new boolean[gpus.size()];
    this.mig = new MigLayout[gpus.size()];
    int[] islandIds = gpus.stream().mapToInt(Gpu::nvlinkIsland).distinct().sorted().toArray();
    this.islandCount = islandIds.length;
    this.island = new int[gpus.size()];
    for (int i = 0; i < gpus.size(); i++) {
      island[i] = java.util.Arrays.binarySearch(islandIds, gpus.get(i).nvlinkIsland());
    }
    for (int i = 0; i < gpus.size(); i++) {
      Gpu g = gpus.get(i);
      if (g.migEnabled()) {
        mig[i] = MigLayout.empty(g.model());
        freeMigSlices += g.model().memorySlices();
      } else {
        freeWholeGpus++;
      }
    }
  }

  String id() {
    return node.id();
  }

  boolean hasMigGpus() {
    for (MigLayout m : mig) {
      if (m != null) {
        return true;
      }
    }
    return false;
  }

  boolean fitsCpuAndMemory(Resources shape) {
    return freeMemoryMb >= shape.memoryMb() && freeVcores >= shape.vcores();
  }

  /**
   * Chooses whole GPUs keeping NVLink islands whole: the island with the fewest free GPUs that still holds the
   * request (best fit), else the fewest islands, largest first. Returns {@code null} if not enough are free.
   */
  List<GpuSlot> chooseWholeGpus(int count) {
    if (count > freeWholeGpus) {
      return null;
    }
    int[] freePerIsland = new int[islandCount];
    for (int i = 0; i < wholeTaken.length; i++) {
      if (mig[i] == null && !wholeTaken[i]) {
        freePerIsland[island[i]]++;
      }
    }
    int best = -1;
    for (int k = 0; k < islandCount; k++) {
      if (freePerIsland[k] >= count && (best < 0 || freePerIsland[k] < freePerIsland[best])) {
        best = k;
      }
    }
    List<GpuSlot> slots = new ArrayList<>(count);
    if (best >= 0) {
      takeFromIsland(best, count, slots);
      return slots;
    }
    // No island holds it: span as few islands as possible, largest first (ties: lower island first).
    boolean[] used = new boolean[islandCount];
    while (slots.size() < count) {
      int largest = -1;
      for (int k = 0; k < islandCount; k++) {
        if (!used[k] && freePerIsland[k] > 0 && (largest < 0 || freePerIsland[k] > freePerIsland[largest])) {
          largest = k;
        }
      }
      used[largest] = true;
      takeFromIsland(largest, count - slots.size(), slots);
    }
    return slots;
  }

  private void takeFromIsland(int islandIndex, int max, List<GpuSlot> into) {
    int taken = 0;
    for (int i = 0; i < wholeTaken.length && taken < max; i++) {
      if (island[i] == islandIndex && mig[i] == null && !wholeTaken[i]) {
        into.add(GpuSlot.whole(node.gpus().get(i).index()));
        taken++;
      }
    }
  }

  /**
   * Chooses {@code count} instances of {@code profileName}: each on the MIG GPU with the fewest free memory slices
   * that can still hold it (fill partly used GPUs first), at its first free legal start. {@code null} if they do
   * not all fit.
   */
  List<GpuSlot> chooseMigInstances(String profileName, int count) {
    MigLayout[] trial = mig.clone();
    List<GpuSlot> slots = new ArrayList<>(count);
    for (int n = 0; n < count; n++) {
      int bestGpu = -1;
      int bestStart = -1;
      for (int i = 0; i < trial.length; i++) {
        if (trial[i] == null) {
          continue;
        }
        MigProfile profile = trial[i].model().profile(profileName).orElse(null);
        if (profile == null) {
          continue;
        }
        int start = trial[i].firstFreeStart(profile);
        if (start >= 0 && (bestGpu < 0 || trial[i].freeMemorySlices() < trial[bestGpu].freeMemorySlices())) {
          bestGpu = i;
          bestStart = start;
        }
      }
      if (bestGpu < 0) {
        return null;
      }
      MigPlacement p = new MigPlacement(trial[bestGpu].model().profile(profileName).orElseThrow(), bestStart);
      trial[bestGpu] = trial[bestGpu].with(p);
      slots.add(new GpuSlot(node.gpus().get(bestGpu).index(), p));
    }
    return slots;
  }

  /** Whether at least one instance of the profile fits now. */
  boolean canPlaceMig(MigProfile profile) {
    for (MigLayout m : mig) {
      if (m != null && m.model().profile(profile.name()).isPresent() && m.firstFreeStart(profile) >= 0) {
        return true;
      }
    }
    return false;
  }

  void take(Resources shape, List<GpuSlot> slots) {
    freeMemoryMb -= shape.memoryMb();
    freeVcores -= shape.vcores();
    for (GpuSlot s : slots) {
      int position = position(s.gpuIndex());
      if (s.mig() == null) {
        wholeTaken[position] = true;
        freeWholeGpus--;
      } else {
        mig[position] = mig[position].with(s.mig());
        freeMigSlices -= s.mig().profile().memorySlices();
      }
    }
  }

  void give(Resources shape, List<GpuSlot> slots) {
    freeMemoryMb += shape.memoryMb();
    freeVcores += shape.vcores();
    for (GpuSlot s : slots) {
      int position = position(s.gpuIndex());
      if (s.mig() == null) {
        wholeTaken[position] = false;
        freeWholeGpus++;
      } else {
        mig[position] = mig[position].without(s.mig());
        freeMigSlices += s.mig().profile().memorySlices();
      }
    }
  }

  /** The MIG instances in use, by GPU index (for snapshots and tests). */
  Map<Integer, MigLayout> migLayouts() {
    Map<Integer, MigLayout> out = new LinkedHashMap<>();
    for (int i = 0; i < mig.length; i++) {
      if (mig[i] != null) {
        out.put(node.gpus().get(i).index(), mig[i]);
      }
    }
    return out;
  }

  private int position(int gpuIndex) {
    List<Gpu> gpus = node.gpus();
    for (int i = 0; i < gpus.size(); i++) {
      if (gpus.get(i).index() == gpuIndex) {
        return i;
      }
    }
    throw new IllegalStateException("node " + node.id() + " has no GPU " + gpuIndex);
  }
}
