package io.spindle.bench.soak;

import io.spindle.client.CheckpointPaths;
import io.spindle.core.engine.EngineStatus;
import io.spindle.core.model.Gpu;
import io.spindle.core.placement.NodeView;
import io.spindle.ha.ZkSettings;
import io.spindle.local.SpindleLocalCluster;
import io.spindle.yarn.SpindleScheduler;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;

/**
 * The soak's cluster: {@code scripts/spindle-local}'s (embedded ZooKeeper, one ResourceManager with Spindle, fake GPU
 * NodeManagers that advertise GPUs and MIG instances, agents that answer MIG re-partitions) in this JVM, with nodes
 * and queues of its own written to {@code <workdir>/input}.
 *
 * <p>Nodes: H100-80GB, 512 GB, 128 vcores; even ones have 8 whole GPUs, odd ones 4 whole GPUs and 4 MIG-mode GPUs
 * (7 x 1g.10gb, 2 x 3g.40gb, 7 x 1g.10gb, and one without instances that Spindle re-partitions on demand). Each
 * consecutive pair shares a rack, four racks on two spines. Queues {@code llm} 35%, {@code vision} 25%,
 * {@code inference} 25%, {@code batch} 15%, each free to borrow the whole cluster.
 *
 * <p>With {@code --failovers} above 0 the cluster runs a ResourceManager HA pair ({@code scripts/spindle-local --ha},
 * {@link io.spindle.local.RmHaPair}); {@link #scheduler()} and {@link #resourceManager()} are then the active one's,
 * as {@link SoakFailovers} moves it.
 */
public final class SoakCluster implements AutoCloseable {

  static final int GPUS_PER_NODE = 8;
  static final int MIG_GPUS_PER_MIG_NODE = 4;

  private final SpindleLocalCluster local;
  private final int nodes;
  private final CheckpointPaths checkpointPaths;
  /** The active ResourceManager's index; -1 while a failover is under way. */
  private volatile int active;
  private CuratorFramework zk;

  private SoakCluster(SpindleLocalCluster local, int nodes) {
    this.local = local;
    this.nodes = nodes;
    this.checkpointPaths = new CheckpointPaths(ZkSettings.from(local.resourceManager().getConfig()).root());
  }

  /** Writes the inputs, starts the cluster and waits until Spindle's engine has every node with its MIG GPUs. */
  public static SoakCluster start(SoakOptions o, PrintStream out) throws Exception {
    Path workdir = o.workdir().toAbsolutePath().normalize();
    Path input = workdir.resolve("input");
    Files.createDirectories(input);
    Path nodeFile = input.resolve("soak-nodes.properties");
    Path queueFile = input.resolve("soak-capacity-scheduler.xml");
    Files.writeString(nodeFile, nodeSpec(o.nodes()), StandardCharsets.UTF_8);
    Files.writeString(queueFile, queues(), StandardCharsets.UTF_8);
    List<String> args = new ArrayList<>(List.of("--workdir", workdir.resolve("cluster").toString(),
        "--conf", nodeFile.toString(), "--queues", queueFile.toString()));
    if (o.failovers() > 0) {
      args.add("--ha");
    }
    SpindleLocalCluster local = SpindleLocalCluster.start(out, args.toArray(String[]::new));
    SoakCluster c = new SoakCluster(local, o.nodes());
    try {
      c.awaitEngine();
    } catch (Exception | Error e) {
      c.close();
      throw e;
    }
    // Hadoop at INFO logs every container and application transition: on 2 cores that is a large share of the CPU
    // the soak is measuring. Spindle's own decisions stay at INFO in <workdir>/cluster/logs.
    Logger.getLogger("org.apache.hadoop").setLevel(Level.WARN);
    if (Boolean.getBoolean("soak.trace")) {
      Logger.getLogger("io.spindle.bench.soak").setLevel(Level.DEBUG);
      Logger.getLogger("org.apache.hadoop.yarn.client.api.impl.AMRMClientImpl").setLevel(Level.INFO);
    }
    return c;
  }

  /** The fake nodes, in {@code conf/local-cluster.properties}' format. */
  static String nodeSpec(int nodes) {
    StringBuilder s = new StringBuilder();
    s.append("# written by the soak benchmark (io.spindle.bench.soak.SoakCluster)\n");
    s.append("gpu-model = H100-80GB\ngpu-resource = yarn.io/gpu\nmig-profiles = 1g.10gb,3g.40gb\n");
    s.append("mig-advertise = places\n");
    List<String> names = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      names.add(String.format("n%03d", i + 1));
    }
    s.append("nodes = ").append(String.join(",", names)).append('\n');
    for (int i = 0; i < nodes; i++) {
      String p = "node." + names.get(i) + ".";
      int rack = (i / 2) % 4;
      s.append(p).append("rack = /spine").append(rack / 2 + 1).append("/rack").append(rack + 1).append('\n');
      s.append(p).append("memory-mb = 524288\n");
      s.append(p).append("vcores = 128\n");
      if (i % 2 == 0) {
        s.append(p).append("gpus = ").append(GPUS_PER_NODE).append('\n');
      } else {
        s.append(p).append("gpus = ").append(GPUS_PER_NODE - MIG_GPUS_PER_MIG_NODE).append('\n');
        s.append(p).append("mig = 1g.10gb*7 ; 3g.40gb*2 ; 1g.10gb*7 ; empty\n");
      }
    }
    return s.toString();
  }

  static String queues() {
    StringBuilder s = new StringBuilder("<?xml version=\"1.0\"?>\n<!-- written by the soak benchmark -->\n"
        + "<configuration>\n");
    property(s, "yarn.scheduler.capacity.root.queues", "llm,vision,inference,batch");
    String[][] leaves = {{"llm", "35"}, {"vision", "25"}, {"inference", "25"}, {"batch", "15"}};
    for (String[] q : leaves) {
      String p = "yarn.scheduler.capacity.root." + q[0] + ".";
      property(s, p + "capacity", q[1]);
      property(s, p + "maximum-capacity", "100");
      property(s, p + "user-limit-factor", "-1");
    }
    // The re-partition cost a MIG request waits for: 30 s by default, as on hardware; short here so MIG jobs
    // waiting for a re-partition do not dominate the run.
    property(s, "yarn.scheduler.spindle.mig.reconfigure-seconds", "1");
    return s.append("</configuration>\n").toString();
  }

  private static void property(StringBuilder s, String name, String value) {
    s.append("  <property><name>").append(name).append("</name><value>").append(value)
        .append("</value></property>\n");
  }

  private void awaitEngine() throws InterruptedException {
    int migGpus = (nodes / 2) * MIG_GPUS_PER_MIG_NODE;
    long deadline = System.currentTimeMillis() + 120_000;
    while (true) {
      EngineStatus s = scheduler().status();
      long mig = 0;
      for (NodeView n : s.nodes()) {
        mig += n.node().gpus().stream().filter(Gpu::migEnabled).count();
      }
      if (s.nodes().size() == nodes && mig == migGpus) {
        return;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("Spindle's engine has " + s.nodes().size() + " of " + nodes + " nodes and "
            + mig + " of " + migGpus + " MIG GPUs after 120 s");
      }
      Thread.sleep(200);
    }
  }

  /** The active ResourceManager's Spindle; null while a failover is under way. */
  public SpindleScheduler scheduler() {
    ResourceManager rm = resourceManager();
    return rm == null ? null : (SpindleScheduler) rm.getResourceScheduler();
  }

  /** The active ResourceManager; null while a failover is under way. */
  public ResourceManager resourceManager() {
    int i = active;
    return i < 0 ? null : resourceManager(i);
  }

  /** ResourceManager {@code index} of the pair (0 without one); null while stopped. */
  ResourceManager resourceManager(int index) {
    return local.yarnCluster().getResourceManager(index);
  }

  int activeIndex() {
    return active;
  }

  /** Set by the failovers: {@code index} is active now (-1: none is). */
  void activeIs(int index) {
    active = index;
  }

  boolean ha() {
    return local.ha();
  }

  MiniYARNCluster yarn() {
    return local.yarnCluster();
  }

  int nodes() {
    return nodes;
  }

  /**
   * Configuration for the soak's clients. YarnClient's submit waits for the application to leave NEW_SAVING by
   * polling its report, every 200 ms by default; 20 ms keeps a submitting thread from idling most of its time.
   */
  public Configuration clientConf() {
    Configuration c = new YarnConfiguration(local.clientConf());
    c.setLong(YarnConfiguration.YARN_CLIENT_APP_SUBMISSION_POLL_INTERVAL_MS, 20);
    return c;
  }

  public Path logFile() {
    return local.hadoopConfDir().getParent().resolve("logs").resolve("spindle-local.log");
  }

  /**
   * Applications with checkpoint znodes in ZooKeeper (Spindle opens them for every application whose AM talks to the
   * RM and removes them when it ends): 0 once drained and Spindle's ZooKeeper writer has caught up.
   */
  public int checkpointApps() throws Exception {
    String apps = checkpointPaths().apps();
    return zk().checkExists().forPath(apps) == null ? 0 : zk().getChildren().forPath(apps).size();
  }

  /** A session on the cluster's ZooKeeper, unauthenticated: the checkpoint directories are world-readable. */
  public synchronized CuratorFramework zk() throws InterruptedException {
    if (zk == null) {
      zk = CuratorFrameworkFactory.newClient(local.zookeeperConnectString(), new RetryOneTime(500));
      zk.start();
      zk.blockUntilConnected(30, TimeUnit.SECONDS);
    }
    return zk;
  }

  public CheckpointPaths checkpointPaths() {
    return checkpointPaths;
  }

  @Override
  public synchronized void close() {
    if (zk != null) {
      zk.close();
    }
    local.close();
  }
}
