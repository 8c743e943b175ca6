package io.spindle.core.engine;

import io.spindle.core.model.AppId;
import io.spindle.core.model.ResourceVector;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/** One application as the engine tracks it. Mutable; owned by {@link Engine}. */
final class AppState {

  /** Within a leaf: higher priority first, then older, then earlier submitted. */
  static final Comparator<AppState> ORDER = (a, b) -> {
    if (a.priority != b.priority) {
      return a.priority > b.priority ? -1 : 1;
    }
    if (a.submitTimeMillis != b.submitTimeMillis) {
      return Long.compare(a.submitTimeMillis, b.submitTimeMillis);
    }
    return Long.compare(a.seq, b.seq);
  };

  final AppId id;
  final String user;
  /** What it is, for learning run times: its name and tags as the driver words them; {@code null}: unknown. */
  String kind;
  /** Changed only through {@link Admission#reprioritize}, which keeps the leaf's waiting order sorted. */
  int priority;
  final long submitTimeMillis;
  final long seq;
  QueueState leaf;
  final Map<String, DemandState> demands = new LinkedHashMap<>();
  final AllocationList allocations = AllocationList.ofApp();
  ResourceVector usage = ResourceVector.ZERO;
  /** What it has run, settled by {@link EngineState} whenever {@link #usage} changes. */
  final ServiceAttained attained;
  /**
   * The shortest run time its requests have declared ({@code spindle.max-runtime}), {@code 0} if none has: kept
   * after the request is placed, so a run preempted and queued again is ordered by what it has left.
   */
  long declaredRuntimeMillis;

  AppState(AppId id, QueueState leaf, String user, int priority, long submitTimeMillis, long seq) {
    this.id = id;
    this.leaf = leaf;
    this.user = user;
    this.priority = priority;
    this.submitTimeMillis = submitTimeMillis;
    this.seq = seq;
    this.attained = new ServiceAttained(submitTimeMillis);
  }

  /** A request declares {@code millis} of run time: the application's shortest is kept. */
  void declared(long millis) {
    if (millis > 0 && (declaredRuntimeMillis == 0 || millis < declaredRuntimeMillis)) {
      declaredRuntimeMillis = millis;
    }
  }

  /** Time since submission not spent running: what the starvation bound counts (kept across a failover). */
  long waitedMillis(long now) {
    return attained.waitedMillis(now);
  }

  boolean hasPending() {
    return !demands.isEmpty();
  }
}
