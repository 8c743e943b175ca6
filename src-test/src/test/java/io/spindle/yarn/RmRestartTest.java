package io.spindle.yarn;

import static io.spindle.yarn.MiniClusterSupport.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.QueueSnapshot;
import io.spindle.local.FixedPorts;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.api.NMClient;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Work-preserving ResourceManager restart: containers that run on the NodeManagers are still charged to their
 * queue by the new Spindle instance once the nodes re-register.
 */
class RmRestartTest {

  private static final String GPU = "yarn.io/gpu";

  @Test
  void afterAnRmRestartRunningContainersAreStillAccounted(@TempDir Path state) throws Exception {
    YarnConfiguration c = new YarnConfiguration();
    c.set(YarnConfiguration.RM_SCHEDULER, SpindleScheduler.class.getName());
    // The restarted RM must come back on the same ports, or the NodeManager cannot find it to re-register.
    c.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    // By default a MiniYARNCluster NodeManager holds the first RM's tracker object and never sees the new RM.
    c.setBoolean(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, true);
    c.set(YarnConfiguration.RM_ADDRESS, "localhost:" + FixedPorts.next());
    c.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, "localhost:" + FixedPorts.next());
    c.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, "localhost:" + FixedPorts.next());
    c.set(YarnConfiguration.RM_ADMIN_ADDRESS, "localhost:" + FixedPorts.next());
    c.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "localhost:" + FixedPorts.next());
    c.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 200);
    c.set(YarnConfiguration.RESOURCE_TYPES, GPU);
    c.set("yarn.nodemanager.resource-type." + GPU, "4");
    c.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 16_384);
    c.setInt(YarnConfiguration.NM_VCORES, 8);
    c.setInt(YarnConfiguration.NM_LOG_RETAIN_SECONDS, 0);
    c.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    c.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    c.set(YarnConfiguration.RM_STORE, FileSystemRMStateStore.class.getName());
    c.set(YarnConfiguration.FS_RM_STATE_STORE_URI, state.toUri().toString());
    c.set("yarn.scheduler.capacity.root.queues", "default");
    c.set("yarn.scheduler.capacity.root.default.capacity", "100");
    c.set("yarn.scheduler.capacity.root.default.user-limit-factor", "-1");
    QueueMetrics.clearQueueMetrics();
    ResourceUtils.resetResourceTypes(c);
    MiniYARNCluster cluster = new MiniYARNCluster("restart", 1, 1, 1, 1);
    cluster.init(c);
    cluster.start();
    YarnClient client = YarnClient.createYarnClient();
    try {
      client.init(cluster.getConfig());
      client.start();
      await(Duration.ofSeconds(60), () -> client.getNodeReports(NodeState.RUNNING).size() == 1);
      ApplicationSubmissionContext ctx = client.createApplication().getApplicationSubmissionContext();
      ctx.setApplicationName("long-running");
      ctx.setQueue("default");
      ctx.setUnmanagedAM(true);
      ctx.setKeepContainersAcrossApplicationAttempts(true);
      ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
      ctx.setResource(Resource.newInstance(1024, 1));
      client.submitApplication(ctx);
      ApplicationId app = ctx.getApplicationId();

      UnmanagedAm am = UnmanagedAm.register(client, cluster.getConfig(), app);
      Resource twoGpus = Resource.newInstance(1024, 1);
      twoGpus.setResourceValue(GPU, 2);
      am.ask(1, twoGpus);
      assertThat(am.awaitHeld(1, Duration.ofSeconds(30))).isEqualTo(1);
      Container container = am.held().get(0);
      NMClient nm = NMClient.createNMClient();
      nm.init(cluster.getConfig());
      nm.start();
      nm.startContainer(container,
          ContainerLaunchContext.newInstance(Map.of(), Map.of(), List.of("sleep 120"), null, null, null));
      await(Duration.ofSeconds(60), () -> nm.getContainerStatus(container.getId(), container.getNodeId()).getState()
          == org.apache.hadoop.yarn.api.records.ContainerState.RUNNING);

      cluster.restartResourceManager(0);
      SpindleScheduler restarted = (SpindleScheduler) cluster.getResourceManager(0).getResourceScheduler();
      await(Duration.ofSeconds(60), () -> usage(restarted).gpuUnits() == 2 * io.spindle.core.model.ResourceVector.GPU_UNITS);
      assertThat(usage(restarted).memoryMb()).isEqualTo(1024);
      // The node's YARN view agrees: the recovered container still holds 2 of its 4 GPUs.
      assertThat(restarted.getSchedulerNode(container.getNodeId()).getUnallocatedResource().getResourceValue(GPU))
          .isEqualTo(2);
      nm.stop();
    } finally {
      client.stop();
      cluster.stop();
    }
  }

  private static io.spindle.core.model.ResourceVector usage(SpindleScheduler s) {
    for (QueueSnapshot q : s.queueSnapshots()) {
      if (q.path().equals("root.default")) {
        return q.usage();
      }
    }
    throw new AssertionError("no root.default");
  }
}
