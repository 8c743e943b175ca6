package io.spindle.sim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The jobs of a trace in submit order (stable: rows with the same submit time keep their file order), and how many
 * rows were left out and why.
 */
public record Trace(String source, ColumnMapping mapping, List<SimJob> jobs, Map<String, Integer> dropped) {

  public Trace {
    jobs = List.copyOf(jobs);
    dropped = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(dropped));
  }

  /** The first {@code n} jobs (a slice for tests and quick runs). */
  public Trace limit(int n) {
    if (n >= jobs.size()) {
      return this;
    }
    Map<String, Integer> d = new LinkedHashMap<>(dropped);
    d.merge("beyond --limit", jobs.size() - n, Integer::sum);
    return new Trace(source, mapping, jobs.subList(0, n), d);
  }

  /**
   * Jobs whose queue is not one of {@code leaves}: dropped (the HeliosArtifact simulator drops VCs it has no size
   * for) when {@code fallback} is {@code null}, else sent to {@code fallback}.
   */
  public Trace restrictToQueues(Set<String> leaves, String fallback) {
    List<SimJob> kept = new ArrayList<>();
    Map<String, Integer> d = new LinkedHashMap<>(dropped);
    for (SimJob j : jobs) {
      if (leaves.contains(j.queue())) {
        kept.add(j);
      } else if (fallback != null) {
        kept.add(j.withQueue(fallback));
      } else {
        d.merge("queue '" + j.queue() + "' not in the cluster", 1, Integer::sum);
      }
    }
    return new Trace(source, mapping, kept, d);
  }

  public int droppedCount() {
    return dropped.values().stream().mapToInt(Integer::intValue).sum();
  }
}
