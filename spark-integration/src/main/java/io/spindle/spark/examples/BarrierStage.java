package io.spindle.spark.examples;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.resource.ResourceInformation;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractFunction1;

/**
 * A barrier stage of {@code tasks} tasks, as distributed training runs them: Spark starts it only when a slot exists for
 * every task at once, each task holds its GPU(s) for {@code seconds}, then all meet at a barrier.
 */
final class BarrierStage {

  private BarrierStage() {}

  /** One line per task: partition, executor, host and the GPU addresses Spark gave it. */
  static List<String> run(JavaSparkContext jsc, int tasks, double seconds) {
    JavaRDD<Integer> input = jsc.parallelize(IntStream.range(0, tasks).boxed().toList(), tasks);
    ClassTag<String> tag = ClassTag$.MODULE$.apply(String.class);
    RDD<String> out = input.rdd().barrier().mapPartitions(new Task(seconds), false, tag);
    return new ArrayList<>(JavaRDD.fromRDD(out, tag).collect());
  }

  private static final class Task extends AbstractFunction1<Iterator<Integer>, Iterator<String>>
      implements Serializable {
    private static final long serialVersionUID = 1L;
    private final double seconds;

    Task(double seconds) {
      this.seconds = seconds;
    }

    @Override
    public Iterator<String> apply(Iterator<Integer> partition) {
      BarrierTaskContext ctx = BarrierTaskContext.get();
      try {
        Thread.sleep((long) (seconds * 1000)); // the step's work, on the task's GPU(s)
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
      ctx.barrier();
      // Whole GPUs and MIG instances are Spark's "gpu"; a share of a GPU has a resource name of its own.
      StringBuilder devices = new StringBuilder();
      CollectionConverters.asJava(ctx.resources()).forEach((String name, ResourceInformation info) -> devices
          .append(devices.isEmpty() ? "" : "; ")
          .append(name).append(' ').append(String.join(",", info.addresses())));
      String row = "task " + ctx.partitionId() + " of " + ctx.getTaskInfos().length + " on executor "
          + SparkEnv.get().executorId() + " (" + ctx.getTaskInfos()[ctx.partitionId()].address() + "), "
          + (devices.isEmpty() ? "gpu none" : devices);
      return CollectionConverters.asScala(List.of(row).iterator());
    }
  }
}
