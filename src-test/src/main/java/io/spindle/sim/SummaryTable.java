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
          + "%,.0f s; offered load %.3f. Work lost to preemption: %s.%n", r.bounds().meanDuration(),
          r.bounds().gpuTimeOverCapacitySeconds(), r.bounds().offeredLoad(), JsonReport.WORK_LOST_NOTE));
    }
    return s.toString();
  }
}
