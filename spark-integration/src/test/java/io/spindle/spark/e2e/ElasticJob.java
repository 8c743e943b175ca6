package io.spindle.spark.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.storage.StorageLevel;
import scala.Tuple2;

/**
 * The Spark application of src-test's SparkElasticGangTest, under dynamic allocation with an elastic executor gang.
 * Not a test itself; it lives here because it compiles against Spark, which only this module has.
 *
 * <ol>
 *   <li><b>Grow.</b> The first job's tasks wait until {@code max} executors have each run one of them: the backlog
 *       keeps dynamic allocation asking for more executors until Spindle grants them, and every executor ends up
 *       holding cached blocks. A second job shuffles the cached data, its tasks held likewise: every executor holds
 *       shuffle output too. Then {@code <dir>/cached}.
 *   <li><b>Shrink.</b> Waits until only {@code min} executors are left (Spindle's resize notice had the plugin
 *       decommission the others), then writes {@code <dir>/shrunk}.
 *   <li><b>Finish.</b> Reads the cached data and the shuffle again, checks both results, writes {@code <dir>/result};
 *       a wrong result fails the application.
 * </ol>
 *
 * <p>Every computation of a partition, of the cached data or of the shuffle's map side, leaves a file
 * {@code <dir>/runs/<what>-<partition>-<task attempt>-<executor>}: blocks lost with a decommissioned executor would
 * be recomputed and leave a second file. {@link ExecutorLogListener} ({@code spark.extraListeners}) writes which
 * executors came and went. Arguments: the marker directory, min and max executors, partitions.
 */
public final class ElasticJob {

  private static final int ROWS = 10_000;
  private static final int KEYS = 10;
  private static final Duration PHASE_TIMEOUT = Duration.ofMinutes(4);

  private ElasticJob() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int min = Integer.parseInt(args[1]);
    int max = Integer.parseInt(args[2]);
    int partitions = Integer.parseInt(args[3]);
    Files.createDirectories(dir.resolve("runs"));
    try (JavaSparkContext jsc = new JavaSparkContext(new SparkConf())) {
      String runs = dir.resolve("runs").toString();
      JavaRDD<Integer> data = jsc.parallelize(IntStream.range(0, ROWS).boxed().toList(), partitions)
          .mapPartitionsWithIndex((partition, rows) -> {
            ran(runs, "data", partition);
            awaitExecutorsRan(runs, "data", max);
            return rows;
          }, true)
          .persist(StorageLevel.MEMORY_ONLY());
      long count = data.count();
      JavaPairRDD<Integer, Long> sums = data.mapPartitionsWithIndex((partition, rows) -> {
        ran(runs, "map", partition);
        awaitExecutorsRan(runs, "map", max);
        return rows;
      }, true).mapToPair(x -> new Tuple2<>(x % KEYS, (long) x)).reduceByKey(Long::sum, KEYS);
      sums.count(); // the map side's output stays on the executors for the last job
      GangBarrierJob.write(dir.resolve("cached"), count + "\n");

      await(() -> executors(jsc) <= min, "Spindle's resize to " + min + " executors");
      GangBarrierJob.write(dir.resolve("shrunk"), executors(jsc) + "\n");

      long total = data.map(x -> (long) x).reduce(Long::sum);
      Map<Integer, Long> byKey = new TreeMap<>(sums.collectAsMap());
      check(count == ROWS, "rows " + count);
      check(total == (long) ROWS * (ROWS - 1) / 2, "total " + total);
      for (int k = 0; k < KEYS; k++) {
        long expected = 0;
        for (int x = k; x < ROWS; x += KEYS) {
          expected += x;
        }
        check(byKey.getOrDefault(k, -1L) == expected, "key " + k + ": " + byKey.get(k) + ", not " + expected);
      }
      ExecutorLogListener.stop(); // the executors stopped with the application are not the test's business
      GangBarrierJob.write(dir.resolve("result"), "rows " + count + "\ntotal " + total + "\nkeys " + byKey + "\n");
    }
  }

  /** Executors now, without the driver (the status tracker lists it too). */
  private static int executors(JavaSparkContext jsc) {
    return jsc.statusTracker().getExecutorInfos().length - 1;
  }

  private static void ran(String runs, String what, int partition) throws IOException {
    Files.createFile(Path.of(runs, what + "-" + partition + "-" + TaskContext.get().taskAttemptId() + "-"
        + SparkEnv.get().executorId()));
  }

  /**
   * Holds a task until {@code max} executors have each run a task of {@code what}: every executor then holds some of
   * its blocks, and while the first tasks wait, the others back up, so dynamic allocation asks for more executors.
   */
  private static void awaitExecutorsRan(String runs, String what, int max) {
    await(() -> {
      try (Stream<Path> files = Files.list(Path.of(runs))) {
        return files.map(f -> f.getFileName().toString().split("-")).filter(f -> f[0].equals(what)).map(f -> f[3])
            .distinct().count() >= max;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, max + " executors to run " + what + " tasks");
  }

  private static void await(java.util.function.BooleanSupplier done, String what) {
    long until = System.nanoTime() + PHASE_TIMEOUT.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > until) {
        throw new IllegalStateException("waited " + PHASE_TIMEOUT + " for " + what);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for " + what, e);
      }
    }
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new IllegalStateException("wrong result: " + what);
    }
  }
}
