package io.spindle.sim;

import java.util.Locale;

/** The run's headline figures as a Markdown table (stdout of the CLI; pasted into docs/benchmarks.md). */
final class SummaryTable {

  private SummaryTable() {}

  static String markdown(Report report) {
    StringBuilder s = new StringBuilder();
    s.append(String.format(Locale.ROOT, "trace %s: %d jobs (%d left out); cluster %s: %d GPUs; seed %d%n%n",
        report.trace().source(), report.trace().jobs().size(), report.trace().droppedCount(), report.cluster().name(),
        report.cluster().totalGpus(), report.options().seed()));
    s.append("| policy | finished | unfinished | JCT mean / p50 / p99 (s) | queue mean / p50 / p99 / max (s) | waited |"
        + " busy util. | partial-gang GPU-h | max fair dev. | Jain | stranded MIG slices |\n");
    s.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (RunResult r : report.runs()) {
      s.append(String.format(Locale.ROOT, "| %s | %,d | %,d | %,.0f / %,.0f / %,.0f | %,.0f / %,.0f / %,.0f / %,.0f |"
          + " %.2f%% | %.2f%% | %,.1f | %.3f | %.3f | %.1f |%n", r.policy(), r.jobs().finished(), r.jobs().unfinished(),
          r.jct().mean(), r.jct().p50(), r.jct().p99(), r.queueDelay().mean(), r.queueDelay().p50(),
          r.queueDelay().p99(), r.queueDelay().max(), 100 * r.waitedFraction(), 100 * r.utilisation().busy(),
          r.gangs().partialGpuHours(), r.fairness().maxDeviation(), r.fairness().jainIndex(),
          r.mig().strandedSlicesMean()));
    }
    if (!report.runs().isEmpty()) {
      RunResult r = report.runs().get(0);
      s.append(String.format(Locale.ROOT, "%nlower bounds: JCT %,.0f s (mean duration); total GPU-time / capacity "
          + "%,.0f s; offered load %.3f.%n", r.bounds().meanDuration(),
          r.bounds().gpuTimeOverCapacitySeconds(), r.bounds().offeredLoad()));
    }
    if (showsPreemption(report)) {
      s.append(preemption(report));
    }
    if (report.runs().stream().anyMatch(r -> r.startAccuracy().predicted() > 0)) {
      s.append(expectedStart(report));
    }
    return s.toString();
  }

  /**
   * How close the expected start shown after each job's arrival cycle came to its start ({@code --expected-start}),
   * beside the median wait of the same jobs.
   */
  static String expectedStart(Report report) {
    StringBuilder s = new StringBuilder("\nexpected start (first prediction after the arrival cycle) against the "
        + "actual start, jobs that waited, declared run times " + report.options().declaredRuntime() + ":\n\n"
        + "| policy | predicted | known (exact) | unknown | abs. error p50 / p90 (s) | their wait p50 (s) |\n"
        + "|---|---|---|---|---|---|\n");
    for (RunResult r : report.runs()) {
      RunResult.StartAccuracy e = r.startAccuracy();
      s.append(String.format(Locale.ROOT, "| %s | %,d | %,d (%,d) | %,d | %,.0f / %,.0f | %,.0f |%n", r.policy(),
          e.predicted(), e.known(), e.exact(), e.unknown(), e.medianAbsErrorSeconds(), e.p90AbsErrorSeconds(),
          e.medianWaitSeconds()));
    }
    return s.toString();
  }

  /** Whether some policy preempts or urgent jobs were injected: then the preemption table is worth showing. */
  static boolean showsPreemption(Report report) {
    return report.runs().stream()
        .anyMatch(r -> r.preemption().notices() > 0 || r.preemption().urgentWait().count() > 0
            || r.preemption().resizes() > 0
            || !r.preemption().model().startsWith("none"));
  }

  /** Preemption's cost and the urgent jobs' wait, one row per policy (printed when some policy preempts). */
  static String preemption(Report report) {
    StringBuilder s = new StringBuilder();
    s.append("\n| policy | notices | withdrawn | preemptions (for urgent) | jobs preempted | work lost GPU-h |"
        + " checkpoint writing GPU-h | urgent jobs | urgent wait mean / p50 / p95 / max (s) | urgent served by"
        + " preemption | makespan (s) |\n");
    s.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (RunResult r : report.runs()) {
      RunResult.Preemption p = r.preemption();
      s.append(String.format(Locale.ROOT, "| %s | %,d | %,d | %,d (%,d) | %,d | %,.2f | %,.2f | %,d | %,.0f / %,.0f / "
          + "%,.0f / %,.0f | %,d | %,.0f |%n", r.policy(), p.notices(), p.withdrawn(), p.preemptions(),
          p.preemptionsForUrgent(), p.jobsPreempted(),
          p.workLostGpuHours(), p.checkpointGpuHours(), p.urgentWait().count(), p.urgentWait().mean(),
          p.urgentWait().p50(), p.urgentWait().p95(), p.urgentWait().max(), p.urgentServedByPreemption(),
          r.utilisation().makespanSeconds()));
    }
    if (report.runs().stream().anyMatch(r -> r.preemption().resizes() > 0)) {
      s.append("\nelastic gangs: GPU-time lost to preemption (work redone + checkpoints written on notice) and to"
          + " resizing (checkpoints written to grow + work redone after a shrink at its deadline):\n\n"
          + "| policy | preemption GPU-h | resizes | resizing GPU-h |\n|---|---|---|---|\n");
      for (RunResult r : report.runs()) {
        RunResult.Preemption p = r.preemption();
        s.append(String.format(Locale.ROOT, "| %s | %,.2f | %,d | %,.2f |%n", r.policy(), p.wastedGpuHours(),
            p.resizes(), p.resizingGpuHours()));
      }
    }
    RunResult first = report.runs().get(0);
    if (first.preemption().urgentWaitByGpus().size() > 1) {
      s.append("\nurgent wait by job size, mean / p50 / p95 / max (s):\n\n| policy |");
      first.preemption().urgentWaitByGpus().forEach((g, t) -> s.append(String.format(Locale.ROOT,
          " %d GPUs (%d jobs) |", g, t.count())));
      s.append("\n|---|").append("---|".repeat(first.preemption().urgentWaitByGpus().size())).append('\n');
      for (RunResult r : report.runs()) {
        s.append("| ").append(r.policy()).append(" |");
        r.preemption().urgentWaitByGpus().forEach((g, t) -> s.append(String.format(Locale.ROOT,
            " %,.0f / %,.0f / %,.0f / %,.0f |", t.mean(), t.p50(), t.p95(), t.max())));
        s.append('\n');
      }
    }
    return s.toString();
  }
}
