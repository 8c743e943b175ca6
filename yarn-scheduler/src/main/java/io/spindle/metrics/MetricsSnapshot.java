package io.spindle.metrics;

import io.spindle.core.engine.EngineStats;
import io.spindle.core.engine.QueueSnapshot;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the gauges report: taken once per cycle on the scheduling thread and published whole, so a scrape (HTTP or
 * JMX thread) reads one consistent picture and never touches the engine.
 */
public record MetricsSnapshot(EngineStats stats, Map<String, QueueSnapshot> queues) {

  public static final MetricsSnapshot EMPTY = new MetricsSnapshot(EngineStats.EMPTY, Map.of());

  public MetricsSnapshot {
    queues = Map.copyOf(queues);
  }

  public static MetricsSnapshot of(EngineStats stats, List<QueueSnapshot> queues) {
    Map<String, QueueSnapshot> byPath = new LinkedHashMap<>();
    queues.forEach(q -> byPath.put(q.path(), q));
    return new MetricsSnapshot(stats, byPath);
  }

  public Optional<QueueSnapshot> queue(String path) {
    return Optional.ofNullable(queues.get(path));
  }
}
