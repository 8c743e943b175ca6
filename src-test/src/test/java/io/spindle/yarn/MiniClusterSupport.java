package io.spindle.yarn;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

/** What the MiniYARNCluster suites share: GPU asks, settings, clusters and clients, and waiting for a condition. */
public final class MiniClusterSupport {

  public static final String GPU = "yarn.io/gpu";

  private MiniClusterSupport() {}

  /** A container of 2 GB, 1 vcore and {@code n} GPUs. */
  public static Resource gpus(int n) {
    Resource r = Resource.newInstance(2048, 1);
    r.setResourceValue(GPU, n);
    return r;
  }

  public static final String GPU_MILLI = "nvidia.com/gpu-milli";
  public static final String GPU_MEMORY_MB = "nvidia.com/gpu-mem-mb";

  /** A container of 512 MB, 1 vcore and {@code milli} thousandths of one GPU. */
  public static Resource gpuShare(int milli) {
    Resource r = Resource.newInstance(512, 1);
    r.setResourceValue(GPU_MILLI, milli);
    return r;
  }

  /**
   * Spindle over NodeManagers that advertise {@code gpusPerNode} GPUs, all in time-slice sharing mode, as a node
   * without Spindle's agent says so: {@code nvidia.com/gpu-milli} = 1000 per GPU, and the GPUs' memory (H100-80GB,
   * the default model) as {@code nvidia.com/gpu-mem-mb} so that YARN's maximum allocation admits memory asks.
   */
  public static void spindleWithSharedGpus(Configuration c, int gpusPerNode) {
    spindleWithGpus(c, gpusPerNode);
    c.set(YarnConfiguration.RESOURCE_TYPES, GPU + "," + GPU_MILLI + "," + GPU_MEMORY_MB);
    c.set("yarn.nodemanager.resource-type." + GPU_MILLI, Integer.toString(gpusPerNode * 1000));
    c.set("yarn.nodemanager.resource-type." + GPU_MEMORY_MB, Integer.toString(gpusPerNode * 81_920));
  }

  /** A container of 512 MB, 1 vcore and one GPU: four fill a NodeManager's GPUs, not its memory. */
  public static Resource oneSmallGpu() {
    Resource r = Resource.newInstance(512, 1);
    r.setResourceValue(GPU, 1);
    return r;
  }

  /**
   * Labels a NodeManager as {@code yarn rmadmin -addToClusterNodeLabels "<label>(exclusive=…)"} and
   * {@code -replaceLabelsOnNode} do, and waits until Spindle's engine has the node in that partition.
   */
  public static void label(MiniYARNCluster cluster, org.apache.hadoop.yarn.api.records.NodeId node, String label,
      boolean exclusive) throws Exception {
    org.apache.hadoop.yarn.server.resourcemanager.nodelabels.RMNodeLabelsManager labels =
        cluster.getResourceManager().getRMContext().getNodeLabelManager();
    labels.addToCluserNodeLabels(java.util.List.of(org.apache.hadoop.yarn.api.records.NodeLabel.newInstance(label,
        exclusive)));
    labels.replaceLabelsOnNode(java.util.Map.of(node, java.util.Set.of(label)));
    SpindleScheduler spindle = (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
    await(java.time.Duration.ofSeconds(20), () -> spindle.status().nodes().stream()
        .filter(n -> n.node().id().value().equals(node.toString())).findFirst().orElseThrow().node().partition()
        .equals(label));
  }

  /**
   * Spindle with preemption on (starvation 1 s, the given grace) over NodeManagers of 4 GPUs each, as the
   * preemption suites run it; {@code zk} is the ZooKeeper for notices and state.
   */
  public static void gpuPreemption(Configuration c, String zk, long graceSeconds) {
    spindleWithGpus(c, 4);
    c.set("yarn.scheduler.spindle.zk.address", zk);
    c.set("yarn.scheduler.spindle.preemption.enabled", "true");
    c.set("yarn.scheduler.spindle.preemption.starvation-seconds", "1");
    c.set("yarn.scheduler.spindle.preemption.checkpoint-grace-seconds", Long.toString(graceSeconds));
  }

  /** Spindle as the RM's scheduler, over NodeManagers that advertise {@code gpusPerNode} GPUs each. */
  public static void spindleWithGpus(Configuration c, int gpusPerNode) {
    c.set(YarnConfiguration.RM_SCHEDULER, SpindleScheduler.class.getName());
    c.set(YarnConfiguration.RESOURCE_TYPES, GPU);
    c.set("yarn.nodemanager.resource-type." + GPU, Integer.toString(gpusPerNode));
    c.setInt(YarnConfiguration.NM_LOG_RETAIN_SECONDS, 0); // Otherwise each NodeManager's stop waits 10 s on log deletion.
  }

  /** Queues {@code a} and {@code b}, 50% each, no user limit, and an empty {@code default}. */
  public static void halvesAandB(Configuration c) {
    String p = "yarn.scheduler.capacity.root.";
    c.set(p + "queues", "a,b,default");
    c.set(p + "a.capacity", "50");
    c.set(p + "b.capacity", "50");
    c.set(p + "default.capacity", "0");
    c.set(p + "a.user-limit-factor", "-1");
    c.set(p + "b.user-limit-factor", "-1");
  }

  /**
   * Waits until Spindle's engine itself counts {@code gpus} GPUs in the cluster. A node the RM reports RUNNING may
   * not have reached the engine yet, and a gang judged against fewer nodes is rejected as larger than the cluster.
   */
  public static void awaitEngineGpus(MiniYARNCluster cluster, double gpus) throws Exception {
    await(Duration.ofSeconds(60), () -> {
      SpindleScheduler s = (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
      return s.queueSnapshots().stream().filter(q -> q.path().equals("root"))
          .anyMatch(root -> root.guarantee().gpus() >= gpus);
    });
  }

  private static final Pattern PROMETHEUS_SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\\{[^}]*\\})?) (\\S+)$");

  /** GETs Spindle's Prometheus endpoint of {@code cluster}'s RM: sample (name with labels) to value. */
  public static Map<String, Double> scrapePrometheus(MiniYARNCluster cluster) throws IOException {
    SpindleScheduler scheduler = (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
    int port = scheduler.webAddress().orElseThrow().getPort();
    Map<String, Double> out = new HashMap<>();
    try (InputStream in = new URL("http://127.0.0.1:" + port + "/metrics").openStream()) {
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        Matcher m = PROMETHEUS_SAMPLE.matcher(line);
        if (!line.startsWith("#") && m.matches()) {
          out.put(m.group(1), Double.parseDouble(m.group(2)));
        }
      }
    }
    return out;
  }

  /**
   * Starts a MiniYARNCluster of one RM and {@code nodeManagers} NodeManagers on {@code c}, after clearing what an
   * earlier suite in this JVM left behind (queue metrics, resource types).
   */
  public static MiniYARNCluster startCluster(String name, Configuration c, int nodeManagers) {
    QueueMetrics.clearQueueMetrics();
    ResourceUtils.resetResourceTypes(c);
    MiniYARNCluster cluster = new MiniYARNCluster(name, 1, nodeManagers, 1, 1);
    cluster.init(c);
    cluster.start();
    return cluster;
  }

  /** A started YARN client of {@code conf}. */
  public static YarnClient startClient(Configuration conf) {
    YarnClient client = YarnClient.createYarnClient();
    client.init(conf);
    client.start();
    return client;
  }

  /**
   * Stops what a suite started, in the order given (clients before the cluster they talk to), skipping what never
   * started: Hadoop services are stopped, anything else closeable is closed.
   */
  public static void stopAll(Object... parts) throws Exception {
    for (Object part : parts) {
      if (part instanceof Service service) {
        service.stop();
      } else if (part instanceof AutoCloseable closeable) {
        closeable.close();
      }
    }
  }

  public interface Check {
    boolean ok() throws Exception;
  }

  /** Polls {@code check} until it holds; an exception counts as not yet (an RM may be restarting or failing over). */
  public static void await(Duration timeout, Check check) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        if (check.ok()) {
          return;
        }
      } catch (Exception notYet) {
        // Asked again below.
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within " + timeout);
      }
      Thread.sleep(100);
    }
  }
}
