package io.spindle.spark;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Which YARN container each executor runs in and how many tasks each runs now, from Spark's listener events: Spindle's
 * notices name containers, Spark schedules on executors. Thread-safe; Spark's listener bus writes, the plugin's
 * notice thread reads.
 */
final class ExecutorTasks {

  /** The executor attribute YARN executors register with (Spark's YarnCoarseGrainedExecutorBackend). */
  static final String CONTAINER_ID = "CONTAINER_ID";

  private final Map<String, String> containerOf = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();

  void executorAdded(String executorId, String containerId) {
    if (containerId != null) {
      containerOf.put(executorId, containerId);
    }
  }

  void executorRemoved(String executorId) {
    containerOf.remove(executorId);
    running.remove(executorId);
  }

  void taskStarted(String executorId) {
    running.computeIfAbsent(executorId, k -> new AtomicInteger()).incrementAndGet();
  }

  void taskEnded(String executorId) {
    AtomicInteger n = running.get(executorId);
    if (n != null) {
      n.updateAndGet(v -> Math.max(0, v - 1));
    }
  }

  /** The executors that run in {@code containerIds}, sorted; containers without an executor (yet) add none. */
  Set<String> executorsIn(Collection<String> containerIds) {
    Set<String> out = new TreeSet<>();
    containerOf.forEach((executor, container) -> {
      if (containerIds.contains(container)) {
        out.add(executor);
      }
    });
    return out;
  }

  /** Tasks running now on the executors in {@code containerIds}. */
  int runningIn(Collection<String> containerIds) {
    int n = 0;
    for (String executor : executorsIn(containerIds)) {
      AtomicInteger r = running.get(executor);
      n += r == null ? 0 : r.get();
    }
    return n;
  }
}
