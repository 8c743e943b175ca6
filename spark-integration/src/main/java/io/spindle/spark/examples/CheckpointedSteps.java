package io.spindle.spark.examples;

import io.spindle.spark.SpindleSpark;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * A training loop in miniature that survives preemption: {@code <steps>} steps, each a barrier stage over
 * {@code <tasks>} GPU task slots. Its state (the step it reached) is saved to {@code <dir>/step} every
 * {@code <every>} steps and reported to Spindle ({@link SpindleSpark#reportCheckpoint}), and saved once more when
 * Spindle announces a preemption ({@link CheckpointedStepsHandler}). A step whose executors are preempted fails (Spark
 * does not retry barrier stages) and is run again once they are back; a new run with the same {@code <dir>} starts
 * from the saved step.
 *
 * <p>Arguments: {@code <dir> <steps> <tasks> [seconds per step, default 1] [save every, default 5]}; {@code <dir>} is
 * any Hadoop file system URI the driver can write ({@code file:///tmp/...} on a one-machine cluster, {@code hdfs://...}).
 * See docs/spark-guide.md.
 */
public final class CheckpointedSteps {

  private static final int ATTEMPTS_PER_STEP = 30;
  private static final long RETRY_PAUSE_MILLIS = 2_000;

  /** The step the loop has completed; read by the handler on Spindle's notice thread. */
  static final AtomicInteger STEP = new AtomicInteger();
  static volatile Path dir;
  static volatile Configuration hadoop;

  private CheckpointedSteps() {}

  public static void main(String[] args) throws Exception {
    int steps = Integer.parseInt(args[1]);
    int tasks = Integer.parseInt(args[2]);
    double seconds = args.length > 3 ? Double.parseDouble(args[3]) : 1;
    int every = args.length > 4 ? Integer.parseInt(args[4]) : 5;
    try (JavaSparkContext jsc = new JavaSparkContext(new SparkConf())) {
      hadoop = jsc.hadoopConfiguration();
      dir = new Path(args[0]);
      STEP.set(load());
      System.out.println("Starting at step " + STEP.get() + " of " + steps);
      while (STEP.get() < steps) {
        runStep(jsc, tasks, seconds);
        int done = STEP.incrementAndGet();
        if (done % every == 0 || done == steps) {
          String where = save(done);
          System.out.println("Step " + done + " saved to " + where + "; Spindle told: "
              + SpindleSpark.reportCheckpoint(where, System.currentTimeMillis()));
        }
      }
      System.out.println("All " + steps + " steps done");
    }
  }

  /** One step; run again when it fails because its executors went (preempted), until they are back. */
  private static void runStep(JavaSparkContext jsc, int tasks, double seconds) throws Exception {
    for (int attempt = 1; ; attempt++) {
      try {
        List<String> rows = BarrierStage.run(jsc, tasks, seconds);
        if (attempt > 1) {
          System.out.println("Step " + (STEP.get() + 1) + " ran on attempt " + attempt + ": " + rows);
        }
        return;
      } catch (Exception e) { // Spark (Scala) throws SparkException without declaring it
        if (!(e instanceof SparkException)) {
          throw e;
        }
        if (attempt == ATTEMPTS_PER_STEP) {
          throw new IllegalStateException("step " + (STEP.get() + 1) + " failed " + attempt + " times", e);
        }
        System.out.println("Step " + (STEP.get() + 1) + " failed (" + e.getMessage().lines().findFirst().orElse("")
            + "); running it again");
        Thread.sleep(RETRY_PAUSE_MILLIS);
      }
    }
  }

  /** Writes the step reached; returns where. */
  static String save(int step) throws IOException {
    Path file = new Path(dir, "step");
    FileSystem fs = file.getFileSystem(hadoop);
    Path tmp = new Path(dir, "step.tmp");
    try (FSDataOutputStream out = fs.create(tmp, true)) {
      out.write(Integer.toString(step).getBytes(StandardCharsets.UTF_8));
    }
    fs.delete(file, false);
    if (!fs.rename(tmp, file)) {
      throw new IOException("cannot rename " + tmp + " to " + file);
    }
    return fs.makeQualified(file).toString();
  }

  private static int load() throws IOException {
    Path file = new Path(dir, "step");
    FileSystem fs = file.getFileSystem(hadoop);
    if (!fs.exists(file)) {
      return 0;
    }
    try (FSDataInputStream in = fs.open(file)) {
      return Integer.parseInt(new String(in.readAllBytes(), StandardCharsets.UTF_8).strip());
    }
  }
}
