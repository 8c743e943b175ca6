package io.spindle.sim.faults;

import java.util.SplittableRandom;

/**
 * How long a failed GPU stays out of service: a fixed time, or lognormal with a median and a log-space spread (a
 * reset or reseat the same shift, with a long tail of parts sent back). The defaults are an assumption, not a
 * measurement: no public study of large training clusters gives a distribution of GPU repair times.
 *
 * @param medianMillis the median (for a fixed time, the time)
 * @param sigma the lognormal's standard deviation of ln(time); 0: fixed
 */
public record RepairTimes(long medianMillis, double sigma) {

  public RepairTimes {
    if (medianMillis <= 0 || sigma < 0) {
      throw new IllegalArgumentException("repair time must be positive and its spread not negative");
    }
  }

  /** {@code H} (fixed hours) or {@code lognormal:MEDIAN_HOURS,SIGMA}. */
  public static RepairTimes parse(String s) {
    if (s.startsWith("lognormal:")) {
      String[] p = s.substring("lognormal:".length()).split(",");
      if (p.length != 2) {
        throw new IllegalArgumentException("--repair-hours lognormal:MEDIAN,SIGMA, e.g. lognormal:8,1; was " + s);
      }
      return new RepairTimes(Math.round(Double.parseDouble(p[0].strip()) * 3_600_000), Double.parseDouble(p[1]));
    }
    return new RepairTimes(Math.round(Double.parseDouble(s.strip()) * 3_600_000), 0);
  }

  long draw(SplittableRandom random) {
    if (sigma == 0) {
      return medianMillis;
    }
    return Math.max(60_000, Math.round(medianMillis * Math.exp(sigma * gaussian(random))));
  }

  /** A standard normal draw (Box-Muller), from the run's own generator so that runs repeat. */
  static double gaussian(SplittableRandom random) {
    double u = 1 - random.nextDouble();
    double v = random.nextDouble();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  @Override
  public String toString() {
    return sigma == 0 ? medianMillis / 3_600_000.0 + " h" : "lognormal, median " + medianMillis / 3_600_000.0
        + " h, sigma " + sigma;
  }
}
