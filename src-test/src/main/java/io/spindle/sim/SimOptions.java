package io.spindle.sim;

/**
 * Run options shared by every policy of one invocation.
 *
 * @param seed seeds every random draw (declared run-time noise, injected urgent jobs); the same seed gives the same
 *     bytes of output
 * @param memberGpus GPUs per container (0: one container per node-sized part of the job; see {@link JobGeometry})
 * @param declaredRuntime what jobs declare as run time, for policies that use it: {@code exact} (the trace's
 *     duration), {@code xF} (F times it, e.g. {@code x2}), {@code noisy} (over-estimates drawn with the seed: the
 *     duration times 1 + |e|, e from the HeliosArtifact QSSF estimate's error classes), or {@code none}
 * @param timeSeriesPoints points per time series in the report
 * @param checkpointIntervalMillis every job writes a checkpoint after this much run time since its last one (0:
 *     never), under preempting policies; these periodic checkpoints take no time (they are part of the trace's run
 *     times, which the jobs had with whatever checkpointing they did)
 * @param checkpointWriteMillis how long a victim that checkpoints on notice writes its checkpoint (no progress
 *     meanwhile)
 * @param urgent the urgent workload injected into the trace, or {@code null} for none
 * @param elastic under {@code +elastic} policies: which gangs are elastic and how fast they run on fewer members
 * @param expectedStart measure the engine's expected start times against the actual starts ({@code
 *     --expected-start}; {@link StartForecasts}): a forecast after each cycle in which jobs arrived and wait
 */
public record SimOptions(long seed, int memberGpus, String declaredRuntime, int timeSeriesPoints,
    long checkpointIntervalMillis, long checkpointWriteMillis, UrgentJobs.Spec urgent, ElasticModel elastic,
    boolean expectedStart) {

  public static final long DEFAULT_CHECKPOINT_INTERVAL_MILLIS = 30 * 60_000;
  public static final long DEFAULT_CHECKPOINT_WRITE_MILLIS = 60_000;

  public SimOptions {
    elastic = elastic == null ? ElasticModel.LINEAR_ALL : elastic;
    if (!declaredRuntime.equals("exact") && !declaredRuntime.equals("none") && !declaredRuntime.equals("noisy")
        && !declaredRuntime.matches("x\\d+(\\.\\d+)?")) {
      throw new IllegalArgumentException("--declared-runtime is exact, none, noisy or xF (e.g. x2); was "
          + declaredRuntime);
    }
    if (memberGpus < 0 || timeSeriesPoints < 2) {
      throw new IllegalArgumentException("--member-gpus must be >= 0 and time-series points >= 2");
    }
    if (checkpointIntervalMillis < 0 || checkpointWriteMillis < 0) {
      throw new IllegalArgumentException("checkpoint interval and write time must not be negative");
    }
  }

  public SimOptions(long seed, int memberGpus, String declaredRuntime, int timeSeriesPoints,
      long checkpointIntervalMillis, long checkpointWriteMillis, UrgentJobs.Spec urgent) {
    this(seed, memberGpus, declaredRuntime, timeSeriesPoints, checkpointIntervalMillis, checkpointWriteMillis, urgent,
        null);
  }

  public SimOptions(long seed, int memberGpus, String declaredRuntime, int timeSeriesPoints,
      long checkpointIntervalMillis, long checkpointWriteMillis, UrgentJobs.Spec urgent, ElasticModel elastic) {
    this(seed, memberGpus, declaredRuntime, timeSeriesPoints, checkpointIntervalMillis, checkpointWriteMillis, urgent,
        elastic, false);
  }

  public SimOptions withExpectedStart(boolean on) {
    return new SimOptions(seed, memberGpus, declaredRuntime, timeSeriesPoints, checkpointIntervalMillis,
        checkpointWriteMillis, urgent, elastic, on);
  }

  public SimOptions withElastic(ElasticModel e) {
    return new SimOptions(seed, memberGpus, declaredRuntime, timeSeriesPoints, checkpointIntervalMillis,
        checkpointWriteMillis, urgent, e, expectedStart);
  }

  public SimOptions(long seed, int memberGpus, String declaredRuntime, int timeSeriesPoints) {
    this(seed, memberGpus, declaredRuntime, timeSeriesPoints, DEFAULT_CHECKPOINT_INTERVAL_MILLIS,
        DEFAULT_CHECKPOINT_WRITE_MILLIS, null);
  }

  public static SimOptions defaults() {
    return new SimOptions(1, 0, "exact", 400);
  }

  public SimOptions withSeed(long s) {
    return new SimOptions(s, memberGpus, declaredRuntime, timeSeriesPoints, checkpointIntervalMillis,
        checkpointWriteMillis, urgent, elastic, expectedStart);
  }

  public SimOptions withMemberGpus(int g) {
    return new SimOptions(seed, g, declaredRuntime, timeSeriesPoints, checkpointIntervalMillis,
        checkpointWriteMillis, urgent, elastic, expectedStart);
  }

  public SimOptions withDeclaredRuntime(String d) {
    return new SimOptions(seed, memberGpus, d, timeSeriesPoints, checkpointIntervalMillis, checkpointWriteMillis,
        urgent, elastic, expectedStart);
  }

  public SimOptions withCheckpoints(long intervalMillis, long writeMillis) {
    return new SimOptions(seed, memberGpus, declaredRuntime, timeSeriesPoints, intervalMillis, writeMillis, urgent,
        elastic, expectedStart);
  }

  public SimOptions withUrgent(UrgentJobs.Spec u) {
    return new SimOptions(seed, memberGpus, declaredRuntime, timeSeriesPoints, checkpointIntervalMillis,
        checkpointWriteMillis, u, elastic, expectedStart);
  }
}
