package io.spindle.core.queue;

import java.util.List;
import java.util.Map;

/**
 * How decayed usage history weighs the sharing of idle capacity among siblings (the second step of
 * {@link FairShareCalculator}; guarantees, the first step, are never touched).
 *
 * <p>Among the children of one parent that still want capacity above their guarantee, child {@code i} has the
 * weight share {@code s_i = weight_i / sum(weight)} and the history share {@code h_i = H_i / sum(H)}, where
 * {@code H} is its decayed borrowed usage (GPU-equivalent-seconds; memory-seconds, then vcore-seconds, when none of
 * them has GPU history). Its weight for the progressive filling is multiplied by
 *
 * <pre>  factor_i = max(FLOOR, 1 + strength * (s_i - h_i))</pre>
 *
 * so a child that borrowed more than its weight share lately gets a smaller part of what is idle now, one that
 * borrowed less a larger part. A linear rule rather than a strict order (Slurm Fair Tree, Kueue) because a strict
 * order flips whole when two histories cross, and with preemption on that flip would reclaim back and forth; the
 * floor keeps every child growing, so history never starves a queue of idle capacity (KAI's time-based fair share
 * makes the same choice). With no history among the competitors every factor is 1: shares are exactly as without it.
 *
 * @param history decayed borrowed usage by queue path: {memory MB-seconds, vcore-seconds, GPU-unit-seconds}
 * @param strength how far history moves weights ({@code yarn.scheduler.spindle.usage.strength}); 0 switches it off
 */
public record UsageWeighting(Map<String, double[]> history, double strength) {

  /** No history: plain weighted DRF. */
  public static final UsageWeighting NONE = new UsageWeighting(Map.of(), 0);

  /** The least factor: a queue with all the history still grows at a tenth of its weight. */
  public static final double FLOOR = 0.1;

  public UsageWeighting {
    history = Map.copyOf(history);
  }

  /**
   * The factor for each child; {@code competing[i]} says whether child {@code i} wants idle capacity. Children that
   * do not compete get 1.
   */
  double[] factors(List<QueueConfig> children, boolean[] competing) {
    int n = children.size();
    double[] out = new double[n];
    java.util.Arrays.fill(out, 1.0);
    if (strength <= 0 || history.isEmpty()) {
      return out;
    }
    int dim = -1;
    for (int k : new int[] {2, 0, 1}) { // GPU units first, then memory, then vcores (ResourceVector's indexes)
      if (dim < 0 && total(children, competing, k) > 0) {
        dim = k;
      }
    }
    if (dim < 0) {
      return out;
    }
    double sumH = total(children, competing, dim);
    double sumW = 0;
    for (int i = 0; i < n; i++) {
      sumW += competing[i] ? children.get(i).weight() : 0;
    }
    for (int i = 0; i < n; i++) {
      if (competing[i] && sumW > 0) {
        double s = children.get(i).weight() / sumW;
        double h = of(children.get(i), dim) / sumH;
        out[i] = Math.max(FLOOR, 1 + strength * (s - h));
      }
    }
    return out;
  }

  private double total(List<QueueConfig> children, boolean[] competing, int dim) {
    double t = 0;
    for (int i = 0; i < children.size(); i++) {
      t += competing[i] ? of(children.get(i), dim) : 0;
    }
    return t;
  }

  private double of(QueueConfig q, int dim) {
    double[] h = history.get(q.path());
    return h == null ? 0 : h[dim];
  }
}
