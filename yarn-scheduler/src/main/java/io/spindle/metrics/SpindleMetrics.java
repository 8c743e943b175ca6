package io.spindle.metrics;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.EngineStats;
import io.spindle.core.engine.QueueSnapshot;
import io.spindle.core.model.AppId;
import io.spindle.core.model.ResourceVector;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * Spindle's Dropwizard metrics. The scheduling thread records cycles and decisions and publishes a
 * {@link MetricsSnapshot} after each cycle; gauges only read the last published snapshot, so JMX and Prometheus
 * scrapes never touch the engine. Names are listed in docs/admin-guide.md ("Metrics").
 */
public final class SpindleMetrics {

  /** The figures of a queue exported per resource, as {@code spindle.queue.<figure>.<resource>.<path>}. */
  private static final Map<String, Function<QueueSnapshot, ResourceVector>> QUEUE_FIGURES =
      new LinkedHashMap<>();
  private static final Map<String, ToDoubleFunction<ResourceVector>> RESOURCES = new LinkedHashMap<>();

  static {
    QUEUE_FIGURES.put("guarantee", QueueSnapshot::guarantee);
    QUEUE_FIGURES.put("fair_share", QueueSnapshot::fairShare);
    QUEUE_FIGURES.put("usage", QueueSnapshot::usage);
    QUEUE_FIGURES.put("pending", QueueSnapshot::pending);
    RESOURCES.put("memory_mb", v -> v.memoryMb());
    RESOURCES.put("vcores", v -> v.vcores());
    RESOURCES.put("gpus", ResourceVector::gpus);
  }

  private final MetricRegistry registry = new MetricRegistry();
  private final Timer cycle = registry.timer("spindle.cycle.seconds");
  private final Map<Class<?>, Meter> decisions = new LinkedHashMap<>();
  private final Meter preemptedContainers = registry.meter("spindle.preempted.containers");
  private final Meter recoveredContainers = registry.meter("spindle.recovered.containers");
  private final Timer checkpointAck = registry.timer("spindle.checkpoint.ack.seconds");
  /** Containers reclaimed from a queue's applications, as {@code spindle.queue.preempted.containers.<path>}. */
  private static final String QUEUE_PREEMPTED = PrometheusNames.QUEUE + "preempted.containers.";
  private final Set<String> queueGauges = new HashSet<>();
  private final Set<String> migGauges = new HashSet<>();
  private volatile MetricsSnapshot last = MetricsSnapshot.EMPTY;

  public SpindleMetrics() {
    // Every decision type from the start, so a rate reads 0 rather than missing before the first one.
    for (Class<?> type : Decision.class.getPermittedSubclasses()) {
      decisions.put(type, registry.meter(PrometheusNames.DECISIONS + snakeCase(type.getSimpleName())));
    }
    for (String outcome : List.of("done", "extend", "reclaimed_after_done", "reclaimed_at_deadline", "withdrawn")) {
      // Meters, not counters: the bridge exports a meter as a Prometheus counter ({@code _total}), a counter as a gauge.
      registry.meter(PrometheusNames.CHECKPOINT_OUTCOMES + outcome);
    }
    gauge("spindle.pending.gangs", s -> s.stats().pendingGangs());
    gauge("spindle.pending.gang.oldest.age.seconds", s -> s.stats().oldestPendingGangAgeMillis() / 1000.0);
    gauge("spindle.pending.containers", s -> s.stats().pendingContainers());
    gauge("spindle.running.containers", s -> s.stats().runningContainers());
    gauge("spindle.reservations", s -> s.stats().reservations());
    gauge("spindle.reservation.oldest.age.seconds", s -> s.stats().oldestReservationAgeMillis() / 1000.0);
    gauge("spindle.gpus.total", s -> s.stats().totalGpus());
    gauge("spindle.gpus.free", s -> s.stats().freeWholeGpus());
    gauge("spindle.gpus.used", SpindleMetrics::usedGpus);
    gauge("spindle.gpus.out.of.service", s -> s.stats().gpuService().out());
    gauge("spindle.gpus.degraded", s -> s.stats().gpuService().degraded());
    gauge("spindle.gpus.quarantined", s -> s.stats().gpuService().quarantined());
    gauge("spindle.gpu.failures", s -> s.stats().gpuService().failures());
    gauge("spindle.mig.slices.total", s -> s.stats().migSlices().total());
    gauge("spindle.mig.slices.used", s -> s.stats().migSlices().used());
    gauge("spindle.mig.slices.stranded", s -> s.stats().migSlices().unheldOnBusy());
    gauge("spindle.mig.utilisation", s -> {
      long total = s.stats().migSlices().total();
      return total == 0 ? 0 : (double) s.stats().migSlices().used() / total;
    });
    gauge("spindle.gpus.utilisation", s -> {
      double total = s.stats().totalGpus();
      return total == 0 ? 0 : usedGpus(s) / total;
    });
  }

  public MetricRegistry registry() {
    return registry;
  }

  /** Starts timing a cycle; close the context when its decisions are applied. */
  public Timer.Context timeCycle() {
    return cycle.time();
  }

  /**
   * Counts one cycle's decisions by type, and the containers its reclaims take back, in all and by the queue of the
   * application that lost them ({@code queueOf}: application id to leaf queue path, empty when unknown).
   */
  public void decided(List<Decision> all, Function<AppId, Optional<String>> queueOf) {
    for (Decision d : all) {
      Meter m = decisions.get(d.getClass());
      if (m != null) {
        m.mark();
      }
      if (d instanceof Decision.Preempt p) {
        preemptedContainers.mark(p.allocationIds().size());
        queueOf.apply(p.appId()).ifPresent(q -> registry.meter(QUEUE_PREEMPTED + q).mark(p.allocationIds().size()));
      }
    }
  }

  /** A running container this scheduler learnt of from its NodeManager's re-registration, after a restart or failover. */
  public void recovered() {
    recoveredContainers.mark();
  }

  /** An application answered a checkpoint notice ({@code done} or {@code extend}) this long after it was issued. */
  public void checkpointAnswered(String outcome, long latencyMillis) {
    checkpointAck.update(Math.max(0, latencyMillis), TimeUnit.MILLISECONDS);
    checkpointOutcome(outcome);
  }

  /** A notice ended: {@code reclaimed_after_done}, {@code reclaimed_at_deadline} or {@code withdrawn}. */
  public void checkpointOutcome(String outcome) {
    registry.meter(PrometheusNames.CHECKPOINT_OUTCOMES + outcome).mark();
  }

  /**
   * Publishes the end-of-cycle figures; registers gauges for queues and MIG profiles seen for the first time. Called
   * by one thread only (the scheduling thread): the sets of registered names are not shared.
   */
  public void publish(EngineStats stats, List<QueueSnapshot> queues) {
    MetricsSnapshot next = MetricsSnapshot.of(stats, queues);
    last = next;
    for (String path : next.queues().keySet()) {
      if (queueGauges.add(path)) {
        QUEUE_FIGURES.forEach((figure, of) -> RESOURCES.forEach((resource, amount) ->
            gauge(PrometheusNames.QUEUE + figure + "." + resource + "." + path,
                s -> s.queue(path).map(q -> amount.applyAsDouble(of.apply(q))).orElse(0.0))));
        // Usage history (0 while it is off): decayed borrowed GPU-equivalent-seconds, what weighs idle capacity.
        gauge(PrometheusNames.QUEUE + "usage_history.gpu_seconds." + path, s -> s.queue(path)
            .map(q -> q.usageHistory() == null ? 0.0 : q.usageHistory().gpuSeconds()).orElse(0.0));
        registry.meter(QUEUE_PREEMPTED + path); // Reads 0 until the queue loses a container, rather than missing.
      }
    }
    // A queue removed by a reconfiguration disappears from the output rather than reading 0 for ever.
    for (String path : Set.copyOf(queueGauges)) {
      if (!next.queues().containsKey(path)) {
        queueGauges.remove(path);
        registry.removeMatching((name, metric) -> name.startsWith(PrometheusNames.QUEUE)
            && name.endsWith("." + path) && name.split("\\.").length == path.split("\\.").length + 4);
      }
    }
    for (String profile : stats.freeMigInstances().keySet()) {
      if (migGauges.add(profile)) {
        gauge(PrometheusNames.MIG_FREE + profile, s -> s.stats().freeMigInstances().getOrDefault(profile, 0));
      }
    }
  }

  public MetricsSnapshot last() {
    return last;
  }

  private static double usedGpus(MetricsSnapshot s) {
    return s.queue("root").map(q -> q.usage().gpus()).orElse(0.0);
  }

  private void gauge(String name, ToDoubleFunction<MetricsSnapshot> read) {
    registry.register(name, (Gauge<Double>) () -> read.applyAsDouble(last));
  }

  static String snakeCase(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT);
  }
}
