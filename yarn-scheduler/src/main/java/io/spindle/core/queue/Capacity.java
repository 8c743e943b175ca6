package io.spindle.core.queue;

import io.spindle.core.model.ResourceVector;

/**
 * A queue's capacity or maximum capacity as configured: a percentage of the parent's (the classic
 * CapacityScheduler form), a weight among its siblings ({@code 3w}, capacities only), or an absolute vector
 * ({@code [memory=…,vcores=…,yarn.io/gpu=…]}).
 */
public sealed interface Capacity {

  /** Resolves a guarantee against the parent's guarantee. */
  ResourceVector resolveGuarantee(ResourceVector parent);

  /** Resolves a maximum against the parent's maximum. */
  ResourceVector resolveMaximum(ResourceVector parent);

  record Percent(double percent) implements Capacity {
    @Override
    public ResourceVector resolveGuarantee(ResourceVector parent) {
      return new ResourceVector(scale(parent.memoryMb()), scale(parent.vcores()), scale(parent.gpuUnits()));
    }

    @Override
    public ResourceVector resolveMaximum(ResourceVector parent) {
      return resolveGuarantee(parent);
    }

    private long scale(long amount) {
      // Floor (with a little slack for 33.33 + 66.67) so children's guarantees never exceed the parent's.
      return (long) Math.floor(amount * percent / 100.0 + 1e-9);
    }

    @Override
    public String toString() {
      return percent + "%";
    }
  }

  /**
   * CapacityScheduler's weight mode: the queue's share of its parent is its weight over the sum of its siblings'
   * weights. {@code percent} is that share, filled in by the parser once all siblings are read.
   */
  record Weight(double weight, double percent) implements Capacity {
    @Override
    public ResourceVector resolveGuarantee(ResourceVector parent) {
      return new Percent(percent).resolveGuarantee(parent);
    }

    @Override
    public ResourceVector resolveMaximum(ResourceVector parent) {
      return resolveGuarantee(parent);
    }

    @Override
    public String toString() {
      return trim(weight) + "w (" + trim(percent) + "% of the parent)";
    }

    private static String trim(double d) {
      return d == Math.rint(d) ? Long.toString((long) d) : String.format(java.util.Locale.ROOT, "%.4g", d);
    }
  }

  /**
   * An absolute amount; {@code null} marks a dimension the admin left out. Such a dimension is zero in a
   * guarantee and unbounded (the parent's) in a maximum, as in CapacityScheduler's partial absolute resources.
   */
  record Absolute(Long memoryMb, Long vcores, Long gpuUnits) implements Capacity {
    @Override
    public ResourceVector resolveGuarantee(ResourceVector parent) {
      return new ResourceVector(or(memoryMb, 0), or(vcores, 0), or(gpuUnits, 0)).min(parent);
    }

    @Override
    public ResourceVector resolveMaximum(ResourceVector parent) {
      return new ResourceVector(or(memoryMb, parent.memoryMb()), or(vcores, parent.vcores()),
          or(gpuUnits, parent.gpuUnits())).min(parent);
    }

    private static long or(Long value, long otherwise) {
      return value == null ? otherwise : value;
    }

    @Override
    public String toString() {
      return "[memory=" + (memoryMb == null ? "*" : memoryMb) + ",vcores=" + (vcores == null ? "*" : vcores)
          + ",yarn.io/gpu=" + (gpuUnits == null ? "*" : ResourceVector.formatGpus(gpuUnits)) + "]";
    }
  }
}
