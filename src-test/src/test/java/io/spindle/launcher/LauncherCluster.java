package io.spindle.launcher;

import io.spindle.web.SpindleWeb;
import io.spindle.yarn.MiniClusterSupport;
import io.spindle.yarn.SpindleScheduler;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;

/**
 * The cluster spindle-run's end-to-end tests submit to: a MiniYARNCluster of two NodeManagers x 4 GPUs under Spindle
 * (queues {@code a} and {@code b}, half each), Spindle's status API on loopback, a client configured as a user's
 * would be, and threads to run {@code spindle-run} jobs in the background.
 */
final class LauncherCluster implements AutoCloseable {

  final MiniYARNCluster cluster;
  /** What a user's {@code yarn-site.xml} says: the RM, and the status API's port and bind address. */
  final Configuration conf;
  final YarnClient yarn;
  private final ExecutorService background = Executors.newCachedThreadPool();

  private LauncherCluster(MiniYARNCluster cluster, Configuration conf, YarnClient yarn) {
    this.cluster = cluster;
    this.conf = conf;
    this.yarn = yarn;
  }

  /** Starts it with {@code c}'s settings added (preemption, priorities, ...); waits until the engine has all 8 GPUs. */
  static LauncherCluster start(String name, YarnConfiguration c, int nodeMemoryMb) throws Exception {
    if (!SpindleScheduler.class.getName().equals(c.get(YarnConfiguration.RM_SCHEDULER))) {
      MiniClusterSupport.spindleWithGpus(c, 4); // a preemption setup has already done it
    }
    MiniClusterSupport.halvesAandB(c);
    c.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", nodeMemoryMb);
    c.setInt(YarnConfiguration.NM_VCORES, 8);
    c.setInt(SpindleWeb.PORT, 0);
    c.set(SpindleWeb.BIND_ADDRESS, "127.0.0.1");
    MiniYARNCluster cluster = MiniClusterSupport.startCluster(name, c, 2);
    SpindleScheduler spindle = (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
    Configuration conf = new YarnConfiguration(cluster.getConfig());
    // The client finds the status API as scripts/spindle does: the port and bind address from its yarn-site.
    conf.setInt(SpindleWeb.PORT, spindle.webAddress().orElseThrow().getPort());
    YarnClient yarn = MiniClusterSupport.startClient(conf);
    MiniClusterSupport.await(Duration.ofSeconds(30), () -> yarn.getNodeReports(NodeState.RUNNING).size() == 2);
    MiniClusterSupport.awaitEngineGpus(cluster, 8);
    return new LauncherCluster(cluster, conf, yarn);
  }

  SpindleRunJob launch(String... args) {
    return SpindleRunJob.launch(background, conf, args);
  }

  /** Spindle's status API, as the client reaches it. */
  String statusApi() {
    return "http://127.0.0.1:" + conf.getInt(SpindleWeb.PORT, -1) + "/api/v1/";
  }

  @Override
  public void close() throws Exception {
    background.shutdownNow();
    MiniClusterSupport.stopAll(yarn, cluster);
  }
}
