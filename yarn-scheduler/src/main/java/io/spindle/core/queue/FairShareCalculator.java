package io.spindle.core.queue;

import io.spindle.core.model.ResourceVector;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Hierarchical dominant-resource fair share (H-DRF, after Bhattacharya et al. 2013) with guarantees and weights.
 *
 * <p>Top down, each parent divides its own fair share among its children in two steps:
 * <ol>
 *   <li><b>Guarantees first.</b> Each child gets {@code min(guarantee, demand)}: a guarantee is a promise, but a
 *       promise nobody is using is lent out.
 *   <li><b>Idle capacity by weighted DRF.</b> What remains is shared by progressive filling: every child that
 *       still wants more grows along the direction of its unmet demand, with its dominant share (largest fraction
 *       of any cluster resource) growing at a rate proportional to its weight. A child stops when its demand is
 *       met or when a resource it needs runs out; the others keep filling.
 * </ol>
 * Demand is capped at the queue's maximum, so no share ever exceeds a maximum. Shares are measured against the
 * whole cluster, so a queue that wants mostly GPUs and one that wants mostly memory compare fairly. GPUs count in
 * GPU-equivalents ({@link ResourceVector#GPU_UNITS}), so a MIG slice is charged by its real size.
 *
 * <p>Pure function of its inputs: the same tree, cluster and demands give the same shares.
 */
public final class FairShareCalculator {

  private static final double EPSILON = 1e-9;
  private static final int DIMS = ResourceVector.DIMENSIONS;

  private FairShareCalculator() {}

  /**
   * @param leafDemand used plus pending resources per leaf path; leaves not present demand nothing
   * @return the share of every queue, by path, parents before children
   */
  public static Map<String, QueueShare> compute(
      QueueTree tree, ResourceVector cluster, Map<String, ResourceVector> leafDemand) {
    return compute(tree, cluster, leafDemand, resolveLimits(tree, cluster));
  }

  /**
   * As {@link #compute(QueueTree, ResourceVector, Map)}, within one partition: {@code cluster} is what its nodes hold,
   * {@code limits} the queues' guarantees and maximums in it ({@link QueueLabels#resolve}).
   */
  public static Map<String, QueueShare> compute(QueueTree tree, ResourceVector cluster,
      Map<String, ResourceVector> leafDemand, Map<String, Limits> limits) {
    return compute(tree, cluster, leafDemand, limits, UsageWeighting.NONE);
  }

  /**
   * As {@link #compute(QueueTree, ResourceVector, Map, Map)}, with idle capacity shared by weights that
   * {@code usage} adjusts for each queue's decayed borrowing ({@link UsageWeighting}); guarantees are untouched.
   */
  public static Map<String, QueueShare> compute(QueueTree tree, ResourceVector cluster,
      Map<String, ResourceVector> leafDemand, Map<String, Limits> limits, UsageWeighting usage) {
    Map<String, ResourceVector> guarantee = new LinkedHashMap<>();
    Map<String, ResourceVector> maximum = new LinkedHashMap<>();
    limits.forEach((path, l) -> {
      guarantee.put(path, l.guarantee());
      maximum.put(path, l.maximum());
    });
    Map<String, ResourceVector> demand = new LinkedHashMap<>();
    List<QueueConfig> bottomUp = new ArrayList<>(tree.all());
    java.util.Collections.reverse(bottomUp);
    for (QueueConfig q : bottomUp) {
      ResourceVector d;
      if (q.isLeaf()) {
        d = leafDemand.getOrDefault(q.path(), ResourceVector.ZERO);
      } else {
        d = ResourceVector.ZERO;
        for (QueueConfig child : tree.children(q)) {
          d = d.plus(demand.get(child.path()));
        }
      }
      demand.put(q.path(), d.min(maximum.get(q.path())));
    }

    Map<String, double[]> fair = new LinkedHashMap<>();
    Map<String, Double> factors = new LinkedHashMap<>();
    fair.put(QueueTree.ROOT, toDoubles(demand.get(QueueTree.ROOT).min(cluster)));
    for (QueueConfig q : tree.all()) {
      if (!q.isLeaf()) {
        divide(tree.children(q), fair.get(q.path()), guarantee, demand, cluster, fair, usage, factors);
      }
    }

    Map<String, QueueShare> out = new LinkedHashMap<>();
    for (QueueConfig q : tree.all()) {
      out.put(q.path(), new QueueShare(q.path(), guarantee.get(q.path()), maximum.get(q.path()),
          demand.get(q.path()), toVector(fair.get(q.path())), factors.getOrDefault(q.path(), 1.0)));
    }
    return out;
  }

  /** A queue's guarantee and maximum resolved against a cluster. */
  public record Limits(ResourceVector guarantee, ResourceVector maximum) {}

  /**
   * Resolves every queue's capacity and maximum-capacity against the cluster, top down: percentages of the
   * parent's guarantee and maximum, absolute amounts capped by them.
   */
  public static Map<String, Limits> resolveLimits(QueueTree tree, ResourceVector cluster) {
    Map<String, Limits> out = new LinkedHashMap<>();
    for (QueueConfig q : tree.all()) {
      if (q.parentPath() == null) {
        out.put(q.path(), new Limits(cluster, cluster));
      } else {
        Limits parent = out.get(q.parentPath());
        ResourceVector g = q.capacity().resolveGuarantee(parent.guarantee());
        ResourceVector m = q.maximumCapacity().resolveMaximum(parent.maximum());
        // A maximum below the guarantee (possible only where absolute and percent forms meet) yields to it.
        out.put(q.path(), new Limits(g, max(m, g).min(parent.maximum())));
      }
    }
    return out;
  }

  private static void divide(List<QueueConfig> children, double[] parentShare, Map<String, ResourceVector> guarantee,
      Map<String, ResourceVector> demand, ResourceVector cluster, Map<String, double[]> fair, UsageWeighting usage,
      Map<String, Double> factors) {
    int n = children.size();
    double[][] share = new double[n][];
    double[][] residual = new double[n][];
    double[] remaining = parentShare.clone();
    for (int i = 0; i < n; i++) {
      String path = children.get(i).path();
      double[] d = toDoubles(demand.get(path));
      share[i] = toDoubles(guarantee.get(path).min(demand.get(path)));
      residual[i] = new double[DIMS];
      for (int k = 0; k < DIMS; k++) {
        remaining[k] -= share[i][k];
        residual[i][k] = d[k] - share[i][k];
      }
    }
    for (int k = 0; k < DIMS; k++) {
      remaining[k] = Math.max(0, remaining[k]);
    }

    // Progressive filling. Child i moves along rate[i] = residual[i] * weight / dominantShare(residual[i]), so its
    // dominant share grows at `weight` per unit of t; it is done at t = dominantShare(residual[i]) / weight.
    double[][] rate = new double[n][];
    double[] doneAt = new double[n];
    boolean[] active = new boolean[n];
    for (int i = 0; i < n; i++) {
      active[i] = dominantShare(residual[i], cluster) > EPSILON;
    }
    double[] factor = usage.factors(children, active);
    for (int i = 0; i < n; i++) {
      factors.put(children.get(i).path(), factor[i]);
    }
    for (int i = 0; i < n; i++) {
      double ds = dominantShare(residual[i], cluster);
      if (active[i]) {
        double w = children.get(i).weight() * factor[i];
        rate[i] = new double[DIMS];
        for (int k = 0; k < DIMS; k++) {
          rate[i][k] = residual[i][k] * w / ds;
        }
        doneAt[i] = ds / w;
      }
    }
    double t = 0;
    while (true) {
      double[] total = new double[DIMS];
      double step = Double.POSITIVE_INFINITY;
      boolean any = false;
      for (int i = 0; i < n; i++) {
        if (active[i]) {
          any = true;
          step = Math.min(step, doneAt[i] - t);
          for (int k = 0; k < DIMS; k++) {
            total[k] += rate[i][k];
          }
        }
      }
      if (!any) {
        break;
      }
      for (int k = 0; k < DIMS; k++) {
        if (total[k] > EPSILON) {
          step = Math.min(step, remaining[k] / total[k]);
        }
      }
      step = Math.max(0, step);
      t += step;
      for (int k = 0; k < DIMS; k++) {
        remaining[k] = Math.max(0, remaining[k] - step * total[k]);
      }
      for (int i = 0; i < n; i++) {
        if (!active[i]) {
          continue;
        }
        for (int k = 0; k < DIMS; k++) {
          share[i][k] += step * rate[i][k];
        }
        boolean starved = false;
        for (int k = 0; k < DIMS; k++) {
          starved |= rate[i][k] > EPSILON && remaining[k] <= EPSILON * Math.max(1, cluster.get(k));
        }
        if (doneAt[i] - t <= EPSILON || starved) {
          active[i] = false;
        }
      }
    }
    for (int i = 0; i < n; i++) {
      fair.put(children.get(i).path(), share[i]);
    }
  }

  private static double dominantShare(double[] v, ResourceVector cluster) {
    double s = 0;
    for (int k = 0; k < DIMS; k++) {
      if (cluster.get(k) > 0) {
        s = Math.max(s, v[k] / cluster.get(k));
      }
    }
    return s;
  }

  static ResourceVector max(ResourceVector a, ResourceVector b) {
    return new ResourceVector(Math.max(a.memoryMb(), b.memoryMb()), Math.max(a.vcores(), b.vcores()),
        Math.max(a.gpuUnits(), b.gpuUnits()));
  }

  private static double[] toDoubles(ResourceVector v) {
    return new double[] {v.memoryMb(), v.vcores(), v.gpuUnits()};
  }

  private static ResourceVector toVector(double[] d) {
    // Round to the nearest unit: the shares come from sums of exact amounts and only pick up float noise.
    return new ResourceVector(Math.round(d[0]), Math.round(d[1]), Math.round(d[2]));
  }
}
