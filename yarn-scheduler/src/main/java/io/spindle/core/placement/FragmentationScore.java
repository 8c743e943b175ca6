package io.spindle.core.placement;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.Resources;
import java.util.List;

/**
 * How much of a node's free GPU capacity the work that keeps arriving cannot use: the fragmentation measure of
 * Weng et al. ("Beware of Fragmentation", ATC'23), over the recent {@link GpuDemandMix}. For each recently asked
 * shape, weighted by how often it was asked, the free GPU compute (in thousandths) that shape could not take:
 * all of it when the node lacks the CPU, memory, model or idle GPUs for the shape; for a whole-GPU shape, the free
 * compute of partly used GPUs; for a share, the GPUs with less room than the share (or that cannot be shared).
 * Placement puts a container where the measure grows least.
 *
 * <p>A scratch object: it holds one node's free capacity at a time and is not thread-safe (placement runs on the
 * engine's thread).
 */
final class FragmentationScore {

  private static final int MILLI = Resources.MILLI_PER_GPU;

  private int gpus;
  private int[] free = new int[8];
  private long[] freeMemory = new long[8];
  /** 0 exclusive (whole only), 1 time-slice, 2 MPS. */
  private int[] kind = new int[8];
  private boolean[] idle = new boolean[8];
  private long vcores;
  private long memoryMb;
  private GpuModel model;
  /** What {@link #delta} changes, kept to put back: reused, since it runs for every candidate. */
  private int[] oldFree = new int[8];
  private long[] oldMem = new long[8];
  private boolean[] oldIdle = new boolean[8];

  /** Loads a node's free capacity (its GPUs outside MIG; MIG GPUs have their own packing). */
  void load(NodeState n) {
    List<io.spindle.core.model.Gpu> list = n.node.gpus();
    if (free.length < list.size()) {
      free = new int[list.size()];
      freeMemory = new long[list.size()];
      kind = new int[list.size()];
      idle = new boolean[list.size()];
    }
    gpus = 0;
    int sharedAt = 0;
    List<SharedGpu> shared = n.sharedGpus();
    for (int i = 0; i < list.size(); i++) {
      io.spindle.core.model.Gpu g = list.get(i);
      if (g.migEnabled()) {
        continue;
      }
      if (sharedAt < shared.size() && shared.get(sharedAt).position == i) {
        SharedGpu s = shared.get(sharedAt++);
        free[gpus] = s.freeMilli();
        freeMemory[gpus] = s.freeMemoryMb();
        kind[gpus] = g.sharing().ordinal();
        idle[gpus] = s.idle();
      } else {
        boolean available = n.wholeFree(i);
        free[gpus] = available ? MILLI : 0;
        freeMemory[gpus] = available ? g.model().memoryMb() : 0;
        kind[gpus] = 0;
        idle[gpus] = available;
      }
      gpus++;
    }
    vcores = n.freeVcores;
    memoryMb = n.freeMemoryMb;
    model = n.node.gpuModel();
  }

  /** The measure for the loaded capacity. */
  double score(List<GpuDemandMix.Weighted> mix) {
    int total = 0;
    int idleCount = 0;
    for (int i = 0; i < gpus; i++) {
      total += free[i];
      idleCount += idle[i] ? 1 : 0;
    }
    if (total == 0) {
      return 0;
    }
    double sum = 0;
    for (GpuDemandMix.Weighted w : mix) {
      sum += w.weight() * unusable(w.shape(), total, idleCount);
    }
    return sum;
  }

  private int unusable(Resources m, int total, int idleCount) {
    if (vcores < m.vcores() || memoryMb < m.memoryMb() || !m.wantsGpu() || !m.models().accepts(model)) {
      return total;
    }
    if (m.gpus() > 0) {
      if (idleCount < m.gpus()) {
        return total;
      }
      int partial = 0;
      for (int i = 0; i < gpus; i++) {
        partial += idle[i] ? 0 : free[i];
      }
      return partial;
    }
    int need = m.shareMilli(model);
    int unusable = 0;
    for (int i = 0; i < gpus; i++) {
      unusable += takes(m, i, free[i], freeMemory[i], need) ? 0 : free[i];
    }
    return unusable;
  }

  /**
   * How much the measure grows if a container takes {@code v} vcores, {@code mem} MB and, on each loaded GPU
   * {@code at[i]}, {@code milli[i]} thousandths and {@code gpuMem[i]} MB ({@code milli[i] < 0}: the whole GPU). Equal
   * to {@code score} after the change minus {@code score} before, but computed from what changes: per shape O(1)
   * unless the change makes the node unable to hold it (then O(GPUs)), so candidates cost O(shapes), not
   * O(shapes x GPUs). Leaves the loaded capacity as it was.
   */
  double delta(GpuDemandMix.Table mix, long v, long mem, int[] at, int[] milli, long[] gpuMem, int n) {
    int totalBefore = 0;
    int idleBefore = 0;
    int partialBefore = 0;
    for (int i = 0; i < gpus; i++) {
      totalBefore += free[i];
      idleBefore += idle[i] ? 1 : 0;
      partialBefore += idle[i] ? 0 : free[i];
    }
    if (oldFree.length < n) {
      oldFree = new int[n];
      oldMem = new long[n];
      oldIdle = new boolean[n];
    }
    int totalAfter = totalBefore;
    int idleAfter = idleBefore;
    int partialAfter = partialBefore;
    for (int k = 0; k < n; k++) {
      int g = at[k];
      oldFree[k] = free[g];
      oldMem[k] = freeMemory[g];
      oldIdle[k] = idle[g];
      int nf = milli[k] < 0 ? 0 : free[g] - milli[k];
      totalAfter += nf - free[g];
      idleAfter -= idle[g] ? 1 : 0;
      partialAfter += nf - (idle[g] ? 0 : free[g]);
    }
    double sum = 0;
    for (int t = 0; t < mix.size; t++) {
      boolean gpuOk = mix.wantsGpu[t] && (mix.models[t].isAny() || mix.models[t].accepts(model));
      boolean before = gpuOk && vcores >= mix.vcores[t] && memoryMb >= mix.memoryMb[t];
      boolean after = gpuOk && vcores - v >= mix.vcores[t] && memoryMb - mem >= mix.memoryMb[t];
      double d;
      if (!before && !after) {
        d = totalAfter - totalBefore;
      } else if (mix.gpus[t] > 0) {
        int ub = !before || idleBefore < mix.gpus[t] ? totalBefore : partialBefore;
        int ua = !after || idleAfter < mix.gpus[t] ? totalAfter : partialAfter;
        d = ua - ub;
      } else if (before && after) {
        int need = mix.need(t, model);
        d = 0;
        for (int k = 0; k < n; k++) {
          int g = at[k];
          int nf = milli[k] < 0 ? 0 : oldFree[k] - milli[k];
          long nm = milli[k] < 0 ? 0 : oldMem[k] - gpuMem[k];
          d += (takes(mix, t, g, nf, nm, need) ? 0 : nf) - (takes(mix, t, g, oldFree[k], oldMem[k], need) ? 0
              : oldFree[k]);
        }
      } else {
        // The change makes the node unable to hold the shape (or able again): one side is all of its free compute.
        int other = 0;
        int need = mix.need(t, model);
        if (before) {
          d = totalAfter;
          for (int i = 0; i < gpus; i++) {
            other += takes(mix, t, i, free[i], freeMemory[i], need) ? 0 : free[i];
          }
          d -= other;
        } else {
          apply(at, milli, gpuMem, n);
          for (int i = 0; i < gpus; i++) {
            other += takes(mix, t, i, free[i], freeMemory[i], need) ? 0 : free[i];
          }
          restore(at, oldFree, oldMem, oldIdle, n);
          d = other - totalBefore;
        }
      }
      sum += mix.weight[t] * d;
    }
    return sum;
  }

  private boolean takes(GpuDemandMix.Table mix, int t, int g, int freeMilli, long freeMem, int need) {
    return kind[g] != 0 && (!mix.mpsOnly[t] || kind[g] == 2) && freeMilli >= need && freeMem >= mix.gpuMemoryMb[t];
  }

  private boolean takes(Resources m, int g, int freeMilli, long freeMem, int need) {
    return kind[g] != 0 && (m.isolation() == io.spindle.core.model.GpuIsolation.ANY || kind[g] == 2)
        && freeMilli >= need && freeMem >= m.gpuMemoryMb();
  }

  private void apply(int[] at, int[] milli, long[] gpuMem, int n) {
    for (int k = 0; k < n; k++) {
      if (milli[k] < 0) {
        takeWhole(at[k]);
      } else {
        takeShare(at[k], milli[k], gpuMem[k]);
      }
    }
  }

  private void restore(int[] at, int[] oldFree, long[] oldMem, boolean[] oldIdle, int n) {
    for (int k = 0; k < n; k++) {
      free[at[k]] = oldFree[k];
      freeMemory[at[k]] = oldMem[k];
      idle[at[k]] = oldIdle[k];
    }
  }

  /** Takes CPU and memory off the loaded capacity. */
  void takeCpu(long v, long mem) {
    vcores -= v;
    memoryMb -= mem;
  }

  /** Takes a share off GPU {@code at} (an index among the loaded GPUs, see {@link #loadedIndex}). */
  void takeShare(int at, int milli, long memMb) {
    free[at] -= milli;
    freeMemory[at] -= memMb;
    idle[at] = false;
  }

  /** Takes GPU {@code at} whole. */
  void takeWhole(int at) {
    free[at] = 0;
    freeMemory[at] = 0;
    idle[at] = false;
  }

  /** The loaded index of the node's GPU at {@code position} in its GPU list (MIG GPUs are skipped when loading). */
  static int loadedIndex(NodeState n, int position) {
    int at = 0;
    List<io.spindle.core.model.Gpu> list = n.node.gpus();
    for (int i = 0; i < position; i++) {
      at += list.get(i).migEnabled() ? 0 : 1;
    }
    return at;
  }
}
