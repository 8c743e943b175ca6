package io.spindle.sim;

import java.io.PrintStream;
import java.util.Locale;

/**
 * Progress of one run on stderr: a bar redrawn in place on a terminal; elsewhere (logs, CI) a plain line every 10 s,
 * and only once the run has lasted 5 s, so short runs print nothing. Wall-clock time is used for display only;
 * the simulation itself never sees it.
 */
final class ProgressBar implements Simulator.Progress {

  private final PrintStream err;
  private final String label;
  private final boolean tty;
  private final long startNanos = System.nanoTime();
  private long lastDrawNanos;
  private boolean drawn;

  ProgressBar(PrintStream err, String label, boolean tty) {
    this.err = err;
    this.label = label;
    this.tty = tty;
  }

  @Override
  public void update(int settled, int total, long virtualMillis) {
    long now = System.nanoTime();
    long interval = tty ? 200_000_000L : 10_000_000_000L;
    if (now - lastDrawNanos < interval || (!tty && now - startNanos < 5_000_000_000L)) {
      return;
    }
    lastDrawNanos = now;
    double f = total == 0 ? 1 : (double) settled / total;
    int width = 30;
    int full = (int) Math.round(f * width);
    String line = String.format(Locale.ROOT, "%-28s [%s%s] %5.1f%% %,d/%,d jobs, day %.1f, %.0f s", label,
        "#".repeat(full), " ".repeat(width - full), 100 * f, settled, total, virtualMillis / 86_400_000.0,
        (now - startNanos) / 1e9);
    if (tty) {
      err.print("\r" + line);
    } else {
      err.println(line);
    }
    drawn = true;
  }

  /** Ends the bar with the run's wall time (stderr only, never in the report). */
  void done(int jobs) {
    double s = (System.nanoTime() - startNanos) / 1e9;
    if (tty && drawn) {
      err.print("\r" + " ".repeat(100) + "\r");
    }
    err.printf(Locale.ROOT, "%-28s %,d jobs in %.1f s wall%n", label, jobs, s);
  }
}
