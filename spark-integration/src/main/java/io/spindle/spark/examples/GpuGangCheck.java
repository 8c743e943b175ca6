package io.spindle.spark.examples;

import io.spindle.spark.SpindleSpark;
import java.util.List;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Checks a Spark-on-Spindle setup: one barrier stage over {@code <tasks>} task slots (all executors' slots at once,
 * as a gang gives them), each task printing the GPUs (or MIG instances) Spark assigned it. Prints to the driver's
 * log (stdout); exits non-zero if the stage fails.
 *
 * <p>Arguments: {@code <tasks> [seconds per task, default 1]}. See docs/spark-guide.md.
 */
public final class GpuGangCheck {

  private GpuGangCheck() {}

  public static void main(String[] args) {
    int tasks = Integer.parseInt(args[0]);
    double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 1;
    try (JavaSparkContext jsc = new JavaSparkContext(new SparkConf())) {
      List<String> rows = BarrierStage.run(jsc, tasks, seconds);
      rows.forEach(System.out::println);
      System.out.println("Barrier stage of " + tasks + " tasks done; Spindle checkpoint notices "
          + (SpindleSpark.listening() ? "are" : "are NOT") + " received by this driver");
    }
  }
}
