package io.spindle.core.queue;

import io.spindle.core.model.ResourceVector;

/**
 * A queue's capacity or maximum capacity as configured: either a percentage of the parent's (the classic
 * CapacityScheduler form) or an absolute vector ({@code [memory=…,vcores=…,yarn.io/gpu=…]}).
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
