package io.spindle.sim;

import java.util.Locale;

/**
 * How fast an elastic job runs on fewer members than the trace gave it: a <em>model</em>, not a measurement. The
 * trace's duration is the job's run time at its full size {@code n}; on {@code k} members it progresses at
 * {@code S(k) / S(n)} of that speed, where {@code S} is
 * <ul>
 *   <li>{@code linear}: {@code S(k) = k} — perfect data parallelism, the most favourable to shrinking a job;
 *   <li>{@code amdahl:f}: {@code S(k) = 1 / (f + (1 - f) / k)}, Amdahl's law with serial fraction {@code f} (e.g.
 *       {@code amdahl:0.05}) — a job on fewer members loses less than its share of GPUs, so starting small pays more.
 * </ul>
 *
 * @param serialFraction 0 for linear
 * @param fraction of the jobs that are gangs of several containers, the share made elastic (by a hash of the job's
 *     id and the seed, so the same jobs every run)
 */
public record ElasticModel(double serialFraction, double fraction) {

  public static final ElasticModel LINEAR_ALL = new ElasticModel(0, 1);

  public ElasticModel {
    if (serialFraction < 0 || serialFraction >= 1) {
      throw new IllegalArgumentException("--elastic-model amdahl:f needs 0 <= f < 1; was " + serialFraction);
    }
    if (fraction < 0 || fraction > 1) {
      throw new IllegalArgumentException("--elastic-fraction must be within 0..1; was " + fraction);
    }
  }

  /** {@code linear} or {@code amdahl:f}. */
  public static ElasticModel parse(String model, double fraction) {
    if (model.equals("linear")) {
      return new ElasticModel(0, fraction);
    }
    if (model.startsWith("amdahl:")) {
      try {
        return new ElasticModel(Double.parseDouble(model.substring("amdahl:".length())), fraction);
      } catch (NumberFormatException e) {
        // Reported below.
      }
    }
    throw new IllegalArgumentException("--elastic-model is linear or amdahl:f (e.g. amdahl:0.05); was " + model);
  }

  /** Speed on {@code k} of {@code n} members, relative to the trace's (1 at full size). */
  double rate(int k, int n) {
    if (k >= n) {
      return 1;
    }
    return speedup(k) / speedup(n);
  }

  private double speedup(int k) {
    return serialFraction == 0 ? k : 1 / (serialFraction + (1 - serialFraction) / k);
  }

  /** Whether the job is among the elastic fraction (stable over runs: its id and the seed decide). */
  boolean picks(SimJob job, long seed) {
    if (fraction >= 1) {
      return true;
    }
    long h = (job.id().hashCode() * 0x9E3779B97F4A7C15L) ^ (seed * 0xC2B2AE3D27D4EB4FL);
    return Math.floorMod(h ^ (h >>> 31), 1_000_000L) < Math.round(fraction * 1_000_000);
  }

  String describe() {
    String speed = serialFraction == 0 ? "linear speed-up (S(k) = k)"
        : String.format(Locale.ROOT, "Amdahl speed-up with serial fraction %.2f", serialFraction);
    return String.format(Locale.ROOT, "%s of the multi-container gangs elastic, minimum = a quarter of their members "
        + "(at least 1), growing one member at a time; on k of n members a job runs at S(k)/S(n) of its trace speed, "
        + "%s — a model, not a measurement", fraction >= 1 ? "all" : Math.round(fraction * 100) + "%", speed);
  }
}
