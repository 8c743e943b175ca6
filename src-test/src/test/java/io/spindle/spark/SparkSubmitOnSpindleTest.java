package io.spindle.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.yarn.CycleRecordingScheduler.Allocated;
import io.spindle.yarn.UnmanagedAm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code spark-submit} (Spark's {@code SparkSubmit}, in a JVM of its own with Spark's classpath and this
 * cluster's {@code HADOOP_CONF_DIR}) runs a Spark application in YARN cluster mode on a MiniYARNCluster scheduled by
 * Spindle (2 NodeManagers x 2 GPUs, a real ZooKeeper):
 *
 * <ol>
 *   <li>Its two executors ask for {@code yarn.io/gpu} with Spark's own keys ({@code spark.executor.resource.gpu.amount})
 *       and, tagged {@code spindle.gang=executors}, are allocated as one gang, in one scheduling cycle; GPU discovery
 *       is {@code spindle-gpu-discovery.sh}; a barrier stage over all four task slots completes.
 *   <li>An urgent gang in queue {@code b} (below its guarantee) makes Spindle preempt the executors (queue {@code a}
 *       keeps its fair share through another application's memory, so taking them is allowed): the driver's
 *       {@link io.spindle.spark.SpindlePlugin} gets the checkpoint notice, calls the application's handler (it names the
 *       notice's containers and executors in a file) and acknowledges, and the urgent gang starts.
 *   <li>The urgent gang ends; Spindle re-admits the executors, again as one gang in one cycle; the application runs its
 *       barrier stage again and finishes SUCCEEDED, and {@code spark-submit} exits 0.
 * </ol>
 *
 * <p>Spark comes from Maven ({@code src-test/spark-runtime}); the plugin JAR, the application (in spark-integration's
 * test classes) and the discovery script from {@code spark-integration}, which {@code mvn verify} builds first.
 * Takes 1-3 minutes.
 */
class SparkSubmitOnSpindleTest {

  private static final int EXECUTORS = 2;
  private static final int GPUS_PER_EXECUTOR = SparkOnSpindle.GPUS_PER_NODE;
  private static final int TASKS = EXECUTORS * GPUS_PER_EXECUTOR; // one GPU per task

  private static SparkOnSpindle spindle;

  @TempDir
  static Path work;

  @BeforeAll
  static void start() throws Exception {
    spindle = SparkOnSpindle.start("spark-on-spindle", work);
  }

  @AfterAll
  static void stop() throws Exception {
    if (spindle != null) {
      spindle.close();
    }
  }

  @Test
  void aGangOfGpuExecutorsStartsTogetherCheckpointsWhenPreemptedAndFinishesAfterReAdmission() throws Exception {
    Path markers = Files.createDirectories(work.resolve("markers"));
    Path logs = Files.createDirectories(work.resolve("logs"));
    Path submitLog = work.resolve("spark-submit.log");
    Process submit = sparkSubmit(markers, logs, submitLog);
    YarnClient yarn = spindle.yarn;
    Configuration conf = spindle.conf;
    try {
      // 1. The executors start as one gang and a barrier stage over all their slots completes.
      awaitFile(markers.resolve("barrier-1"), Duration.ofMinutes(4), submit);
      ApplicationId app = spindle.application("spindle-e2e");
      assertThat(Files.readAllLines(markers.resolve("barrier-1"))).hasSize(TASKS).allMatch(l -> l.endsWith(" of " + TASKS));
      List<Allocated> first = spindle.executorContainers(app);
      assertThat(first).as("the executors' containers").hasSize(EXECUTORS);
      assertThat(first).extracting(Allocated::cycle).as("allocated in one scheduling cycle").containsOnly(
          first.get(0).cycle());

      // 2. An urgent gang in queue b preempts them; the plugin calls the handler, which saves and acknowledges.
      // Spindle never pushes a queue below its fair share, so queue a keeps another application (memory, no GPU)
      // that holds it at its share without the executors: they are what can be taken.
      try (UnmanagedAm other = UnmanagedAm.register(yarn, conf, UnmanagedAm.submit(yarn, "memory", "a", Set.of()))) {
        other.ask(1, Resource.newInstance(3072, 1));
        assertThat(other.awaitHeld(1, Duration.ofSeconds(30))).isEqualTo(1);
        try (UnmanagedAm urgent = UnmanagedAm.register(yarn, conf,
            UnmanagedAm.submit(yarn, "urgent", "b", Set.of("spindle.gang.size=2")))) {
          urgent.ask(2, gpus(1));
          assertThat(urgent.awaitHeld(2, Duration.ofSeconds(90))).as("the urgent gang started").isEqualTo(2);
          Path checkpoint = awaitCheckpoint(markers);
          List<String> saved = Files.readAllLines(checkpoint);
          assertThat(saved.get(0)).as("the notice named the executors' containers").isEqualTo("containers "
              + first.stream().map(a -> a.container().toString()).sorted().collect(Collectors.joining(",")));
          assertThat(saved.get(1).substring("executors ".length()).split(",")).as("known to Spark as two executors")
              .hasSize(EXECUTORS);
          assertThat(reportedCheckpoint(app)).as("the plugin reported the handler's checkpoint to Spindle")
              .isEqualTo(checkpoint.toUri().toString());
          assertThat(Files.exists(markers.resolve("barrier-2"))).as("no barrier stage without the executors")
              .isFalse();
          // The urgent job runs a while: Spark's AM hears of the lost executors (one AM heartbeat) before they can
          // come back. (Were they re-admitted before that, Spark would release them and ask again: a second gang.)
          awaitFile(markers.resolve("executors-lost"), Duration.ofSeconds(60), submit);
          Thread.sleep(3 * SparkOnSpindle.AM_HEARTBEAT_MILLIS);
        }

        // 3. The urgent gang ended: the executors are re-admitted as one gang and the application finishes.
        assertThat(submit.waitFor(4, java.util.concurrent.TimeUnit.MINUTES)).as("spark-submit ended").isTrue();
      }
      assertThat(submit.exitValue()).as("spark-submit's exit status").isZero();
      assertThat(Files.readAllLines(markers.resolve("barrier-2"))).hasSize(TASKS);
      List<Allocated> all = spindle.executorContainers(app);
      assertThat(all).as("first start, then re-admission").hasSize(2 * EXECUTORS);
      List<Allocated> again = all.subList(EXECUTORS, all.size());
      assertThat(again).extracting(Allocated::cycle).as("re-admitted in one scheduling cycle")
          .containsOnly(again.get(0).cycle());
      assertThat(again.get(0).cycle()).isGreaterThan(first.get(0).cycle());
      ApplicationReport report = yarn.getApplicationReport(app);
      assertThat(report.getFinalApplicationStatus()).isEqualTo(FinalApplicationStatus.SUCCEEDED);
    } catch (Throwable t) {
      System.err.println(SparkRuntime.diagnostics(submitLog, logs));
      throw t;
    } finally {
      if (submit.isAlive()) {
        submit.destroyForcibly();
      }
    }
  }

  /** Starts spark-submit with the gang of GPU executors and the application's checkpoint handler. */
  private static Process sparkSubmit(Path markers, Path logs, Path output) throws Exception {
    Map<String, String> sparkConf = new TreeMap<>();
    sparkConf.put("spark.spindle.checkpoint.handler", "io.spindle.spark.e2e.MarkerCheckpointHandler");
    sparkConf.put("spark.spindle.e2e.dir", markers.toString());
    sparkConf.put("spark.yarn.tags", "spindle.gang=executors");
    sparkConf.put("spark.executor.resource.gpu.amount", Integer.toString(GPUS_PER_EXECUTOR));
    sparkConf.put("spark.task.resource.gpu.amount", "1");
    // MiniYARNCluster's NodeManagers run no GPU plugin, so containers are told no device: name them by hand.
    sparkConf.put("spark.executorEnv.SPINDLE_GPU_ADDRESSES", "0,1");
    // A barrier stage submitted while its executors are preempted waits for them: check every second, for long enough.
    sparkConf.put("spark.scheduler.barrier.maxConcurrentTasksCheck.interval", "1s");
    sparkConf.put("spark.scheduler.barrier.maxConcurrentTasksCheck.maxFailures", "600");
    return spindle.sparkSubmit("spindle-e2e", sparkConf, List.of("--num-executors", Integer.toString(EXECUTORS),
        "--executor-cores", Integer.toString(GPUS_PER_EXECUTOR)), "io.spindle.spark.e2e.GangBarrierJob",
        List.of(markers.toString(), Integer.toString(TASKS)), logs, output);
  }

  private static Path awaitCheckpoint(Path markers) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      try (Stream<Path> files = Files.list(markers)) {
        List<Path> found = files.filter(f -> f.getFileName().toString().matches("checkpoint-\\d+")).toList();
        if (!found.isEmpty()) {
          assertThat(found).as("one notice").hasSize(1);
          return found.get(0);
        }
      }
      Thread.sleep(100);
    }
    throw new AssertionError("the application's checkpoint handler was not called");
  }

  private static void awaitFile(Path file, Duration timeout, Process submit) throws Exception {
    SparkOnSpindle.awaitFile(file, timeout, submit);
  }

  /** The location of the application's last checkpoint report in Spindle's ZooKeeper, read as the scheduler. */
  private static String reportedCheckpoint(ApplicationId app) throws Exception {
    org.apache.avro.message.SchemaStore.Cache schemas = new org.apache.avro.message.SchemaStore.Cache();
    schemas.addSchema(io.spindle.client.avro.CheckpointReport.getClassSchema());
    try (org.apache.curator.framework.CuratorFramework client = spindle.zkAsScheduler()) {
      byte[] bytes = client.getData().forPath(new io.spindle.client.CheckpointPaths("/spindle/default")
          .report(app.toString()));
      return new io.spindle.client.CheckpointRecords(schemas).decodeReport(bytes).location();
    }
  }

  private static Resource gpus(int n) {
    Resource r = Resource.newInstance(1024, 1);
    r.setResourceValue(SparkOnSpindle.GPU, n);
    return r;
  }
}
