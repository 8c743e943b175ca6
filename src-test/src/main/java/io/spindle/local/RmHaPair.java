package io.spindle.local;

import java.io.IOException;
import java.net.URI;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ha.HAServiceProtocol;
import org.apache.hadoop.ha.HAServiceProtocol.HAServiceState;
import org.apache.hadoop.yarn.FileSystemBasedConfigurationProvider;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore;

/**
 * A YARN ResourceManager HA pair in one {@link MiniYARNCluster} (two ResourceManagers, each running the configured
 * scheduler), as the failover suites and the soak's failover profile run it: YARN's state in {@link ZKRMStateStore},
 * work-preserving recovery, NodeManagers and clients that follow the active ResourceManager over RPC through YARN's
 * own failover proxies, and failovers made by hand at a chosen moment (automatic failover is off).
 *
 * <p>Two ways to fail over: {@link #handOver} is an admin's {@code yarn rmadmin -transitionToStandby} then
 * {@code -transitionToActive}; or {@link #stop} the active ResourceManager outright (its RPC servers close under its
 * clients, as when its process ends) and {@link #toActive} the other, then {@link #restartStandby} the stopped one
 * for a later failover.
 */
public final class RmHaPair {

  public static final List<String> IDS = List.of("rm0", "rm1");
  private static final HAServiceProtocol.StateChangeRequestInfo BY_USER =
      new HAServiceProtocol.StateChangeRequestInfo(HAServiceProtocol.RequestSource.REQUEST_BY_USER);

  private RmHaPair() {}

  /**
   * Configures {@code c} for a MiniYARNCluster of two ResourceManagers ({@code new MiniYARNCluster(name, 2, ...)})
   * sharing {@code zkConnect} for YARN's state store. Each ResourceManager gets fixed ports of its own (MiniYARNCluster
   * lets NodeManagers use RPC only with fixed ports, and only over RPC do they follow a failover);
   * {@code schedulingWaitMs} is how long a new active ResourceManager waits for NodeManagers and AMs to come back
   * before it schedules ({@code yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms}).
   */
  public static void configure(Configuration c, String zkConnect, String clusterId, long schedulingWaitMs)
      throws IOException {
    c.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    c.setBoolean(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, true);
    c.set(YarnConfiguration.RM_HA_IDS, String.join(",", IDS));
    c.setBoolean(YarnConfiguration.RM_HA_ENABLED, true);
    c.setBoolean(YarnConfiguration.AUTO_FAILOVER_ENABLED, false);
    c.set(YarnConfiguration.RM_CLUSTER_ID, clusterId);
    for (String id : IDS) {
      for (String key : YarnConfiguration.getServiceAddressConfKeys(c)) {
        c.set(HAUtil.addSuffix(key, id), "localhost:" + FixedPorts.next());
      }
      c.set(HAUtil.addSuffix(YarnConfiguration.RM_HOSTNAME, id), "localhost");
    }
    // Clients and NodeManagers try the other ResourceManager soon after one refuses or is gone.
    c.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 200);
    c.setLong(YarnConfiguration.CLIENT_FAILOVER_SLEEPTIME_BASE_MS, 100);
    c.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    c.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    c.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, schedulingWaitMs);
    c.set(YarnConfiguration.RM_STORE, ZKRMStateStore.class.getName());
    c.set(YarnConfiguration.RM_ZK_ADDRESS, zkConnect);
  }

  /**
   * Both ResourceManagers read capacity-scheduler.xml (and, when they refresh, yarn-site.xml) from {@code dir}, one
   * shared store, as an HA pair must: each re-reads its queues as it becomes active. Not from the classpath: that
   * refresh builds its Configuration on the calling thread, whose class loader need not see the cluster's files.
   */
  public static void shareConfiguration(Configuration c, URI dir) {
    c.set(YarnConfiguration.RM_CONFIGURATION_PROVIDER_CLASS, FileSystemBasedConfigurationProvider.class.getName());
    c.set(YarnConfiguration.FS_BASED_RM_CONF_STORE, dir.toString());
  }

  /** The index of the active ResourceManager, or -1 when none is (during a failover); never waits. */
  public static int activeIndex(MiniYARNCluster cluster) {
    for (int i = 0; i < cluster.getNumOfResourceManager(); i++) {
      ResourceManager rm = cluster.getResourceManager(i);
      if (rm != null && rm.getRMContext().getHAServiceState() == HAServiceState.ACTIVE) {
        return i;
      }
    }
    return -1;
  }

  /** The admin's failover: {@code from} goes to standby, then {@code to} becomes active. */
  public static void handOver(MiniYARNCluster cluster, int from, int to) throws IOException {
    toStandby(cluster, from);
    toActive(cluster, to);
  }

  /** {@code yarn rmadmin -transitionToStandby}: the ResourceManager stops its active services and stays up. */
  public static void toStandby(MiniYARNCluster cluster, int index) throws IOException {
    cluster.getResourceManager(index).getRMContext().getRMAdminService().transitionToStandby(BY_USER);
  }

  /** {@code yarn rmadmin -transitionToActive}: recovers YARN's state from the store and starts scheduling. */
  public static void toActive(MiniYARNCluster cluster, int index) throws IOException {
    cluster.getResourceManager(index).getRMContext().getRMAdminService().transitionToActive(BY_USER);
  }

  /**
   * Stops the ResourceManager outright — RPC servers, scheduler, state store — without handing over first, as when
   * its process ends; the pair has one ResourceManager until {@link #restartStandby}.
   */
  public static void stop(MiniYARNCluster cluster, int index) {
    cluster.stopResourceManager(index);
  }

  /** Starts the ResourceManager {@link #stop} stopped, afresh, as a standby. */
  public static void restartStandby(MiniYARNCluster cluster, int index) throws InterruptedException {
    cluster.restartResourceManager(index);
  }
}
