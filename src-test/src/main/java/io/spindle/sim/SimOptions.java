package io.spindle.sim;

/**
 * Run options shared by every policy of one invocation.
 *
 * @param seed seeds every random draw (declared run-time noise); the same seed gives the same bytes of output
 * @param memberGpus GPUs per container (0: one container per node-sized part of the job; see {@link JobGeometry})
 * @param declaredRuntime what jobs declare as run time, for policies that use it: {@code exact} (the trace's
 *     duration), {@code xF} (F times it, e.g. {@code x2}), {@code noisy} (over-estimates drawn with the seed: the
 *     duration times 1 + |e|, e from the HeliosArtifact QSSF estimate's error classes), or {@code none}
 * @param timeSeriesPoints points per time series in the report
 */
public record SimOptions(long seed, int memberGpus, String declaredRuntime, int timeSeriesPoints) {

  public SimOptions {
    if (!declaredRuntime.equals("exact") && !declaredRuntime.equals("none") && !declaredRuntime.equals("noisy")
        && !declaredRuntime.matches("x\\d+(\\.\\d+)?")) {
      throw new IllegalArgumentException("--declared-runtime is exact, none, noisy or xF (e.g. x2); was "
          + declaredRuntime);
    }
    if (memberGpus < 0 || timeSeriesPoints < 2) {
      throw new IllegalArgumentException("--member-gpus must be >= 0 and time-series points >= 2");
    }
  }

  public static SimOptions defaults() {
    return new SimOptions(1, 0, "exact", 400);
  }

  public SimOptions withSeed(long s) {
    return new SimOptions(s, memberGpus, declaredRuntime, timeSeriesPoints);
  }

  public SimOptions withMemberGpus(int g) {
    return new SimOptions(seed, g, declaredRuntime, timeSeriesPoints);
  }

  public SimOptions withDeclaredRuntime(String d) {
    return new SimOptions(seed, memberGpus, d, timeSeriesPoints);
  }
}
