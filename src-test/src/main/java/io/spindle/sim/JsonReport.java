package io.spindle.sim;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import io.spindle.core.queue.FairShareCalculator;
import io.spindle.core.queue.QueueConfig;
import io.spindle.sim.RunResult.QueueResult;
import io.spindle.sim.Stats.Distribution;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Path;
import java.util.Map;

/**
 * The report as JSON. Holds nothing that varies between runs of the same inputs (no wall-clock times, no absolute
 * paths), and numbers are rounded to fixed decimals, so two runs with the same seed write the same bytes.
 */
public final class JsonReport {

  private JsonReport() {}

  public static String write(Report report) {
    StringWriter out = new StringWriter();
    try (JsonGenerator g = new JsonFactory().createGenerator(out)) {
      g.setPrettyPrinter(new DefaultPrettyPrinter());
      g.writeStartObject();
      g.writeStringField("tool", "spindle-sim");
      trace(g, report.trace());
      cluster(g, report.cluster());
      g.writeObjectFieldStart("options");
      g.writeNumberField("seed", report.options().seed());
      g.writeNumberField("memberGpus", report.options().memberGpus());
      g.writeStringField("declaredRuntime", report.options().declaredRuntime());
      num(g, "checkpointIntervalSeconds", report.options().checkpointIntervalMillis() / 1000.0, 3);
      num(g, "checkpointWriteSeconds", report.options().checkpointWriteMillis() / 1000.0, 3);
      UrgentJobs.Spec u = report.options().urgent();
      if (u != null) {
        g.writeObjectFieldStart("urgent");
        g.writeStringField("queue", UrgentJobs.QUEUE);
        g.writeNumberField("jobs", u.jobs());
        num(g, "share", u.share(), 6);
        g.writeArrayFieldStart("gpus");
        for (int x : u.gpus()) {
          g.writeNumber(x);
        }
        g.writeEndArray();
        num(g, "minSeconds", u.minMillis() / 1000.0, 3);
        num(g, "maxSeconds", u.maxMillis() / 1000.0, 3);
        g.writeEndObject();
      }
      g.writeEndObject();
      g.writeArrayFieldStart("runs");
      for (RunResult r : report.runs()) {
        run(g, r);
      }
      g.writeEndArray();
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString() + "\n";
  }

  private static void trace(JsonGenerator g, Trace t) throws IOException {
    g.writeObjectFieldStart("trace");
    g.writeStringField("source", Path.of(t.source()).getFileName().toString());
    g.writeObjectFieldStart("columns");
    for (Map.Entry<String, String> e : t.mapping().columns().entrySet()) {
      g.writeStringField(e.getKey(), e.getValue());
    }
    g.writeEndObject();
    g.writeStringField("columnPreset", t.mapping().preset());
    g.writeNumberField("jobs", t.jobs().size());
    g.writeObjectFieldStart("dropped");
    for (Map.Entry<String, Integer> e : t.dropped().entrySet()) {
      g.writeNumberField(e.getKey(), e.getValue());
    }
    g.writeEndObject();
    g.writeEndObject();
  }

  private static void cluster(JsonGenerator g, ClusterSpec c) throws IOException {
    g.writeObjectFieldStart("cluster");
    g.writeStringField("name", c.name());
    g.writeNumberField("nodes", c.nodes().size());
    g.writeNumberField("gpus", c.totalGpus());
    g.writeBooleanField("partitioned", !c.partitions().isEmpty());
    g.writeArrayFieldStart("queues");
    Map<String, FairShareCalculator.Limits> limits = FairShareCalculator.resolveLimits(c.queueTree(), c.capacity());
    for (QueueConfig q : c.queueTree().leaves()) {
      g.writeStartObject();
      g.writeStringField("name", q.name());
      g.writeStringField("path", q.path());
      num(g, "guaranteeGpus", limits.get(q.path()).guarantee().gpus(), 3);
      num(g, "maximumGpus", limits.get(q.path()).maximum().gpus(), 3);
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeEndObject();
  }

  private static void run(JsonGenerator g, RunResult r) throws IOException {
    g.writeStartObject();
    g.writeStringField("policy", r.policy());
    g.writeStringField("implementation", r.implementation());
    g.writeObjectFieldStart("jobs");
    g.writeNumberField("submitted", r.jobs().submitted());
    g.writeNumberField("finished", r.jobs().finished());
    g.writeNumberField("rejected", r.jobs().rejected());
    g.writeNumberField("unfinished", r.jobs().unfinished());
    g.writeNumberField("engineCycles", r.jobs().engineCycles());
    g.writeEndObject();
    dist(g, "jctSeconds", r.jct());
    dist(g, "queueDelaySeconds", r.queueDelay());
    num(g, "waitedFraction", r.waitedFraction(), 6);
    g.writeObjectFieldStart("utilisation");
    num(g, "busy", r.utilisation().busy(), 6);
    num(g, "held", r.utilisation().held(), 6);
    num(g, "makespanSeconds", r.utilisation().makespanSeconds(), 3);
    num(g, "busyGpuHours", r.utilisation().busyGpuHours(), 3);
    g.writeEndObject();
    RunResult.StartAccuracy eta = r.startAccuracy();
    if (eta.predicted() > 0) { // Only with --expected-start: reports without it keep their bytes.
      g.writeObjectFieldStart("expectedStart");
      g.writeNumberField("predicted", eta.predicted());
      g.writeNumberField("known", eta.known());
      g.writeNumberField("unknown", eta.unknown());
      g.writeNumberField("exact", eta.exact());
      num(g, "medianAbsErrorSeconds", eta.medianAbsErrorSeconds(), 3);
      num(g, "p90AbsErrorSeconds", eta.p90AbsErrorSeconds(), 3);
      num(g, "medianWaitSeconds", eta.medianWaitSeconds(), 3);
      g.writeEndObject();
    }
    g.writeObjectFieldStart("fairness");
    num(g, "maxDeviation", r.fairness().maxDeviation(), 6);
    num(g, "meanDeviation", r.fairness().meanDeviation(), 6);
    num(g, "jainIndex", r.fairness().jainIndex(), 6);
    num(g, "contendedSeconds", r.fairness().contendedSeconds(), 3);
    g.writeEndObject();
    g.writeObjectFieldStart("partialGangs");
    num(g, "gpuHours", r.gangs().partialGpuHours(), 3);
    g.writeNumberField("jobsEverPartial", r.gangs().jobsEverPartial());
    g.writeNumberField("jobsPartialAtEnd", r.gangs().jobsPartialAtEnd());
    g.writeEndObject();
    g.writeObjectFieldStart("mig");
    g.writeNumberField("slices", r.mig().slices());
    num(g, "strandedSlicesMean", r.mig().strandedSlicesMean(), 3);
    num(g, "heldSlicesMean", r.mig().heldSlicesMean(), 3);
    g.writeNumberField("repartitions", r.mig().repartitions());
    g.writeEndObject();
    g.writeObjectFieldStart("lowerBounds");
    num(g, "jctSeconds", r.bounds().meanDuration(), 3);
    num(g, "gpuTimeOverCapacitySeconds", r.bounds().gpuTimeOverCapacitySeconds(), 3);
    num(g, "offeredLoad", r.bounds().offeredLoad(), 6);
    g.writeEndObject();
    preemption(g, r.preemption());
    g.writeArrayFieldStart("queues");
    for (QueueResult q : r.queues()) {
      g.writeStartObject();
      g.writeStringField("queue", q.queue());
      g.writeNumberField("jobs", q.jobs());
      g.writeNumberField("finished", q.finished());
      dist(g, "jctSeconds", q.jct());
      dist(g, "queueDelaySeconds", q.queueDelay());
      num(g, "guaranteeShare", q.guaranteeShare(), 6);
      num(g, "meanShare", q.meanShare(), 6);
      num(g, "meanFairShare", q.meanFairShare(), 6);
      num(g, "meanAbsDeviation", q.meanAbsDeviation(), 6);
      g.writeEndObject();
    }
    g.writeEndArray();
    array(g, "queueDelayPercentilesSeconds", r.queueDelayPercentiles(), 3);
    array(g, "jctPercentilesSeconds", r.jctPercentiles(), 3);
    g.writeObjectFieldStart("timeSeries");
    g.writeNumberField("startEpochSeconds", r.series().startEpochSeconds());
    num(g, "bucketSeconds", r.series().bucketSeconds(), 3);
    array(g, "busyGpus", r.series().busyGpus(), 3);
    array(g, "heldGpus", r.series().heldGpus(), 3);
    array(g, "waitingJobs", r.series().waitingJobs(), 3);
    g.writeObjectFieldStart("queueGpus");
    for (Map.Entry<String, double[]> e : r.series().queueGpus().entrySet()) {
      array(g, e.getKey(), e.getValue(), 3);
    }
    g.writeEndObject();
    g.writeObjectFieldStart("queueFairGpus");
    for (Map.Entry<String, double[]> e : r.series().queueFairGpus().entrySet()) {
      array(g, e.getKey(), e.getValue(), 3);
    }
    g.writeEndObject();
    g.writeEndObject();
    g.writeEndObject();
  }

  private static void preemption(JsonGenerator g, RunResult.Preemption p) throws IOException {
    g.writeObjectFieldStart("preemption");
    g.writeStringField("model", p.model());
    g.writeNumberField("notices", p.notices());
    g.writeNumberField("withdrawn", p.withdrawn());
    g.writeNumberField("preemptions", p.preemptions());
    g.writeNumberField("preemptionsForUrgent", p.preemptionsForUrgent());
    g.writeNumberField("jobsPreempted", p.jobsPreempted());
    num(g, "workLostGpuHours", p.workLostGpuHours(), 3);
    num(g, "checkpointGpuHours", p.checkpointGpuHours(), 3);
    num(g, "wastedGpuHours", p.wastedGpuHours(), 3);
    tail(g, "urgentWaitSeconds", p.urgentWait());
    g.writeObjectFieldStart("urgentWaitSecondsByGpus");
    for (Map.Entry<Integer, Stats.Tail> e : p.urgentWaitByGpus().entrySet()) {
      tail(g, String.valueOf(e.getKey()), e.getValue());
    }
    g.writeEndObject();
    g.writeNumberField("urgentServedByPreemption", p.urgentServedByPreemption());
    if (p.resizes() > 0) { // Only elastic policies resize; other reports keep their bytes.
      g.writeNumberField("resizes", p.resizes());
      num(g, "resizingGpuHours", p.resizingGpuHours(), 3);
    }
    g.writeEndObject();
  }

  private static void tail(JsonGenerator g, String name, Stats.Tail t) throws IOException {
    g.writeObjectFieldStart(name);
    g.writeNumberField("count", t.count());
    num(g, "mean", t.mean(), 3);
    num(g, "p50", t.p50(), 3);
    num(g, "p95", t.p95(), 3);
    num(g, "max", t.max(), 3);
    g.writeEndObject();
  }

  private static void dist(JsonGenerator g, String name, Distribution d) throws IOException {
    g.writeObjectFieldStart(name);
    g.writeNumberField("count", d.count());
    num(g, "mean", d.mean(), 3);
    num(g, "p50", d.p50(), 3);
    num(g, "p99", d.p99(), 3);
    num(g, "max", d.max(), 3);
    g.writeEndObject();
  }

  private static void array(JsonGenerator g, String name, double[] v, int decimals) throws IOException {
    g.writeArrayFieldStart(name);
    for (double x : v) {
      g.writeNumber(round(x, decimals));
    }
    g.writeEndArray();
  }

  private static void num(JsonGenerator g, String name, double v, int decimals) throws IOException {
    g.writeFieldName(name);
    g.writeNumber(round(v, decimals));
  }

  /** Fixed decimals, trailing zeros dropped, so output never shows binary noise such as 0.30000000000000004. */
  static BigDecimal round(double v, int decimals) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      throw new IllegalArgumentException("not a finite number: " + v);
    }
    BigDecimal b = BigDecimal.valueOf(v).setScale(decimals, RoundingMode.HALF_EVEN).stripTrailingZeros();
    return b.signum() == 0 ? BigDecimal.ZERO : b.scale() < 0 ? b.setScale(0) : b;
  }
}
