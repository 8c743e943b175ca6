package io.spindle.sim;

import io.spindle.core.engine.EngineStatus.ExpectedStart;
import io.spindle.core.engine.EngineStatus.StartConfidence;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * How accurate the engine's expected start times are (issue #26 item 2): each job that still waits after the cycle
 * of its arrival gets the expected start the status views would show then (its first prediction, the one a user
 * reads when they first ask), and when it first starts the absolute error of that prediction is counted. Jobs whose
 * prediction was unknown are counted apart; jobs that started in their arrival cycle waited for nothing to predict.
 */
final class StartForecasts {

  private final List<double[]> known = new ArrayList<>(); // {|error| s, wait s, confidence ordinal}
  private int unknown;
  private int predicted;

  /** The prediction for a job that waits; {@code null} when it was not asked for. */
  void predicted(JobRun r, ExpectedStart e) {
    r.predictedStart = e;
    predicted++;
  }

  /** A job's first start, at {@code t}. */
  void started(JobRun r, long t) {
    ExpectedStart e = r.predictedStart;
    if (e == null) {
      return;
    }
    if (!e.known()) {
      unknown++;
      return;
    }
    known.add(new double[] {Math.abs(t - e.millis()) / 1000.0, (t - r.job.submitMillis()) / 1000.0,
        e.confidence().ordinal()});
  }

  RunResult.StartAccuracy result() {
    Map<StartConfidence, Integer> byConfidence = new EnumMap<>(StartConfidence.class);
    for (double[] k : known) {
      byConfidence.merge(StartConfidence.values()[(int) k[2]], 1, Integer::sum);
    }
    double[] errors = known.stream().mapToDouble(k -> k[0]).sorted().toArray();
    double[] waits = known.stream().mapToDouble(k -> k[1]).sorted().toArray();
    return new RunResult.StartAccuracy(predicted, known.size(), unknown,
        byConfidence.getOrDefault(StartConfidence.EXACT, 0), percentile(errors, 50), percentile(errors, 90),
        percentile(waits, 50));
  }

  private static double percentile(double[] sorted, double p) {
    return sorted.length == 0 ? 0 : Stats.percentile(sorted, p);
  }

  /** For tests: the absolute errors counted, in seconds, sorted. */
  double[] errorsSeconds() {
    double[] e = known.stream().mapToDouble(k -> k[0]).toArray();
    Arrays.sort(e);
    return e;
  }
}
