package io.spindle.core.placement;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.Resources;
import java.util.List;

/**
 * How much of a node's free GPU capacity the work that keeps arriving cannot use: the fragmentation measure of
 * Weng et al. ("Beware of Fragmentation", ATC'23), over the recent {@link GpuDemandMix}, with one change. For each
 * recently asked shape, weighted by how often it was asked, the free GPU compute (in thousandths) that shape could
 * not take: all of it when the node lacks the CPU, memory, model or idle GPUs for one container of the shape; for a
 * whole-GPU shape, the free compute of partly used GPUs; for a share, the GPUs with less room than the share (or
 * that cannot be shared). The change: FGD asks only whether one container of the shape still fits, so a node whose
 * CPU holds one more container counts all its free GPUs as usable. Here a shape can use at most what as many of its
 * containers as the node's free CPU and memory hold would take (whole GPUs: copies x GPUs; shares: copies x share),
 * so placement also keeps CPU and memory in proportion to the GPUs left beside them. On OpenB, where CPU runs out
 * before GPUs on many nodes, that is what lifts Spindle above FGD (docs/benchmarks.md).
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
  /** The node loaded, whose measure before a change is remembered on it until it changes or the mix does. */
  private NodeState loaded;
  /** What {@link #delta} changes, kept to put back: reused, since it runs for every candidate. */
  private int[] oldFree = new int[8];
  private long[] oldMem = new long[8];
  private boolean[] oldIdle = new boolean[8];

  /** Loads a node's free capacity (its GPUs outside MIG; MIG GPUs have their own packing). */
  void load(NodeState n) {
    loaded = n;
    List<io.spindle.core.model.Gpu> list = n.node.gpus();
    if (free.length < list.size()) {
      free = new int[list.size()];
      freeMemory = new long[list.size()];
      kind = new int[list.size()];
      idle = new boolean[list.size()];
      sorted = new int[list.size()];
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

  /**
   * The measure for the loaded capacity, computed GPU by GPU for every shape: the reference that {@link #delta}'s
   * faster evaluation equals.
   */
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
      Resources m = w.shape();
      long usable = 0;
      if (vcores >= m.vcores() && memoryMb >= m.memoryMb() && m.wantsGpu() && m.models().accepts(model)) {
        long copies = copies(m.vcores(), m.memoryMb());
        if (m.gpus() > 0) {
          usable = idleCount < m.gpus() ? 0 : Math.min(idleCount, copies * m.gpus()) * (long) MILLI;
        } else {
          int need = m.shareMilli(model);
          for (int i = 0; i < gpus; i++) {
            boolean mpsOk = m.isolation() == io.spindle.core.model.GpuIsolation.ANY || kind[i] == 2;
            usable += kind[i] != 0 && mpsOk && free[i] >= need && freeMemory[i] >= m.gpuMemoryMb() ? free[i] : 0;
          }
          usable = Math.min(usable, copies * need);
        }
      }
      sum += w.weight() * (total - usable);
    }
    return sum;
  }

  /**
   * {@link #copies}, or {@code cap} when the node holds at least that many: callers bound the result by {@code cap}
   * anyway, and two comparisons spare the two divisions in the measure's inner loop.
   */
  private long copiesUpTo(long shapeVcores, long shapeMemoryMb, long cap) {
    if (vcores >= cap * shapeVcores && memoryMb >= cap * shapeMemoryMb) {
      return cap;
    }
    return copies(shapeVcores, shapeMemoryMb);
  }

  /**
   * How many containers of a shape the loaded node's free CPU and memory hold: what bounds the GPU capacity that
   * shape can use there. Saturates well above any GPU count, so products with it do not overflow.
   */
  private long copies(long shapeVcores, long shapeMemoryMb) {
    long copies = 1L << 20;
    if (shapeVcores > 0) {
      copies = Math.min(copies, vcores / shapeVcores);
    }
    if (shapeMemoryMb > 0) {
      copies = Math.min(copies, memoryMb / shapeMemoryMb);
    }
    return copies;
  }

  /**
   * How much the measure grows if a container takes {@code v} vcores, {@code mem} MB and, on each loaded GPU
   * {@code at[i]}, {@code milli[i]} thousandths and {@code gpuMem[i]} MB ({@code milli[i] < 0}: the whole GPU): the
   * measure after the change minus the measure before. Leaves the loaded capacity as it was.
   */
  double delta(GpuDemandMix.Table mix, long v, long mem, int[] at, int[] milli, long[] gpuMem, int n) {
    if (oldFree.length < n) {
      oldFree = new int[n];
      oldMem = new long[n];
      oldIdle = new boolean[n];
    }
    double before;
    if (loaded != null && loaded.measuredFor == mix && loaded.measuredAt == loaded.changes) {
      before = loaded.measure;
    } else {
      before = measure(mix);
      if (loaded != null) {
        loaded.measure = before;
        loaded.measuredFor = mix;
        loaded.measuredAt = loaded.changes;
      }
    }
    for (int k = 0; k < n; k++) {
      oldFree[k] = free[at[k]];
      oldMem[k] = freeMemory[at[k]];
      oldIdle[k] = idle[at[k]];
    }
    apply(at, milli, gpuMem, n);
    vcores -= v;
    memoryMb -= mem;
    double after = measure(mix);
    vcores += v;
    memoryMb += mem;
    restore(at, oldFree, oldMem, oldIdle, n);
    return after - before;
  }

  /** Shareable GPUs' free compute, largest first, and what a share type can use of it (by type index). */
  private int[] sorted = new int[8];
  private long[] usableByType = new long[48];

  /**
   * {@link #score} from the node's totals: the free compute a share can use is a prefix of the shareable GPUs
   * sorted by free compute, walked once for all shares in order of size (O(shapes + GPUs), not O(shapes x GPUs)).
   * Shares that ask GPU memory or MPS take the GPU-by-GPU way.
   */
  private double measure(GpuDemandMix.Table mix) {
    int total = 0;
    int idleCount = 0;
    int shareable = 0;
    for (int i = 0; i < gpus; i++) {
      total += free[i];
      idleCount += idle[i] ? 1 : 0;
      if (kind[i] != 0 && free[i] > 0) {
        int f = free[i];
        int j = shareable++;
        while (j > 0 && sorted[j - 1] < f) {
          sorted[j] = sorted[j - 1];
          j--;
        }
        sorted[j] = f;
      }
    }
    if (total == 0) {
      return 0;
    }
    if (usableByType.length < mix.size) {
      usableByType = new long[mix.size];
    }
    int j = 0;
    long prefix = 0;
    for (int t : mix.plainSharesBySize) {
      while (j < shareable && sorted[j] >= mix.milli[t]) {
        prefix += sorted[j++];
      }
      usableByType[t] = prefix;
    }
    double sum = 0;
    for (int t = 0; t < mix.size; t++) {
      long usable = 0;
      if (mix.wantsGpu[t] && vcores >= mix.vcores[t] && memoryMb >= mix.memoryMb[t]
          && (mix.models[t].isAny() || mix.models[t].accepts(model))) {
        if (mix.gpus[t] > 0) {
          int g = mix.gpus[t];
          usable = idleCount < g ? 0
              : Math.min(idleCount, copiesUpTo(mix.vcores[t], mix.memoryMb[t], (idleCount + g - 1) / g) * g)
                  * (long) MILLI;
        } else {
          int need = mix.need(t, model);
          if (mix.plainShare[t]) {
            usable = usableByType[t];
          } else {
            for (int i = 0; i < gpus; i++) {
              usable += takes(mix, t, i, free[i], freeMemory[i], need) ? free[i] : 0;
            }
          }
          usable = need <= 0 ? 0 : Math.min(usable, copiesUpTo(mix.vcores[t], mix.memoryMb[t],
              (usable + need - 1) / need) * need);
        }
      }
      sum += mix.weight[t] * (total - usable);
    }
    return sum;
  }

  private boolean takes(GpuDemandMix.Table mix, int t, int g, int freeMilli, long freeMem, int need) {
    return kind[g] != 0 && (!mix.mpsOnly[t] || kind[g] == 2) && freeMilli >= need && freeMem >= mix.gpuMemoryMb[t];
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
    loaded = null; // no longer the node's own state
    vcores -= v;
    memoryMb -= mem;
  }

  /** Takes a share off GPU {@code at} (an index among the loaded GPUs, see {@link #loadedIndex}). */
  void takeShare(int at, int milli, long memMb) {
    loaded = null; // no longer the node's own state
    free[at] -= milli;
    freeMemory[at] -= memMb;
    idle[at] = false;
  }

  /** Takes GPU {@code at} whole. */
  void takeWhole(int at) {
    loaded = null; // no longer the node's own state
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
