package io.spindle.sim.faults;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What one failure-injection run measured: per training job its effective training time and where the rest of its
 * GPU-hours went; for the background work its queueing and the work its failed GPUs cost it; for the cluster the
 * faults injected. Engine time is wall-clock and kept out of {@link #json} (reports are deterministic).
 */
public record FaultResult(String variant, List<Training> training, Background background, long hardwareFaults,
    long faultsOnTraining, int rejected, int sparesHeldAtEnd, long cycles, double engineSeconds) {

  /** One training job; GPU-hours are its wall-time buckets times its GPUs ({@link TrainingRun}). */
  public record Training(String id, int gpus, long intervalMillis, double effective, int hardwareInterruptions,
      int softInterruptions, double usefulGpuHours, double redoneGpuHours, double writeGpuHours,
      double restartGpuHours, double replacingGpuHours, double firstWaitSeconds) {

    double lostGpuHours() {
      return redoneGpuHours + writeGpuHours + restartGpuHours + replacingGpuHours;
    }
  }

  /**
   * The background work: jobs submitted; mean and p99 of queueing (first start − submit; a job still waiting at the
   * end counts its wait so far, a lower bound); still waiting at the end; GPU-hours run and then lost to failed GPUs.
   */
  public record Background(int jobs, int started, double meanWaitSeconds, double p99WaitSeconds, int waitingAtEnd,
      double killedGpuHours) {}

  static FaultResult of(FaultOptions o, List<FaultSimulator.Job> jobs, long horizon, long faults, long onTraining,
      int rejected, int spares, long cycles, long engineNanos) {
    List<Training> training = new ArrayList<>();
    List<Long> waits = new ArrayList<>();
    int started = 0;
    int waiting = 0;
    double killed = 0;
    for (FaultSimulator.Job j : jobs) {
      if (j.training != null) {
        TrainingRun t = j.training;
        training.add(new Training(t.id, t.gpus, t.intervalMillis, t.effective(), t.hardwareInterruptions,
            t.softInterruptions, TrainingRun.gpuHours(t.usefulMillis, t.gpus), TrainingRun.gpuHours(t.redoneMillis,
            t.gpus), TrainingRun.gpuHours(t.writeTotalMillis, t.gpus), TrainingRun.gpuHours(t.restartMillis, t.gpus),
            TrainingRun.gpuHours(t.replacingMillis, t.gpus),
            t.firstStartMillis < 0 ? (horizon - t.submitMillis) / 1000.0 : (t.firstStartMillis - t.submitMillis)
                / 1000.0));
      } else if (!j.rejected) {
        if (j.firstStart >= 0) {
          started++;
          waits.add(j.firstStart - j.submitMillis);
        } else {
          waiting++;
          waits.add(horizon - j.submitMillis);
        }
        killed += TrainingRun.gpuHours(j.killedMillis, j.gpus());
      }
    }
    long[] w = waits.stream().mapToLong(Long::longValue).sorted().toArray();
    double mean = w.length == 0 ? 0 : Arrays.stream(w).average().orElse(0) / 1000.0;
    double p99 = w.length == 0 ? 0 : w[Math.max(0, (int) Math.ceil(0.99 * w.length) - 1)] / 1000.0;
    return new FaultResult(o.name(), training, new Background(w.length, started, mean, p99, waiting, killed), faults,
        onTraining, rejected, spares, cycles, engineNanos / 1e9);
  }

  /** The Markdown rows of a comparison: one per training job, background columns repeated per variant. */
  static String table(List<FaultResult> results) {
    StringBuilder b = new StringBuilder();
    b.append("| variant | job | GPUs | ckpt every | effective | HW / soft interruptions | useful GPU-h | lost GPU-h "
        + "(redone / ckpt writes / restart / re-placing) | other work: mean / p99 wait | other work lost GPU-h |\n");
    b.append("|---|---|---:|---:|---:|---:|---:|---|---:|---:|\n");
    for (FaultResult r : results) {
      for (Training t : r.training) {
        b.append(String.format(Locale.ROOT, "| %s | %s | %,d | %.0f min | **%.1f%%** | %d / %d | %,.0f | %,.0f "
                + "(%,.0f / %,.0f / %,.0f / %,.0f) | %s / %s | %,.0f |%n", r.variant, t.id, t.gpus,
            t.intervalMillis / 60_000.0, 100 * t.effective, t.hardwareInterruptions, t.softInterruptions,
            t.usefulGpuHours, t.lostGpuHours(), t.redoneGpuHours, t.writeGpuHours, t.restartGpuHours,
            t.replacingGpuHours, duration(r.background.meanWaitSeconds()), duration(r.background.p99WaitSeconds()),
            r.background.killedGpuHours()));
      }
    }
    return b.toString();
  }

  static String duration(double seconds) {
    return seconds < 3600 ? String.format(Locale.ROOT, "%.0f min", seconds / 60)
        : String.format(Locale.ROOT, "%.1f h", seconds / 3600);
  }

  /** This run as a JSON object (no wall-clock figures). */
  String json() {
    StringBuilder b = new StringBuilder();
    b.append("{\"variant\": ").append(quote(variant)).append(", \"hardwareFaults\": ").append(hardwareFaults)
        .append(", \"faultsOnTraining\": ").append(faultsOnTraining).append(", \"rejected\": ").append(rejected)
        .append(", \"sparesHeldAtEnd\": ").append(sparesHeldAtEnd).append(", \"engineCycles\": ").append(cycles)
        .append(",\n   \"training\": [");
    for (int i = 0; i < training.size(); i++) {
      Training t = training.get(i);
      b.append(i == 0 ? "\n    " : ",\n    ").append(String.format(Locale.ROOT, "{\"id\": %s, \"gpus\": %d, "
              + "\"checkpointIntervalSeconds\": %.1f, \"effectiveTrainingTime\": %.5f, \"hardwareInterruptions\": %d, "
              + "\"softInterruptions\": %d, \"usefulGpuHours\": %.1f, \"lostGpuHours\": {\"redone\": %.1f, "
              + "\"checkpointWrites\": %.1f, \"restart\": %.1f, \"replacing\": %.1f}, \"firstWaitSeconds\": %.1f}",
          quote(t.id), t.gpus, t.intervalMillis / 1000.0, t.effective, t.hardwareInterruptions,
          t.softInterruptions, t.usefulGpuHours, t.redoneGpuHours, t.writeGpuHours, t.restartGpuHours,
          t.replacingGpuHours, t.firstWaitSeconds));
    }
    Background g = background;
    b.append("],\n   \"background\": ").append(String.format(Locale.ROOT, "{\"jobs\": %d, \"started\": %d, "
            + "\"meanWaitSeconds\": %.1f, \"p99WaitSeconds\": %.1f, \"waitingAtEnd\": %d, \"killedGpuHours\": %.1f}}",
        g.jobs(), g.started(), g.meanWaitSeconds(), g.p99WaitSeconds(), g.waitingAtEnd(), g.killedGpuHours()));
    return b.toString();
  }

  static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}
