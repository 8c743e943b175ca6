package io.spindle.core.queue;

import java.util.List;

/**
 * How a leaf orders its applications beyond {@link AppOrdering}'s policy: the levels of least-attained service, the
 * wait bound that protects against starvation, and preemption inside the queue. Each comes from its own key under
 * {@code spindle.ordering}, set on the leaf or inherited from the nearest ancestor that sets it
 * ({@link OrderingRulesParser}).
 *
 * @param attainedThresholdsGpuSeconds where {@code least-attained}'s levels start, ascending, in GPU-seconds of
 *     attained service: an application with less than the first is at level 0, between the first and the second at
 *     level 1, and so on (Tiresias' discretised two-queue default: one threshold at 18,000 GPU-seconds)
 * @param maxWaitMillis the starvation bound: an application that has waited this long (time since submission not
 *     spent running) is served before every application of its leaf that has not, oldest first among those, and no
 *     longer given up to intra-queue preemption; {@code 0}: no bound
 * @param preempt whether a waiting application may take running work of its own leaf that the ordering puts after it
 *     ({@code least-attained}, {@code shortest-first}), through the checkpoint handshake
 * @param minRuntimeMillis how long a run must have run since it last started before intra-queue preemption may take
 *     it: the anti-thrash guard
 */
public record OrderingRules(List<Long> attainedThresholdsGpuSeconds, long maxWaitMillis, boolean preempt,
    long minRuntimeMillis) {

  public static final String THRESHOLDS_KEY = "spindle.ordering.attained-thresholds-gpu-seconds";
  public static final String MAX_WAIT_KEY = "spindle.ordering.max-wait-seconds";
  public static final String PREEMPT_KEY = "spindle.ordering.preemption";
  public static final String MIN_RUNTIME_KEY = "spindle.ordering.preemption.min-runtime-seconds";

  public static final List<Long> DEFAULT_THRESHOLDS_GPU_SECONDS = List.of(18_000L);
  public static final long DEFAULT_MAX_WAIT_SECONDS = 259_200;
  public static final long DEFAULT_MIN_RUNTIME_SECONDS = 600;

  public static final OrderingRules DEFAULTS = new OrderingRules(DEFAULT_THRESHOLDS_GPU_SECONDS,
      DEFAULT_MAX_WAIT_SECONDS * 1000, false, DEFAULT_MIN_RUNTIME_SECONDS * 1000);

  public OrderingRules {
    attainedThresholdsGpuSeconds = List.copyOf(attainedThresholdsGpuSeconds);
    for (int i = 1; i < attainedThresholdsGpuSeconds.size(); i++) {
      if (attainedThresholdsGpuSeconds.get(i) <= attainedThresholdsGpuSeconds.get(i - 1)) {
        throw new IllegalArgumentException("thresholds must ascend: " + attainedThresholdsGpuSeconds);
      }
    }
    if (maxWaitMillis < 0 || minRuntimeMillis < 0) {
      throw new IllegalArgumentException("durations must not be negative");
    }
  }

  /** The level of {@code attainedGpuSeconds}: how many thresholds it has reached. */
  public int level(double attainedGpuSeconds) {
    int level = 0;
    while (level < attainedThresholdsGpuSeconds.size() && attainedGpuSeconds >= attainedThresholdsGpuSeconds.get(level)) {
      level++;
    }
    return level;
  }
}
