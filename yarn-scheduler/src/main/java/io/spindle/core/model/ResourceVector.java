package io.spindle.core.model;

/**
 * The three dimensions Spindle accounts in: memory (MB), vcores and GPU-equivalents in {@link #GPU_UNITS} units per
 * GPU. Queue guarantees, usage, demand and fair shares are all vectors of this type.
 *
 * <p>GPU-equivalents are fixed point so that charging and refunding a MIG slice always returns usage to exactly
 * where it was (a 1g slice is 1/7 of a GPU, which no binary fraction holds). 840 is the least common multiple of
 * 1..8, so every slice fraction of a GPU with at most 8 compute and 8 memory slices is a whole number of units.
 */
public record ResourceVector(long memoryMb, long vcores, long gpuUnits) {

  /** Units of {@link #gpuUnits()} per whole GPU. */
  public static final long GPU_UNITS = 840;

  public static final ResourceVector ZERO = new ResourceVector(0, 0, 0);

  public static ResourceVector of(long memoryMb, long vcores, long wholeGpus) {
    return new ResourceVector(memoryMb, vcores, Math.multiplyExact(wholeGpus, GPU_UNITS));
  }

  public ResourceVector plus(ResourceVector o) {
    return new ResourceVector(memoryMb + o.memoryMb, vcores + o.vcores, gpuUnits + o.gpuUnits);
  }

  public ResourceVector minus(ResourceVector o) {
    return new ResourceVector(memoryMb - o.memoryMb, vcores - o.vcores, gpuUnits - o.gpuUnits);
  }

  public ResourceVector times(long n) {
    return new ResourceVector(
        Math.multiplyExact(memoryMb, n), Math.multiplyExact(vcores, n), Math.multiplyExact(gpuUnits, n));
  }

  /** Component-wise minimum. */
  public ResourceVector min(ResourceVector o) {
    return new ResourceVector(
        Math.min(memoryMb, o.memoryMb), Math.min(vcores, o.vcores), Math.min(gpuUnits, o.gpuUnits));
  }

  /** True when every component is at most the other's. */
  public boolean fitsIn(ResourceVector o) {
    return memoryMb <= o.memoryMb && vcores <= o.vcores && gpuUnits <= o.gpuUnits;
  }

  public boolean isZero() {
    return memoryMb == 0 && vcores == 0 && gpuUnits == 0;
  }

  public double gpus() {
    return (double) gpuUnits / GPU_UNITS;
  }

  /** Component {@code i} (0 memory, 1 vcores, 2 GPU units); lets fair-share arithmetic loop over dimensions. */
  public long get(int i) {
    return switch (i) {
      case 0 -> memoryMb;
      case 1 -> vcores;
      case 2 -> gpuUnits;
      default -> throw new IndexOutOfBoundsException(i);
    };
  }

  public static final int DIMENSIONS = 3;

  /** Names of the dimensions, in {@link #get(int)} order, as admins read them in reasons and docs. */
  public static String dimensionName(int i) {
    return switch (i) {
      case 0 -> "memory";
      case 1 -> "vcores";
      case 2 -> "gpu";
      default -> throw new IndexOutOfBoundsException(i);
    };
  }

  /**
   * Dominant share of this vector against {@code capacity}: the largest fraction of any dimension it takes.
   * Dimensions the capacity lacks are ignored.
   */
  public double dominantShare(ResourceVector capacity) {
    double share = 0;
    for (int i = 0; i < DIMENSIONS; i++) {
      long cap = capacity.get(i);
      if (cap > 0) {
        share = Math.max(share, (double) get(i) / cap);
      }
    }
    return share;
  }

  @Override
  public String toString() {
    return "<memory=" + memoryMb + "MB, vcores=" + vcores + ", gpu=" + formatGpus(gpuUnits) + ">";
  }

  /** GPU units as GPUs, exact where the fraction is short (0.5, 3.25) and to three places otherwise. */
  public static String formatGpus(long units) {
    if (units % GPU_UNITS == 0) {
      return Long.toString(units / GPU_UNITS);
    }
    return String.format(java.util.Locale.ROOT, "%.3f", (double) units / GPU_UNITS);
  }
}
