package io.spindle.spark;

import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.ExecutorAllocationClient;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.ExecutorDecommissionInfo;
import org.apache.spark.scheduler.SchedulerBackend;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's own executor decommissioning, the path dynamic allocation takes to remove an executor when
 * {@code spark.decommission.enabled} is set: the scheduler stops offering it tasks, its block manager moves shuffle
 * and cached blocks to other executors ({@code spark.storage.decommission.*}), and the executor exits once it runs no
 * task and its blocks are moved. The public {@code SparkContext.killExecutors} would neither decommission nor work
 * under dynamic allocation, hence the scheduler backend's {@code ExecutorAllocationClient} (Spark-internal API, the
 * same from Spark 3.1 to 4.x).
 */
final class SparkExecutorDecommission implements ExecutorDecommission {

  private static final Logger LOG = LoggerFactory.getLogger(SparkExecutorDecommission.class);

  private final SparkContext sc;

  SparkExecutorDecommission(SparkContext sc) {
    this.sc = sc;
  }

  @Override
  public Set<String> decommission(Set<String> executors, String why) {
    SchedulerBackend backend = sc.schedulerBackend();
    if (!(backend instanceof ExecutorAllocationClient client)) {
      LOG.warn("Spark's scheduler backend {} cannot decommission executors; {} go when Spindle reclaims them",
          backend.getClass().getName(), executors);
      return Set.of();
    }
    @SuppressWarnings("unchecked")
    Tuple2<String, ExecutorDecommissionInfo>[] infos = new Tuple2[executors.size()];
    int i = 0;
    for (String executor : executors) {
      // No worker host: only the executor goes, its node (and shuffle files an external service keeps there) stays.
      infos[i++] = new Tuple2<>(executor, new ExecutorDecommissionInfo(why, Option.empty()));
    }
    // Spark's executor target stays as it is (adjustTargetNumExecutors false): what dynamic allocation still wants,
    // Spark asks for again, and Spindle, which also asks again for the members it took on the application's behalf,
    // grants them when GPUs are idle. Lowering it would make Spark release those as surplus.
    return new TreeSet<>(CollectionConverters.asJava(client.decommissionExecutors(infos, false, false)));
  }
}
