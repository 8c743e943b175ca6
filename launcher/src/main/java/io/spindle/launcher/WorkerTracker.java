package io.spindle.launcher;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The state of one run (attempt) of the gang's workers, by rank: whether each started, reported progress, ended and
 * how. Decides when the run has failed — a worker exited non-zero or was lost, or reported no progress for the hang
 * timeout — and when it has succeeded (every worker exited 0). Time comes from an injected clock, so the hang rule is
 * testable without waiting.
 */
public final class WorkerTracker {

  /** One worker's state, as {@code spindle-run} prints it. */
  public enum State { STARTING, RUNNING, SUCCEEDED, FAILED }

  private final int attempt;
  private final Duration hangTimeout;
  private final LongSupplier clockMillis;
  private final State[] states;
  private final long[] lastProgressMillis;
  private final long[] steps;
  private final String[] hosts;
  private String failure;

  /**
   * @param hangTimeout a running worker that reports no progress for this long has failed; zero: never
   */
  public WorkerTracker(int attempt, List<String> hostsByRank, Duration hangTimeout, LongSupplier clockMillis) {
    this.attempt = attempt;
    this.hangTimeout = hangTimeout;
    this.clockMillis = clockMillis;
    int n = hostsByRank.size();
    states = new State[n];
    lastProgressMillis = new long[n];
    steps = new long[n];
    hosts = hostsByRank.toArray(new String[0]);
    java.util.Arrays.fill(states, State.STARTING);
    java.util.Arrays.fill(steps, -1);
  }

  public int attempt() {
    return attempt;
  }

  public synchronized void started(int rank) {
    states[rank] = State.RUNNING;
    lastProgressMillis[rank] = clockMillis.getAsLong(); // The hang clock starts when the process does.
  }

  /** A progress report of {@code rank}; {@code step} is the worker's own count (-1 when it gives none). */
  public synchronized void progress(int rank, long step) {
    lastProgressMillis[rank] = clockMillis.getAsLong();
    if (step >= 0) {
      steps[rank] = step;
    }
  }

  /** The worker's process ended with {@code exitStatus} ({@code diagnostics}: YARN's words for it). */
  public synchronized void ended(int rank, int exitStatus, String diagnostics) {
    if (exitStatus == 0) {
      states[rank] = State.SUCCEEDED;
      return;
    }
    states[rank] = State.FAILED;
    fail(String.format(Locale.ROOT, "rank %d on %s exited with status %d%s", rank, hosts[rank], exitStatus,
        diagnostics == null || diagnostics.isBlank() ? "" : " (" + firstLine(diagnostics) + ")"));
  }

  /** The worker could not be started at all. */
  public synchronized void startFailed(int rank, String why) {
    states[rank] = State.FAILED;
    fail("rank " + rank + " on " + hosts[rank] + " could not start: " + why);
  }

  /** Marks hung workers as failed; returns the run's failure, if any. */
  public synchronized Optional<String> checkHangs() {
    if (!hangTimeout.isZero() && failure == null) {
      long now = clockMillis.getAsLong();
      for (int r = 0; r < states.length; r++) {
        if (states[r] == State.RUNNING && now - lastProgressMillis[r] > hangTimeout.toMillis()) {
          states[r] = State.FAILED;
          fail(String.format(Locale.ROOT, "rank %d on %s hung: no progress report for %d s (--hang-timeout %d s)",
              r, hosts[r], (now - lastProgressMillis[r]) / 1000, hangTimeout.toSeconds()));
        }
      }
    }
    return failure();
  }

  public synchronized Optional<String> failure() {
    return Optional.ofNullable(failure);
  }

  /** Whether every worker's process has started and none has ended: the run can be restarted at another size. */
  public synchronized boolean allRunning() {
    for (State s : states) {
      if (s != State.RUNNING) {
        return false;
      }
    }
    return failure == null;
  }

  public synchronized boolean succeeded() {
    for (State s : states) {
      if (s != State.SUCCEEDED) {
        return false;
      }
    }
    return true;
  }

  /** One line per rank: state, host and last reported step. */
  public synchronized List<String> describe() {
    List<String> out = new ArrayList<>();
    for (int r = 0; r < states.length; r++) {
      out.add(String.format(Locale.ROOT, "rank %d %s on %s%s", r, states[r], hosts[r],
          steps[r] >= 0 ? " (step " + steps[r] + ")" : ""));
    }
    return out;
  }

  private void fail(String why) {
    if (failure == null) {
      failure = why; // The first failure is the cause; the rest follow from stopping the gang.
    }
  }

  private static String firstLine(String s) {
    String t = s.strip();
    int nl = t.indexOf('\n');
    return nl < 0 ? t : t.substring(0, nl);
  }
}
