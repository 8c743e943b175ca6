package io.spindle.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.yarn.CycleRecordingScheduler;
import io.spindle.yarn.CycleRecordingScheduler.Allocated;
import io.spindle.yarn.MiniClusterSupport;
import io.spindle.yarn.UnmanagedAm;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
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

  private static final String GPU = "yarn.io/gpu";
  private static final int EXECUTORS = 2;
  private static final int GPUS_PER_EXECUTOR = 2;
  private static final int TASKS = EXECUTORS * GPUS_PER_EXECUTOR; // one GPU per task
  private static final long AM_HEARTBEAT_MILLIS = 1000;
  private static final String RM_ZK_AUTH = "yarn.scheduler.spindle.zk.auth";
  private static final String RM_ZK_USER = "spindle-rm:e2e-secret";

  private static TestingServer zk;
  private static MiniYARNCluster cluster;
  private static YarnClient yarn;
  private static Configuration conf;

  @TempDir
  static Path work;

  @BeforeAll
  static void start() throws Exception {
    zk = new TestingServer(true);
    YarnConfiguration c = new YarnConfiguration();
    c.set(YarnConfiguration.RM_SCHEDULER, CycleRecordingScheduler.class.getName());
    c.set(YarnConfiguration.RESOURCE_TYPES, GPU);
    c.set("yarn.nodemanager.resource-type." + GPU, Integer.toString(GPUS_PER_EXECUTOR));
    // Small nodes: the Spark JVMs ask 1 GB containers and the test's other application of queue a 3 GB.
    c.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 4096);
    c.setInt(YarnConfiguration.NM_VCORES, 8);
    c.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, 4096);
    c.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    c.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    c.setInt(YarnConfiguration.NM_LOG_RETAIN_SECONDS, 0); // each NodeManager's stop waits 10 s on log deletion otherwise
    c.set("yarn.scheduler.spindle.zk.address", zk.getConnectString());
    c.set(RM_ZK_AUTH, "digest:" + RM_ZK_USER); // so that the test can read what only the scheduler may read
    c.set("yarn.scheduler.spindle.preemption.enabled", "true");
    c.set("yarn.scheduler.spindle.preemption.starvation-seconds", "1");
    c.set("yarn.scheduler.spindle.preemption.checkpoint-grace-seconds", "60");
    MiniClusterSupport.halvesAandB(c);
    cluster = MiniClusterSupport.startCluster("spark-on-spindle", c, 2);
    conf = cluster.getConfig();
    yarn = MiniClusterSupport.startClient(conf);
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (yarn.getNodeReports(NodeState.RUNNING).size() < 2 && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(yarn, cluster, zk);
  }

  @Test
  void aGangOfGpuExecutorsStartsTogetherCheckpointsWhenPreemptedAndFinishesAfterReAdmission() throws Exception {
    Path markers = Files.createDirectories(work.resolve("markers"));
    Path logs = Files.createDirectories(work.resolve("logs"));
    Path submitLog = work.resolve("spark-submit.log");
    Process submit = sparkSubmit(markers, logs, submitLog);
    try {
      // 1. The executors start as one gang and a barrier stage over all their slots completes.
      awaitFile(markers.resolve("barrier-1"), Duration.ofMinutes(4), submit);
      ApplicationId app = sparkApplication();
      assertThat(Files.readAllLines(markers.resolve("barrier-1"))).hasSize(TASKS).allMatch(l -> l.endsWith(" of " + TASKS));
      List<Allocated> first = executorContainers(app);
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
          Thread.sleep(3 * AM_HEARTBEAT_MILLIS);
        }

        // 3. The urgent gang ended: the executors are re-admitted as one gang and the application finishes.
        assertThat(submit.waitFor(4, java.util.concurrent.TimeUnit.MINUTES)).as("spark-submit ended").isTrue();
      }
      assertThat(submit.exitValue()).as("spark-submit's exit status").isZero();
      assertThat(Files.readAllLines(markers.resolve("barrier-2"))).hasSize(TASKS);
      List<Allocated> all = executorContainers(app);
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

  /** Starts {@code spark-submit --master yarn --deploy-mode cluster} as a user would, against this cluster. */
  private static Process sparkSubmit(Path markers, Path logs, Path output) throws Exception {
    List<String> args = new ArrayList<>(List.of(
        "--master", "yarn", "--deploy-mode", "cluster", "--queue", "a", "--name", "spindle-e2e",
        "--class", "io.spindle.spark.e2e.GangBarrierJob",
        "--jars", SparkRuntime.pluginJar().toString(),
        "--files", SparkRuntime.discoveryScript().toString(),
        "--driver-memory", "640m", "--executor-memory", "640m",
        "--num-executors", Integer.toString(EXECUTORS), "--executor-cores", Integer.toString(GPUS_PER_EXECUTOR)));
    Map<String, String> sparkConf = new TreeMap<>();
    sparkConf.put("spark.plugins", "io.spindle.spark.SpindlePlugin");
    sparkConf.put("spark.spindle.checkpoint.handler", "io.spindle.spark.e2e.MarkerCheckpointHandler");
    sparkConf.put("spark.spindle.e2e.dir", markers.toString());
    sparkConf.put("spark.yarn.tags", "spindle.gang=executors");
    sparkConf.put("spark.executor.resource.gpu.amount", Integer.toString(GPUS_PER_EXECUTOR));
    sparkConf.put("spark.task.resource.gpu.amount", "1");
    sparkConf.put("spark.executor.resource.gpu.discoveryScript", "./spindle-gpu-discovery.sh");
    // MiniYARNCluster's NodeManagers run no GPU plugin, so containers are told no device: name them by hand.
    sparkConf.put("spark.executorEnv.SPINDLE_GPU_ADDRESSES", "0,1");
    sparkConf.put("spark.yarn.scheduler.heartbeat.interval-ms", Long.toString(AM_HEARTBEAT_MILLIS));
    // A barrier stage submitted while its executors are preempted waits for them: check every second, for long enough.
    sparkConf.put("spark.scheduler.barrier.maxConcurrentTasksCheck.interval", "1s");
    sparkConf.put("spark.scheduler.barrier.maxConcurrentTasksCheck.maxFailures", "600");
    sparkConf.forEach((k, v) -> args.addAll(List.of("--conf", k + "=" + v)));
    args.addAll(SparkRuntime.environmentConf(work, logs));
    args.add(appJar().toString());
    args.add(markers.toString());
    args.add(Integer.toString(TASKS));
    return SparkRuntime.submit(hadoopConfDir(), args, work, logs, output);
  }

  /** The test application: spark-integration's test classes of package io.spindle.spark.e2e, as a JAR. */
  private static Path appJar() throws IOException {
    Path classes = SparkRuntime.SPARK_INTEGRATION.resolve("target/test-classes");
    Path pkg = classes.resolve("io/spindle/spark/e2e");
    assertThat(pkg).as("spark-integration's test classes (mvn verify builds them)").isDirectory();
    Path jar = work.resolve("spindle-e2e-app.jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar)); Stream<Path> files = Files.list(pkg)) {
      for (Path f : files.filter(f -> f.toString().endsWith(".class")).sorted().toList()) {
        out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
        out.write(Files.readAllBytes(f));
        out.closeEntry();
      }
    }
    return jar;
  }

  /** This cluster's client configuration, as an admin would hand it to spark-submit. */
  private static Path hadoopConfDir() throws IOException {
    Path dir = Files.createDirectories(work.resolve("hadoop-conf"));
    Configuration client = new Configuration(conf);
    client.unset(RM_ZK_AUTH); // the scheduler's own ZooKeeper credentials are not the clients' business
    try (OutputStream out = Files.newOutputStream(dir.resolve("yarn-site.xml"))) {
      client.writeXml(out);
    }
    Configuration core = new Configuration(false);
    core.set("fs.defaultFS", "file:///");
    try (OutputStream out = Files.newOutputStream(dir.resolve("core-site.xml"))) {
      core.writeXml(out);
    }
    return dir;
  }

  private static ApplicationId sparkApplication() throws Exception {
    return yarn.getApplications(Set.of("SPARK")).stream().filter(r -> r.getName().equals("spindle-e2e"))
        .map(ApplicationReport::getApplicationId).findFirst()
        .orElseThrow(() -> new AssertionError("no Spark application named spindle-e2e"));
  }

  /** The containers of {@code app} with GPUs (its executors; the AM has none), in allocation order. */
  private static List<Allocated> executorContainers(ApplicationId app) {
    CycleRecordingScheduler scheduler = (CycleRecordingScheduler) cluster.getResourceManager().getResourceScheduler();
    return scheduler.allocated(app).stream().filter(a -> a.resource().getResourceValue(GPU) > 0).toList();
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
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!Files.exists(file)) {
      if (!submit.isAlive()) {
        throw new AssertionError("spark-submit exited with " + submit.exitValue() + " before " + file.getFileName());
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(file.getFileName() + " not written within " + timeout);
      }
      Thread.sleep(200);
    }
  }

  /** The location of the application's last checkpoint report in Spindle's ZooKeeper, read as the scheduler. */
  private static String reportedCheckpoint(ApplicationId app) throws Exception {
    org.apache.avro.message.SchemaStore.Cache schemas = new org.apache.avro.message.SchemaStore.Cache();
    schemas.addSchema(io.spindle.client.avro.CheckpointReport.getClassSchema());
    try (org.apache.curator.framework.CuratorFramework client = org.apache.curator.framework.CuratorFrameworkFactory
        .builder().connectString(zk.getConnectString()).retryPolicy(new org.apache.curator.retry.RetryOneTime(100))
        .authorization("digest", RM_ZK_USER.getBytes(StandardCharsets.UTF_8)).build()) {
      client.start();
      byte[] bytes = client.getData().forPath(new io.spindle.client.CheckpointPaths("/spindle/default")
          .report(app.toString()));
      return new io.spindle.client.CheckpointRecords(schemas).decodeReport(bytes).location();
    }
  }

  private static Resource gpus(int n) {
    Resource r = Resource.newInstance(1024, 1);
    r.setResourceValue(GPU, n);
    return r;
  }
}
