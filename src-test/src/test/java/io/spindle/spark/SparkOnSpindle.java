package io.spindle.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.yarn.CycleRecordingScheduler;
import io.spindle.yarn.CycleRecordingScheduler.Allocated;
import io.spindle.yarn.MiniClusterSupport;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;

/**
 * What the spark-submit suites share: a MiniYARNCluster scheduled by Spindle (2 NodeManagers x 2 GPUs and 4 GB,
 * queues {@code a} and {@code b} at 50% each, preemption after 1 s of starvation, a real ZooKeeper), its client
 * configuration as an admin would hand it to {@code spark-submit}, the test application's JAR, and
 * {@code spark-submit} itself with the settings every suite gives.
 */
final class SparkOnSpindle implements AutoCloseable {

  static final String GPU = "yarn.io/gpu";
  static final int GPUS_PER_NODE = 2;
  static final long AM_HEARTBEAT_MILLIS = 1000;
  private static final String RM_ZK_AUTH = "yarn.scheduler.spindle.zk.auth";
  private static final String RM_ZK_USER = "spindle-rm:e2e-secret";

  final TestingServer zk;
  final MiniYARNCluster cluster;
  final YarnClient yarn;
  final Configuration conf;
  private final Path work;

  private SparkOnSpindle(TestingServer zk, MiniYARNCluster cluster, YarnClient yarn, Path work) {
    this.zk = zk;
    this.cluster = cluster;
    this.yarn = yarn;
    this.conf = cluster.getConfig();
    this.work = work;
  }

  static SparkOnSpindle start(String name, Path work) throws Exception {
    TestingServer zk = new TestingServer(true);
    YarnConfiguration c = new YarnConfiguration();
    c.set(YarnConfiguration.RM_SCHEDULER, CycleRecordingScheduler.class.getName());
    c.set(YarnConfiguration.RESOURCE_TYPES, GPU);
    c.set("yarn.nodemanager.resource-type." + GPU, Integer.toString(GPUS_PER_NODE));
    // Small nodes: the Spark JVMs ask 1 GB containers, and a test's other applications a few GB.
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
    MiniYARNCluster cluster = MiniClusterSupport.startCluster(name, c, 2);
    YarnClient yarn = MiniClusterSupport.startClient(cluster.getConfig());
    SparkOnSpindle s = new SparkOnSpindle(zk, cluster, yarn, work);
    MiniClusterSupport.await(Duration.ofSeconds(30), () -> yarn.getNodeReports(NodeState.RUNNING).size() == 2);
    MiniClusterSupport.awaitEngineGpus(cluster, 2 * GPUS_PER_NODE);
    return s;
  }

  @Override
  public void close() throws Exception {
    MiniClusterSupport.stopAll(yarn, cluster, zk);
  }

  /**
   * Starts {@code spark-submit --master yarn --deploy-mode cluster} in queue {@code a} as a user would, against this
   * cluster, with Spindle's plugin and GPU discovery, {@code sparkConf} and the test application's class and
   * arguments (spark-integration's test classes of package {@code io.spindle.spark.e2e}).
   */
  Process sparkSubmit(String name, Map<String, String> sparkConf, List<String> submitArgs, String mainClass,
      List<String> appArgs, Path logs, Path output) throws IOException {
    List<String> args = new ArrayList<>(List.of(
        "--master", "yarn", "--deploy-mode", "cluster", "--queue", "a", "--name", name, "--class", mainClass,
        "--jars", SparkRuntime.pluginJar().toString(),
        "--files", SparkRuntime.discoveryScript().toString(),
        "--driver-memory", "640m", "--executor-memory", "640m",
        "--conf", "spark.plugins=io.spindle.spark.SpindlePlugin",
        "--conf", "spark.executor.resource.gpu.discoveryScript=./spindle-gpu-discovery.sh",
        "--conf", "spark.yarn.scheduler.heartbeat.interval-ms=" + AM_HEARTBEAT_MILLIS));
    args.addAll(submitArgs);
    sparkConf.forEach((k, v) -> args.addAll(List.of("--conf", k + "=" + v)));
    args.addAll(SparkRuntime.environmentConf(work, logs));
    args.add(appJar().toString());
    args.addAll(appArgs);
    return SparkRuntime.submit(hadoopConfDir(), args, work, logs, output);
  }

  /** The Spark application named {@code name}. */
  ApplicationId application(String name) throws Exception {
    return submitted(name).orElseThrow(() -> new AssertionError("no Spark application named " + name));
  }

  /** The Spark application named {@code name}, once spark-submit has submitted it. */
  Optional<ApplicationId> submitted(String name) throws Exception {
    return yarn.getApplications(Set.of("SPARK")).stream().filter(r -> r.getName().equals(name))
        .map(ApplicationReport::getApplicationId).findFirst();
  }

  CycleRecordingScheduler scheduler() {
    return (CycleRecordingScheduler) cluster.getResourceManager().getResourceScheduler();
  }

  /** The containers of {@code app} with GPUs (its executors; the AM has none), in allocation order. */
  List<Allocated> executorContainers(ApplicationId app) {
    return scheduler().allocated(app).stream().filter(a -> a.resource().getResourceValue(GPU) > 0).toList();
  }

  /** A ZooKeeper client that authenticates as the scheduler, which may read every checkpoint record. */
  CuratorFramework zkAsScheduler() {
    CuratorFramework client = CuratorFrameworkFactory.builder().connectString(zk.getConnectString())
        .retryPolicy(new RetryOneTime(100)).authorization("digest", RM_ZK_USER.getBytes(StandardCharsets.UTF_8))
        .build();
    client.start();
    return client;
  }

  /** Polls for {@code file}; fails at once if {@code submit} ends first. */
  static void awaitFile(Path file, Duration timeout, Process submit) throws Exception {
    await(submit, timeout, file.getFileName() + " written", () -> Files.exists(file));
  }

  /**
   * Polls {@code check} until it holds; fails at once if {@code submit} ends first. An exception counts as not yet
   * (the application may not be submitted yet).
   */
  static void await(Process submit, Duration timeout, String what, MiniClusterSupport.Check check) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        if (check.ok()) {
          return;
        }
      } catch (Exception notYet) {
        // Asked again below.
      }
      if (!submit.isAlive()) {
        throw new AssertionError("spark-submit exited with " + submit.exitValue() + " before " + what);
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(what + ": not within " + timeout);
      }
      Thread.sleep(200);
    }
  }

  /** The test application: spark-integration's test classes of package io.spindle.spark.e2e, as a JAR. */
  private Path appJar() throws IOException {
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
  private Path hadoopConfDir() throws IOException {
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
}
