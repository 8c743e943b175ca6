package io.spindle.sim;

import io.spindle.core.engine.EngineEvent;
import java.util.HashSet;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * What the simulator has scheduled on virtual time, earliest first; events of one instant in a fixed order (by kind,
 * then in the order they were scheduled), so that a replay is the same every time.
 */
final class Timeline {

  /** A job reaches its trace duration (if {@code generation} is still its progress's generation). */
  static final int END = 0;
  /** A simulated NodeManager reports a MIG layout it applied. */
  static final int MIG_REPORT = 1;
  /** Nothing happens but a cycle: the engine has something to decide at this time (a timeout, a deadline). */
  static final int WAKE = 2;
  /** A victim finished writing the checkpoint a notice asked for. */
  static final int CHECKPOINT_WRITTEN = 3;

  record Timed(long time, int kind, long seq, JobRun run, EngineEvent event, long generation) {}

  private final PriorityQueue<Timed> queue = new PriorityQueue<>((a, b) -> a.time != b.time
      ? Long.compare(a.time, b.time) : a.kind != b.kind ? Integer.compare(a.kind, b.kind) : Long.compare(a.seq, b.seq));
  /** Wake-ups scheduled through {@link #wakeOnce}, so that many reasons to wake at one instant cost one entry. */
  private final Set<Long> wakes = new HashSet<>();
  private long seq;

  void add(long time, int kind, JobRun run, EngineEvent event, long generation) {
    queue.add(new Timed(time, kind, seq++, run, event, generation));
  }

  void wake(long time) {
    add(time, WAKE, null, null, 0);
  }

  void wakeOnce(long time) {
    if (wakes.add(time)) {
      wake(time);
    }
  }

  boolean isEmpty() {
    return queue.isEmpty();
  }

  /** The earliest time scheduled; only when not empty. */
  long nextTime() {
    return queue.peek().time;
  }

  /** The next event at or before {@code now}, or {@code null}. */
  Timed pollDue(long now) {
    if (queue.isEmpty() || queue.peek().time > now) {
      return null;
    }
    Timed t = queue.poll();
    if (t.kind == WAKE) {
      wakes.remove(t.time);
    }
    return t;
  }
}
