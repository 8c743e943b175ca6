package io.spindle.bench;

/**
 * Where every memory slice of a MIG cluster is at one moment, by category, kept up to date one GPU at a time, and
 * integrated over time into the MIG packing benchmark's metrics. Pure bookkeeping: no engine types, so it is unit
 * tested on hand-made cases.
 *
 * <p>Each GPU's memory slices fall in exactly one of:
 * <ul>
 *   <li>{@link #HELD}: in an instance a container holds;
 *   <li>{@link #FREE_INSTANCE}: in an instance that exists on a busy GPU (one holding at least one container) but
 *       that no container holds — usable only by a request for that very profile;
 *   <li>{@link #UNPARTITIONED}: on a busy GPU, in no instance, but new instances could still be created there
 *       beside the running ones (compute slices and a legal start are left) — usable once the engine creates one;
 *   <li>{@link #DEAD}: on a busy GPU, in no instance, and no instance can ever cover it in this layout (the
 *       compute slices are all taken, or no legal start reaches it) — lost until the GPU is re-partitioned;
 *   <li>{@link #IDLE_GPU}: on a GPU no container holds and no re-partition is in flight for (whatever its layout);
 *   <li>{@link #REPARTITIONING}: on a GPU whose re-partition is planned and not yet in force, and not held (a
 *       re-partition keeps the instances containers hold; their slices stay {@link #HELD}).
 * </ul>
 */
final class MigSliceLedger {

  static final int HELD = 0;
  static final int FREE_INSTANCE = 1;
  static final int UNPARTITIONED = 2;
  static final int DEAD = 3;
  static final int IDLE_GPU = 4;
  static final int REPARTITIONING = 5;
  static final int CATEGORIES = 6;
  static final String[] NAMES = {"held", "free instance", "unpartitioned", "dead", "idle GPU", "re-partitioning"};

  private final int slicesPerGpu;
  private final int[][] perGpu;
  private final long[] totals = new long[CATEGORIES];

  /** All GPUs start idle (empty layouts, nothing held). */
  MigSliceLedger(int gpus, int slicesPerGpu) {
    this.slicesPerGpu = slicesPerGpu;
    this.perGpu = new int[gpus][];
    for (int g = 0; g < gpus; g++) {
      perGpu[g] = classify(slicesPerGpu, 0, 0, false, 0);
      add(perGpu[g], 1);
    }
  }

  /**
   * Slices of one GPU by category.
   *
   * @param layoutMask memory slices covered by the instances that exist (as last reported)
   * @param heldMask memory slices of the instances containers hold (a subset of {@code layoutMask})
   * @param repartitioning a re-partition is planned and not yet in force
   * @param coverable how many of the slices outside {@code layoutMask} new instances could still cover, beside
   *     the existing ones
   */
  static int[] classify(int slicesPerGpu, int layoutMask, int heldMask, boolean repartitioning, int coverable) {
    if ((heldMask & ~layoutMask) != 0) {
      throw new IllegalArgumentException("held slices " + Integer.toBinaryString(heldMask)
          + " outside the layout " + Integer.toBinaryString(layoutMask));
    }
    int[] c = new int[CATEGORIES];
    int held = Integer.bitCount(heldMask);
    if (repartitioning) {
      c[HELD] = held;
      c[REPARTITIONING] = slicesPerGpu - held;
    } else if (held == 0) {
      c[IDLE_GPU] = slicesPerGpu;
    } else {
      c[HELD] = held;
      c[FREE_INSTANCE] = Integer.bitCount(layoutMask) - held;
      int outside = slicesPerGpu - Integer.bitCount(layoutMask);
      if (coverable < 0 || coverable > outside) {
        throw new IllegalArgumentException(coverable + " coverable of " + outside + " slices outside the layout");
      }
      c[UNPARTITIONED] = coverable;
      c[DEAD] = outside - coverable;
    }
    return c;
  }

  void update(int gpu, int layoutMask, int heldMask, boolean repartitioning, int coverable) {
    add(perGpu[gpu], -1);
    perGpu[gpu] = classify(slicesPerGpu, layoutMask, heldMask, repartitioning, coverable);
    add(perGpu[gpu], 1);
  }

  private void add(int[] c, int sign) {
    for (int i = 0; i < CATEGORIES; i++) {
      totals[i] += sign * c[i];
    }
  }

  long total(int category) {
    return totals[category];
  }

  long totalSlices() {
    return (long) perGpu.length * slicesPerGpu;
  }

  /** Slices no container holds, whatever the reason. */
  long free() {
    return totalSlices() - totals[HELD];
  }

  long[] totals() {
    return totals.clone();
  }

  /**
   * Time integrals over a measurement window {@code [start, end)}: the state is constant between two calls of
   * {@link #accumulate}, which adds the part of {@code [from, to)} that lies in the window.
   *
   * <p>A moment is <b>stranding</b> when at least one request waits whose memory-slice size is at most the number
   * of free slices (capacity exists in aggregate, yet the request waits); the stranded slices at that moment are
   * all free slices. Averages are over the whole window (a moment that is not stranding counts 0).
   */
  static final class Window {
    final long start;
    final long end;
    final long totalSlices;
    final long totalUnits;
    double heldSliceMs;
    double heldUnitMs;
    double strandedSliceMs;
    double strandingMs;
    double waitingMs;
    final double[] strandedByCategoryMs = new double[CATEGORIES];
    final double[] byCategoryMs = new double[CATEGORIES];

    Window(long start, long end, long totalSlices, long totalUnits) {
      if (end <= start) {
        throw new IllegalArgumentException("empty window [" + start + ", " + end + ")");
      }
      this.start = start;
      this.end = end;
      this.totalSlices = totalSlices;
      this.totalUnits = totalUnits;
    }

    /**
     * @param totals slices per category during {@code [from, to)}
     * @param heldUnits GPU-equivalent units (840 per GPU) held by containers
     * @param minWaitingSlices memory slices of the smallest waiting request, {@link Integer#MAX_VALUE} if none
     * @param waiting requests waiting
     */
    void accumulate(long from, long to, long[] totals, long heldUnits, int minWaitingSlices, int waiting) {
      long a = Math.max(from, start);
      long b = Math.min(to, end);
      if (b <= a) {
        return;
      }
      double ms = b - a;
      long free = totalSlices - totals[HELD];
      heldSliceMs += ms * totals[HELD];
      heldUnitMs += ms * heldUnits;
      waitingMs += ms * waiting;
      for (int i = 0; i < CATEGORIES; i++) {
        byCategoryMs[i] += ms * totals[i];
      }
      if (waiting > 0 && minWaitingSlices <= free) {
        strandingMs += ms;
        strandedSliceMs += ms * free;
        for (int i = 0; i < CATEGORIES; i++) {
          if (i != HELD) {
            strandedByCategoryMs[i] += ms * totals[i];
          }
        }
      }
    }

    double length() {
      return end - start;
    }

    /** Time-averaged stranded slices (0 at moments that are not stranding). */
    double strandedSlices() {
      return strandedSliceMs / length();
    }

    double strandedByCategory(int category) {
      return strandedByCategoryMs[category] / length();
    }

    /** Share of the window's time that is stranding. */
    double strandingShare() {
      return strandingMs / length();
    }

    /** Time-averaged free slices during stranding moments only ({@code NaN} if there were none). */
    double strandedSlicesWhenStranding() {
      return strandingMs == 0 ? Double.NaN : strandedSliceMs / strandingMs;
    }

    double sliceUtilisation() {
      return heldSliceMs / length() / totalSlices;
    }

    double unitUtilisation() {
      return heldUnitMs / length() / totalUnits;
    }

    double averageWaiting() {
      return waitingMs / length();
    }

    double averageByCategory(int category) {
      return byCategoryMs[category] / length();
    }
  }
}
