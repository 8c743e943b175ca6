package io.spindle.sim;

import io.spindle.sim.RunResult.QueueResult;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The report as one self-contained HTML file: a summary table, then charts drawn in the browser by ECharts (from
 * the {@code org.webjars.npm:echarts} webjar, inlined so the file opens offline) from the JSON report, which is
 * embedded as data. A first script records any JavaScript error into the page, where {@code scripts/check-report}
 * looks for it.
 */
public final class HtmlReport {

  static final String ECHARTS = "/META-INF/resources/webjars/echarts/" + echartsVersion() + "/dist/echarts.min.js";

  private HtmlReport() {}

  public static String write(Report report, String json) {
    StringBuilder h = new StringBuilder(1_200_000);
    h.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.append("<title>Spindle simulator: ").append(esc(report.trace().source())).append("</title>\n");
    h.append("<script>window.__reportErrors = [];\n"
        + "window.addEventListener('error', function (e) {\n"
        + "  window.__reportErrors.push(String(e.message || e));\n"
        + "  var el = document.getElementById('js-errors');\n"
        + "  if (el) { el.textContent = window.__reportErrors.join('\\n'); }\n"
        + "});</script>\n");
    h.append("<style>body{font-family:system-ui,sans-serif;margin:24px;max-width:1200px}"
        + "table{border-collapse:collapse;font-size:13px;margin:8px 0 16px}"
        + "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f3f3f3}"
        + "td:first-child,th:first-child{text-align:left}.chart{width:100%;margin-bottom:24px}"
        + ".note{color:#555;font-size:13px}#js-errors{color:#b00}</style>\n");
    h.append("<script>").append(resource(ECHARTS)).append("</script>\n");
    h.append("</head>\n<body>\n");
    h.append("<h1>Spindle simulator report</h1>\n");
    h.append("<p class=\"note\">Trace <b>").append(esc(report.trace().source())).append("</b>: ")
        .append(report.trace().jobs().size()).append(" jobs replayed");
    if (report.trace().droppedCount() > 0) {
      h.append(" (").append(report.trace().droppedCount()).append(" left out: ")
          .append(esc(report.trace().dropped().toString())).append(")");
    }
    h.append(". Cluster <b>").append(esc(report.cluster().name())).append("</b>: ")
        .append(report.cluster().nodes().size()).append(" nodes, ").append(report.cluster().totalGpus())
        .append(" GPUs, ").append(report.cluster().leafNames().size()).append(" queues. Seed ")
        .append(report.options().seed()).append(", declared run times: ")
        .append(esc(report.options().declaredRuntime())).append(".</p>\n");
    h.append("<pre id=\"js-errors\"></pre>\n");
    summary(h, report);
    h.append("<div id=\"charts\"></div>\n");
    h.append("<script id=\"report-data\" type=\"application/json\">")
        .append(json.replace("</", "<\\/")).append("</script>\n");
    h.append("<script>").append(resource("/io/spindle/sim/report.js")).append("</script>\n");
    h.append("</body>\n</html>\n");
    return h.toString();
  }

  private static void summary(StringBuilder h, Report report) {
    h.append("<h2>Summary</h2>\n<table>\n<tr><th>policy</th><th>finished</th><th>unfinished</th>"
        + "<th>mean JCT (s)</th><th>p50 JCT</th><th>p99 JCT</th><th>mean queue (s)</th><th>p50 queue</th>"
        + "<th>p99 queue</th><th>max queue</th><th>waited</th><th>busy util.</th><th>partial-gang GPU-h</th>"
        + "<th>fair-share max dev.</th><th>Jain</th><th>stranded MIG slices</th></tr>\n");
    for (RunResult r : report.runs()) {
      h.append("<tr><td>").append(esc(r.policy())).append("</td>")
          .append(td("%d", r.jobs().finished())).append(td("%d", r.jobs().unfinished()))
          .append(td("%,.0f", r.jct().mean())).append(td("%,.0f", r.jct().p50())).append(td("%,.0f", r.jct().p99()))
          .append(td("%,.0f", r.queueDelay().mean())).append(td("%,.0f", r.queueDelay().p50()))
          .append(td("%,.0f", r.queueDelay().p99())).append(td("%,.0f", r.queueDelay().max()))
          .append(td("%.2f%%", 100 * r.waitedFraction())).append(td("%.2f%%", 100 * r.utilisation().busy()))
          .append(td("%,.1f", r.gangs().partialGpuHours())).append(td("%.3f", r.fairness().maxDeviation()))
          .append(td("%.3f", r.fairness().jainIndex())).append(td("%.1f", r.mig().strandedSlicesMean()))
          .append("</tr>\n");
    }
    RunResult first = report.runs().isEmpty() ? null : report.runs().get(0);
    if (first != null) {
      h.append("<tr><td>lower bound</td><td></td><td></td>").append(td("%,.0f", first.bounds().meanDuration()))
          .append("<td colspan=\"13\" style=\"text-align:left\">mean duration (no queueing); total GPU-time / ")
          .append("capacity = ").append(String.format(Locale.ROOT, "%,.0f", first.bounds().gpuTimeOverCapacitySeconds()))
          .append(" s; offered load ").append(String.format(Locale.ROOT, "%.3f", first.bounds().offeredLoad()))
          .append("</td></tr>\n");
    }
    h.append("</table>\n");
    preemption(h, report);
    h.append("<h2>How each policy runs</h2>\n<ul>\n");
    for (RunResult r : report.runs()) {
      h.append("<li><b>").append(esc(r.policy())).append("</b>: ").append(esc(r.implementation())).append("</li>\n");
    }
    h.append("</ul>\n");
    h.append("<h2>Per queue (avg JCT / avg queue / p99 queue / max queue, seconds)</h2>\n<table>\n<tr><th>queue</th>"
        + "<th>jobs</th>");
    for (RunResult r : report.runs()) {
      h.append("<th>").append(esc(r.policy())).append("</th>");
    }
    h.append("</tr>\n");
    if (first != null) {
      for (int i = 0; i < first.queues().size(); i++) {
        h.append("<tr><td>").append(esc(first.queues().get(i).queue())).append("</td>")
            .append(td("%d", first.queues().get(i).jobs()));
        for (RunResult r : report.runs()) {
          QueueResult q = r.queues().get(i);
          h.append(td("%,.0f / %,.0f / %,.0f / %,.0f", q.jct().mean(), q.queueDelay().mean(), q.queueDelay().p99(),
              q.queueDelay().max()));
        }
        h.append("</tr>\n");
      }
    }
    h.append("</table>\n");
  }

  private static void preemption(StringBuilder h, Report report) {
    h.append("<h2>Preemption</h2>\n");
    if (!SummaryTable.showsPreemption(report)) {
      h.append("<p class=\"note\">No policy of this run preempts: no work is lost to preemption.</p>\n");
      return;
    }
    h.append("<table>\n<tr><th>policy</th><th>notices</th><th>withdrawn</th><th>preemptions</th>"
        + "<th>for urgent</th><th>jobs preempted</th><th>work lost GPU-h</th><th>checkpoint writing GPU-h</th>"
        + "<th>urgent jobs</th><th>urgent wait mean (s)</th><th>p50</th><th>p95</th><th>max</th>"
        + "<th>urgent served by preemption</th></tr>\n");
    for (RunResult r : report.runs()) {
      RunResult.Preemption p = r.preemption();
      h.append("<tr><td>").append(esc(r.policy())).append("</td>").append(td("%,d", p.notices()))
          .append(td("%,d", p.withdrawn())).append(td("%,d", p.preemptions()))
          .append(td("%,d", p.preemptionsForUrgent())).append(td("%,d", p.jobsPreempted()))
          .append(td("%,.2f", p.workLostGpuHours())).append(td("%,.2f", p.checkpointGpuHours()))
          .append(td("%,d", p.urgentWait().count())).append(td("%,.0f", p.urgentWait().mean()))
          .append(td("%,.0f", p.urgentWait().p50())).append(td("%,.0f", p.urgentWait().p95()))
          .append(td("%,.0f", p.urgentWait().max())).append(td("%,d", p.urgentServedByPreemption())).append("</tr>\n");
    }
    h.append("</table>\n<p class=\"note\">Work lost: GPU-time victims had done since their last checkpoint, done "
        + "again after they resume. Checkpoint writing: GPU-time victims spent writing a checkpoint on notice.</p>\n");
  }

  private static String td(String format, Object... args) {
    return "<td>" + String.format(Locale.ROOT, format, args) + "</td>";
  }

  static String esc(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }

  private static String resource(String name) {
    try (InputStream in = HtmlReport.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException(name + " is not on the classpath");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The webjar's version, read from its Maven metadata so the pom stays the one place it is pinned. */
  private static String echartsVersion() {
    try (InputStream in = HtmlReport.class.getResourceAsStream(
        "/META-INF/maven/org.webjars.npm/echarts/pom.properties")) {
      if (in == null) {
        throw new IllegalStateException("the echarts webjar is not on the classpath");
      }
      java.util.Properties p = new java.util.Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
