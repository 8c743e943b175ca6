package io.spindle.core.queue;

/**
 * The order in which a leaf queue serves its applications (CapacityScheduler's {@code ordering-policy} of a leaf).
 *
 * <ul>
 *   <li>{@link #FIFO}: higher priority first, then the older (CapacityScheduler's {@code fifo}, its default).
 *   <li>{@link #FAIR}: the application holding least first — its dominant share of the cluster — so applications of a
 *       leaf converge to equal shares; ties in priority-then-age order (CapacityScheduler's {@code fair}, which
 *       compares memory by default: Spindle compares the dominant resource, GPUs included).
 * </ul>
 */
public enum AppOrdering {
  FIFO,
  FAIR;

  /** CapacityScheduler's key of a leaf. */
  public static final String KEY = "ordering-policy";

  /**
   * The ordering CapacityScheduler builds from {@code value} ({@code null}: its default). It validates the value
   * itself (the YARN adapter refuses what it cannot build); every policy but {@code fair} orders FIFO here.
   */
  public static AppOrdering of(String value) {
    if (value == null) {
      return FIFO;
    }
    String v = value.strip();
    return v.equals("fair") || v.endsWith(".FairOrderingPolicy") ? FAIR : FIFO;
  }
}
