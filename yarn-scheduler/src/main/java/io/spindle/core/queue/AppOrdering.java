package io.spindle.core.queue;

/**
 * The order in which a leaf queue serves its applications (CapacityScheduler's {@code ordering-policy} of a leaf).
 *
 * <ul>
 *   <li>{@link #FIFO}: higher priority first, then the older (CapacityScheduler's {@code fifo}, its default).
 *   <li>{@link #FAIR}: the application holding least first — its dominant share of the cluster — so applications of a
 *       leaf converge to equal shares; ties in priority-then-age order (CapacityScheduler's {@code fair}, which
 *       compares memory by default: Spindle compares the dominant resource, GPUs included).
 *   <li>{@link #FAIR_BY_SIZE}: {@code fair} with {@code ordering-policy.fair.enable-size-based-weight}: what each
 *       holds is divided by log2(1 + its demand in MB, held plus pending), as CapacityScheduler weighs it, so a larger
 *       application gets a larger share than a smaller one rather than an equal one.
 *   <li>{@link #SHORTEST_FIRST} (Spindle's {@code spindle.ordering=shortest-first}): higher priority first, then the
 *       application whose waiting requests declare the shortest run time ({@code spindle.max-runtime}), then the
 *       older. What an application has run is taken off what it declared (it may have run before a preemption); an
 *       application that declares none is ordered by the run time learned from its kind's finished work, and one with
 *       neither comes after those that have one, oldest first.
 *   <li>{@link #LEAST_ATTAINED} ({@code spindle.ordering=least-attained}; Tiresias' discretised least-attained
 *       service): higher priority first, then the lowest level of attained GPU service (GPU-seconds held, in the
 *       levels {@link OrderingRules} gives), then the older. Needs no run times.
 * </ul>
 * Under {@link #SHORTEST_FIRST} and {@link #LEAST_ATTAINED} an application that has waited
 * {@link OrderingRules#maxWaitMillis} comes before all of its priority that have not (the starvation bound).
 */
public enum AppOrdering {
  FIFO,
  FAIR,
  FAIR_BY_SIZE,
  SHORTEST_FIRST,
  LEAST_ATTAINED;

  /**
   * Spindle's own key, inherited by the queues below the one that sets it: {@code fifo}, {@code shortest-first} or
   * {@code least-attained}.
   */
  public static final String SPINDLE_KEY = "spindle.ordering";

  /** CapacityScheduler's key of a leaf. */
  public static final String KEY = "ordering-policy";
  /** Its size-based weight under {@code fair}. */
  public static final String SIZE_BASED_WEIGHT = "ordering-policy.fair.enable-size-based-weight";

  /** Whether the order ranks applications by how long they run or have run (and so may preempt inside a queue). */
  public boolean ranked() {
    return this == SHORTEST_FIRST || this == LEAST_ATTAINED;
  }

  /** Whether applications are ordered by what they hold (either fair ordering). */
  public boolean fair() {
    return this == FAIR || this == FAIR_BY_SIZE;
  }

  /** {@link #of(String)}, weighted by size where {@code sizeBasedWeight} is {@code "true"} under fair ordering. */
  public static AppOrdering of(String value, String sizeBasedWeight) {
    AppOrdering o = of(value);
    return o == FAIR && sizeBasedWeight != null && sizeBasedWeight.strip().equalsIgnoreCase("true") ? FAIR_BY_SIZE : o;
  }

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
