package io.spindle.spark.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.spark.SparkConf;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;

/**
 * Appends "added EXECUTOR CONTAINER" and "removed EXECUTOR REASON" lines to {@code <spark.spindle.e2e.dir>/executors},
 * until {@link #stop()}. Given in {@code spark.extraListeners}, so that it hears of the executors that register
 * while the SparkContext starts (a YARN driver waits for most of its first executors before the job's code runs).
 * Spark's listener bus calls it on one thread.
 */
public final class ExecutorLogListener extends SparkListener {

  private static volatile boolean stopped;

  private final Path file;

  public ExecutorLogListener(SparkConf conf) {
    this.file = Path.of(conf.get(MarkerCheckpointHandler.DIR), "executors");
  }

  /** No more lines: the executors stopped with the application are not the test's business. */
  static void stop() {
    stopped = true;
  }

  @Override
  public void onExecutorAdded(SparkListenerExecutorAdded added) {
    append("added " + added.executorId() + " "
        + added.executorInfo().attributes().getOrElse("CONTAINER_ID", () -> "-"));
  }

  @Override
  public void onExecutorRemoved(SparkListenerExecutorRemoved removed) {
    append("removed " + removed.executorId() + " " + removed.reason().replace('\n', ' '));
  }

  private void append(String line) {
    if (stopped) {
      return;
    }
    try {
      Files.writeString(file, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
