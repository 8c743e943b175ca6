package io.spindle.spark.e2e;

import java.io.IOException;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractFunction1;

/**
 * The Spark application of src-test's end-to-end test (SparkSubmitOnSpindleTest), submitted with spark-submit. Not a
 * test itself; it lives here because it compiles against Spark, which only this module has.
 *
 * <ol>
 *   <li>A barrier stage with one task per executor slot: it runs only when every slot exists at once, then each task
 *       meets the others ({@code barrier()}) and says where it ran. Written to {@code <dir>/barrier-1}.
 *   <li>Waits until {@link MarkerCheckpointHandler} has answered a Spindle checkpoint notice (its marker file) and the
 *       executors have gone: a barrier stage that loses an executor fails the job (Spark does not retry a barrier
 *       result stage), so none is started while a preemption is under way. Writes {@code <dir>/executors-lost}.
 *   <li>The same barrier stage again, which needs the executors Spindle took back: it runs once they are re-admitted.
 *       Written to {@code <dir>/barrier-2}.
 * </ol>
 *
 * <p>Arguments: the marker directory, the number of barrier tasks.
 */
public final class GangBarrierJob {

  private GangBarrierJob() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int tasks = Integer.parseInt(args[1]);
    try (JavaSparkContext jsc = new JavaSparkContext(new SparkConf())) {
      write(dir.resolve("barrier-1"), String.join("\n", barrierStage(jsc, tasks)) + "\n");
      long until = System.nanoTime() + Duration.ofMinutes(5).toNanos();
      // The status tracker lists the driver too.
      while (MarkerCheckpointHandler.answered(dir).isEmpty() || jsc.statusTracker().getExecutorInfos().length > 1) {
        if (System.nanoTime() > until) {
          throw new IllegalStateException("no checkpoint notice, or the executors stayed, for 5 minutes");
        }
        Thread.sleep(200);
      }
      write(dir.resolve("executors-lost"), "");
      write(dir.resolve("barrier-2"), String.join("\n", barrierStage(jsc, tasks)) + "\n");
    }
  }

  /** Rows "task executor", one per barrier task, after all of them met. */
  private static List<String> barrierStage(JavaSparkContext jsc, int tasks) {
    JavaRDD<Integer> input = jsc.parallelize(IntStream.range(0, tasks).boxed().toList(), tasks);
    ClassTag<String> tag = ClassTag$.MODULE$.apply(String.class);
    RDD<String> met = input.rdd().barrier().mapPartitions(new MeetAll(), false, tag);
    return new ArrayList<>(JavaRDD.fromRDD(met, tag).collect());
  }

  /** One barrier task: waits for all others, then reports its partition and executor. */
  private static final class MeetAll extends AbstractFunction1<Iterator<Integer>, Iterator<String>>
      implements Serializable {
    @Override
    public Iterator<String> apply(Iterator<Integer> partition) {
      BarrierTaskContext ctx = BarrierTaskContext.get();
      ctx.barrier();
      String row = ctx.partitionId() + " " + SparkEnv.get().executorId() + " of " + ctx.getTaskInfos().length;
      return CollectionConverters.asScala(List.of(row).iterator());
    }
  }

  /** Writes whole or not at all: the test polls for these files. */
  static void write(Path file, String text) {
    try {
      Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
      Files.writeString(tmp, text);
      Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
