package io.spindle.spark.examples;

import io.spindle.spark.SpindleSpark;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.resource.ResourceInformation;
import scala.Tuple2;

/**
 * A job for an elastic executor gang under dynamic allocation: {@code <tasks>} independent tasks, each holding its GPU
 * for {@code <seconds>}, their results cached and then counted per executor through a shuffle. The backlog of tasks
 * makes dynamic allocation ask for more executors, which Spindle grants while GPUs are idle; should Spindle shrink the
 * gang meanwhile, the executors it names are decommissioned and their cached and shuffle blocks move to the others.
 * Prints to the driver's log (stdout) how many tasks each executor (and GPU) ran; exits non-zero if the job fails.
 *
 * <p>Arguments: {@code <tasks> [seconds per task, default 1]}. See docs/spark-guide.md.
 */
public final class ElasticGpuTasks {

  private ElasticGpuTasks() {}

  public static void main(String[] args) {
    int tasks = Integer.parseInt(args[0]);
    double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 1;
    try (JavaSparkContext jsc = new JavaSparkContext(new SparkConf())) {
      JavaRDD<String> ranOn = jsc.parallelize(IntStream.range(0, tasks).boxed().toList(), tasks)
          .map(task -> work(seconds)).cache();
      Map<String, Long> perExecutor = new TreeMap<>(ranOn.mapToPair(where -> new Tuple2<>(where, 1L))
          .reduceByKey(Long::sum).collectAsMap());
      perExecutor.forEach((where, n) -> System.out.println(n + " task(s) on " + where));
      long total = perExecutor.values().stream().mapToLong(Long::longValue).sum();
      if (total != tasks) {
        throw new IllegalStateException(total + " tasks counted, not " + tasks);
      }
      System.out.println(tasks + " tasks on " + perExecutor.size() + " executor GPU(s); Spindle's notices "
          + (SpindleSpark.listening() ? "are" : "are NOT") + " received by this driver");
    }
  }

  /** Holds the task's GPU for {@code seconds}; returns its executor and GPU address. */
  private static String work(double seconds) throws InterruptedException {
    Thread.sleep((long) (seconds * 1000)); // the task's work, on its GPU
    ResourceInformation gpu = TaskContext.get().resources().get("gpu").getOrElse(() -> null);
    return "executor " + SparkEnv.get().executorId() + " GPU " + (gpu == null ? "-" : String.join(",",
        gpu.addresses()));
  }
}
