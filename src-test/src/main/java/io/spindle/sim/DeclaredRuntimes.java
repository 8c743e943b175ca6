package io.spindle.sim;

import java.util.List;
import java.util.Random;

/**
 * What each job declares as its run time (the engine lets a container with a declared run time backfill onto
 * nodes held for a gang when it ends before the gang is due). Always at least the true duration: a job that
 * outlived its declaration would be killed at its limit, which the simulator does not model.
 */
final class DeclaredRuntimes {

  private DeclaredRuntimes() {}

  /** Per job, in trace order. The noise is drawn once per job from {@code seed}, whatever the policy. */
  static long[] of(List<SimJob> jobs, String mode, long seed) {
    long[] out = new long[jobs.size()];
    Random rnd = new Random(seed);
    for (int i = 0; i < out.length; i++) {
      long d = jobs.get(i).durationMillis();
      double u = rnd.nextDouble();
      double e = rnd.nextDouble();
      out[i] = switch (mode) {
        case "none" -> 0;
        case "exact" -> d;
        // HeliosArtifact's Philly estimate error classes: 10% within 10%, 40% 10-50%, 20% 50-100%, 20% 1-10x,
        // 10% 10-100x; here only over-estimates (see the class comment).
        case "noisy" -> (long) Math.ceil(d * (1 + (u < 0.1 ? 0.1 * e : u < 0.5 ? 0.1 + 0.4 * e
            : u < 0.7 ? 0.5 + 0.5 * e : u < 0.9 ? 1 + 9 * e : 10 + 90 * e)));
        default -> (long) Math.ceil(d * Double.parseDouble(mode.substring(1)));
      };
      if (out[i] > 0 && out[i] < d) {
        out[i] = d;
      }
      if (!mode.equals("none") && out[i] == 0) {
        out[i] = 1; // A zero-length job still declares something, so that the engine counts it as declared.
      }
    }
    return out;
  }
}
