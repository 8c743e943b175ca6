package io.spindle.core.engine;

import io.spindle.core.model.ResourceVector;

/**
 * What one application has run: GPU service (GPU units held × time, the integral that {@code least-attained} orders
 * by) and wall time holding any container (what {@code shortest-first} takes off a declared run time, and what the
 * starvation bound does not count as waiting). Settled whenever what the application holds changes; between changes
 * both grow at the rate of what it holds, so reading them needs no per-cycle work.
 */
final class ServiceAttained {

  private long gpuUnitMillis;
  private long ranMillis;
  /** When the application was submitted (on the first leader's clock, after a failover). */
  private long submittedMillis;
  private long asOfMillis;
  private long unitsHeld;
  private boolean holding;
  /** Whether {@link #ranMillis} counts from the application's start (false when a failover lost what came before). */
  private boolean whole = true;

  ServiceAttained(long submittedMillis) {
    this.asOfMillis = submittedMillis;
    this.submittedMillis = submittedMillis;
  }

  long submittedMillis() {
    return submittedMillis;
  }

  /** Time since submission not spent running: what the starvation bound counts. */
  long waitedMillis(long now) {
    return Math.max(0, now - submittedMillis - ranMillis(now));
  }

  /** What the application holds changes at {@code now}: what it held until now is settled. */
  void settle(long now, ResourceVector heldFromNow) {
    boolean holdsFromNow = !heldFromNow.equals(ResourceVector.ZERO);
    if (heldFromNow.gpuUnits() == unitsHeld && holdsFromNow == holding) {
      return; // The same rate on: nothing to settle, and the saved state stays the same value.
    }
    long dt = Math.max(0, now - asOfMillis);
    gpuUnitMillis = saturatedAdd(gpuUnitMillis, saturatedTimes(unitsHeld, dt));
    ranMillis += holding ? dt : 0;
    asOfMillis = Math.max(asOfMillis, now);
    unitsHeld = heldFromNow.gpuUnits();
    holding = holdsFromNow;
  }

  /** GPU-unit milliseconds attained up to {@code now} (840 units to a GPU). */
  long gpuUnitMillis(long now) {
    return saturatedAdd(gpuUnitMillis, saturatedTimes(unitsHeld, Math.max(0, now - asOfMillis)));
  }

  /** GPU-seconds attained up to {@code now}. */
  double gpuSeconds(long now) {
    return gpuUnitMillis(now) / (double) ResourceVector.GPU_UNITS / 1000.0;
  }

  /** Milliseconds spent holding at least one container, up to {@code now}. */
  long ranMillis(long now) {
    return ranMillis + (holding ? Math.max(0, now - asOfMillis) : 0);
  }

  /** GPU-unit milliseconds settled at {@link #asOfMillis}: what a save keeps (it changes only with what is held). */
  long settledGpuUnitMillis() {
    return gpuUnitMillis;
  }

  long settledRanMillis() {
    return ranMillis;
  }

  long asOfMillis() {
    return asOfMillis;
  }

  /**
   * After a failover: what the old leader had settled at {@code asOf}, counted on from then at the rate of what the
   * application holds now (its recovered containers, which are those it held then unless some ended meanwhile).
   */
  void restore(long settledGpuUnitMillis, long settledRanMillis, long asOf, long submitted) {
    this.gpuUnitMillis = settledGpuUnitMillis;
    this.ranMillis = settledRanMillis;
    this.asOfMillis = asOf;
    this.submittedMillis = submitted;
    this.whole = true;
  }

  /** After a failover that kept nothing of it: what it ran from now on is only part of its run. */
  void lostBeforeFailover() {
    whole = false;
  }

  /** Whether what it has run is known from its start, so that its run time may be learned. */
  boolean whole() {
    return whole;
  }

  private static long saturatedTimes(long a, long b) {
    return a != 0 && b > Long.MAX_VALUE / a ? Long.MAX_VALUE : a * b;
  }

  private static long saturatedAdd(long a, long b) {
    return a > Long.MAX_VALUE - b ? Long.MAX_VALUE : a + b;
  }
}
