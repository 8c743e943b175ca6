package io.spindle.core.placement;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.List;

/**
 * Places containers on clusters with GPUs in a sharing mode, fragmentation first.
 *
 * <p>Shares are found through an index of shared GPUs ordered by free compute ({@link FreeComputeIndex}): a walk
 * from the share's size starts at the GPUs it fits most tightly, and the first {@code candidates} distinct nodes
 * from there (with the CPU, memory, partition and isolation the share needs) are the candidates — never a scan of
 * the cluster. Whole-GPU
 * and CPU-only containers get their candidates from {@link ClusterState}'s best-fit index. Among the candidates the
 * container goes where {@link FragmentationScore} grows least for the recent demand mix; ties go to the earlier
 * candidate, i.e. the tighter fit.
 */
final class SharePlacer {

  private final PerModelIndex<SharedGpu, FreeComputeIndex> byFree =
      new PerModelIndex<>(() -> new FreeComputeIndex(this::inSlot), g -> g.gpu.model().name());
  /** Shared GPUs by slot; a GPU that leaves frees its slot for the next to register. */
  private SharedGpu[] slots = new SharedGpu[64];
  /**
   * Per slot, the free vcores and memory of the GPU's node when it was last indexed: a walk rejects GPUs of nodes
   * without the CPU or memory a share needs from these arrays, without reading the GPU or its node (best fit packs
   * nodes, so the tightest GPUs are mostly on nodes that are full).
   */
  private int[] slotNodeVcores = new int[64];
  private long[] slotNodeMemoryMb = new long[64];
  private final FreeComputeIndex.SlotBitmap freeSlots = new FreeComputeIndex.SlotBitmap();
  private int slotsUsed;
  private final GpuDemandMix mix;
  private final FragmentationScore scratch = new FragmentationScore();
  private final int candidates;
  private int sharedGpus;

  SharePlacer(GpuDemandMix mix, int candidates) {
    if (candidates <= 0) {
      throw new IllegalArgumentException("share placement candidates must be positive: " + candidates);
    }
    this.mix = mix;
    this.candidates = candidates;
  }

  int candidates() {
    return candidates;
  }

  /** Whether any GPU of the cluster is in a sharing mode: only then does fragmentation steer placement. */
  boolean active() {
    return sharedGpus > 0;
  }

  void asked(Resources shape, long containers) {
    mix.record(shape, containers);
  }

  void nodeAdded(NodeState n) {
    sharedGpus += n.sharedGpus().size();
    for (SharedGpu g : n.sharedGpus()) {
      g.slot = takeSlot();
      slots[g.slot] = g;
      byFree.registered(g.gpu.model().name(), 1);
    }
  }

  void nodeRemoved(NodeState n) {
    sharedGpus -= n.sharedGpus().size();
    for (SharedGpu g : n.sharedGpus()) {
      byFree.unregistered(g.gpu.model().name(), 1);
      slots[g.slot] = null;
      freeSlots.set(g.slot);
    }
  }

  /** The lowest free slot: slots are reused, so the index's bitmaps stay as large as the cluster, not its history. */
  private int takeSlot() {
    int slot = freeSlots.next(0);
    if (slot >= 0) {
      freeSlots.clear(slot);
      return slot;
    }
    if (slotsUsed == slots.length) {
      slots = java.util.Arrays.copyOf(slots, slots.length * 2);
      slotNodeVcores = java.util.Arrays.copyOf(slotNodeVcores, slots.length);
      slotNodeMemoryMb = java.util.Arrays.copyOf(slotNodeMemoryMb, slots.length);
    }
    return slotsUsed++;
  }

  private SharedGpu inSlot(int slot) {
    return slots[slot];
  }

  /**
   * Brings a node's GPUs up to date in the index. Only GPUs whose free compute changed move: a container takes one
   * GPU of eight, and re-indexing all of them on every start and end was most of a placement's cost.
   */
  void index(NodeState n) {
    for (SharedGpu g : n.sharedGpus()) {
      slotNodeVcores[g.slot] = n.freeVcores;
      slotNodeMemoryMb[g.slot] = n.freeMemoryMb;
      int now = g.freeMilli();
      if (g.indexed && g.indexedFree == now) {
        continue;
      }
      if (g.indexed) {
        drop(g);
      }
      g.indexedFree = now;
      if (now > 0) {
        byFree.add(g);
        g.indexed = true;
      }
    }
  }

  /**
   * Nothing to do before a node changes: entries are ordered by the free compute they were indexed with, so they
   * stay where they are until {@link #index} moves those that changed.
   */
  void unindex(NodeState n) {}

  /** Takes a node's GPUs out of the index (the node left, or a gang reservation holds it). */
  void remove(NodeState n) {
    for (SharedGpu g : n.sharedGpus()) {
      if (g.indexed) {
        drop(g);
      }
    }
  }

  private void drop(SharedGpu g) {
    byFree.remove(g);
    g.indexed = false;
  }

  /**
   * The best place for one share, or {@code null} when no shared GPU has room for it now. Candidates are the GPUs it
   * fits most tightly, from the index of shared GPUs, one per node and room (a node's GPUs with the same room are one
   * choice, and taking them all left the candidates on one node). Adding the idle GPUs of best-fit nodes (fewest
   * free GPUs) as candidates was tried: on OpenB it placed less (default / gpushare40 / multigpu20 at 100% arrived:
   * 95.24 / 93.85 / 95.44% against 95.58 / 94.16 / 95.83%), so it is not done.
   */
  Placement findShare(Resources shape) {
    List<SharedGpu> options = new ArrayList<>();
    int minFree = Math.max(1, shape.gpuMilli());
    if (shape.models().isAny()) {
      collect(byFree.all(), minFree, shape, options);
    } else {
      for (String model : shape.models().names()) {
        FreeComputeIndex set = byFree.ofModel(model);
        if (set != null) {
          collect(set, minFree, shape, options);
        }
      }
    }
    SharedGpu best = bestGpu(options, shape);
    if (best == null) {
      return null;
    }
    return new Placement(best.node.id(), List.of(GpuSlot.shareOf(best.gpu.index())),
        charge(shape, best.gpu.model()));
  }

  /** Each GPU is in one model's index (and once in the index of all), so a walk or walks never repeat a GPU. */
  private void collect(FreeComputeIndex set, int minFree, Resources shape, List<SharedGpu> out) {
    int taken = 0;
    SharedGpu last = null;
    FreeComputeIndex.SlotWalk walk = set.slotsFrom(minFree);
    int slot;
    while (taken < candidates && (slot = walk.next()) >= 0) {
      if (slotNodeVcores[slot] < shape.vcores() || slotNodeMemoryMb[slot] < shape.memoryMb()) {
        continue; // fitsCpuAndMemory below would say no
      }
      SharedGpu g = slots[slot];
      if (last != null && last.node == g.node && last.indexedFree == g.indexedFree) {
        continue; // The same choice as the last candidate: GPUs of one node with the same room.
      }
      if (g.node.reservation == null && g.fits(shape) && g.node.fitsCpuAndMemory(shape)) {
        out.add(g);
        last = g;
        taken++;
      }
    }
  }

  private SharedGpu bestGpu(List<SharedGpu> options, Resources shape) {
    if (options.isEmpty()) {
      return null;
    }
    List<GpuDemandMix.Weighted> types = mix.types();
    if (options.size() == 1 || types.isEmpty()) {
      return options.get(0);
    }
    SharedGpu best = null;
    double bestDelta = Double.POSITIVE_INFINITY;
    int[] at = new int[1];
    int[] milli = new int[1];
    long[] memory = new long[1];
    for (SharedGpu g : options) {
      scratch.load(g.node);
      at[0] = FragmentationScore.loadedIndex(g.node, g.position);
      milli[0] = shape.shareMilli(g.gpu.model());
      memory[0] = shape.gpuMemoryMb();
      double delta = coarse(scratch.delta(mix.table(), shape.vcores(), shape.memoryMb(), at, milli, memory, 1));
      if (delta < bestDelta - 1e-9) {
        best = g;
        bestDelta = delta;
      }
    }
    return best;
  }

  /**
   * The candidate where placing one container of the shape adds the least fragmentation; the earlier one on ties.
   * {@code null} when there is none.
   */
  NodeState best(List<NodeState> options, Resources shape) {
    if (options.isEmpty()) {
      return null;
    }
    List<GpuDemandMix.Weighted> types = mix.types();
    if (options.size() == 1 || types.isEmpty()) {
      return options.get(0);
    }
    NodeState best = null;
    double bestDelta = Double.POSITIVE_INFINITY;
    for (NodeState n : options) {
      double delta = coarse(delta(n, shape));
      if (delta < bestDelta - 1e-9) {
        best = n;
        bestDelta = delta;
      }
      if (shape.gpus() == 0 && bestDelta <= 0) {
        break; // Taking CPU and memory never lowers the measure: nothing after this fits better.
      }
    }
    return best;
  }

  private static final int[] NO_GPUS = new int[0];

  private double delta(NodeState n, Resources shape) {
    scratch.load(n);
    int[] at = shape.gpus() > 0 ? n.chooseWholePositions(shape.gpus()) : NO_GPUS;
    int[] milli = new int[at.length];
    for (int k = 0; k < at.length; k++) {
      at[k] = FragmentationScore.loadedIndex(n, at[k]);
      milli[k] = -1;
    }
    return scratch.delta(mix.table(), shape.vcores(), shape.memoryMb(), at, milli, new long[at.length], at.length);
  }

  /**
   * Growth of the measure is compared in steps of 5 thousandths of a GPU: candidates within a step count as equal
   * and the tighter fit (the earlier candidate) wins. Exact comparison opens fresh GPUs for gains too small to last.
   * On OpenB at 100% arrived (default / gpushare40 / multigpu20, 8 candidates, before candidates were one per node
   * and room): steps of 5 place 95.53 / 94.10 /
   * 95.79%, 10: 95.53 / 94.08 / 95.76%, 20: 95.49 / 94.09 / 95.74%; with 16 candidates exact comparison placed
   * less than 20 before CPU was counted in the measure.
   */
  private static final double GRAIN = 5;

  private static double coarse(double d) {
    return Math.floor(d / GRAIN);
  }

  /** What one share costs on a GPU of the model: the container's CPU and memory and the share's GPU-equivalents. */
  static ResourceVector charge(Resources shape, GpuModel model) {
    return shape.baseVector().plus(new ResourceVector(0, 0, shape.shareUnits(model)));
  }
}
