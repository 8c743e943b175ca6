package io.spindle.yarn;

import static io.spindle.yarn.MiniClusterSupport.await;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * YARN node labels under Spindle, through a real ResourceManager: a node labelled {@code GPU} (an exclusive
 * partition, as admins fence GPU nodes off), a queue that may use it; requests that name the label run only there,
 * requests that name none never do, a queue's {@code default-node-label-expression} labels requests that name
 * none, and a queue's maximum capacity in the label bounds what it gets of the labelled nodes.
 */
class NodeLabelsTest {

  private static MiniYARNCluster cluster;
  private static YarnClient client;
  private static NodeId gpuNode;
  private static NodeId plainNode;

  @BeforeAll
  static void start() throws Exception {
    YarnConfiguration c = new YarnConfiguration();
    MiniClusterSupport.spindleWithGpus(c, 4);
    c.setBoolean(YarnConfiguration.NODE_LABELS_ENABLED, true);
    Path store = Files.createTempDirectory("node-labels");
    c.set(YarnConfiguration.FS_NODE_LABELS_STORE_ROOT_DIR, store.toUri().toString());
    String q = "yarn.scheduler.capacity.root.";
    c.set(q + "queues", "ml,etl,gpuonly,capped");
    c.set(q + "ml.capacity", "40");
    c.set(q + "etl.capacity", "40");
    c.set(q + "gpuonly.capacity", "20");
    for (String leaf : new String[] {"ml", "etl", "gpuonly"}) {
      c.set(q + leaf + ".user-limit-factor", "-1");
    }
    c.set(q + "accessible-node-labels.GPU.capacity", "100");
    c.set(q + "ml.accessible-node-labels", "GPU");
    c.set(q + "ml.accessible-node-labels.GPU.capacity", "50");
    c.set(q + "gpuonly.accessible-node-labels", "GPU");
    c.set(q + "gpuonly.accessible-node-labels.GPU.capacity", "50");
    c.set(q + "gpuonly.default-node-label-expression", "GPU");
    c.set(q + "etl.accessible-node-labels", " ");
    // No capacity of its own (0, as CapacityScheduler reads an unset one), at most a quarter of the GPU nodes.
    c.set(q + "capped.user-limit-factor", "-1");
    c.set(q + "capped.maximum-applications", "10"); // CapacityScheduler's default is its capacity's share: none.
    c.set(q + "capped.accessible-node-labels", "GPU");
    c.set(q + "capped.accessible-node-labels.GPU.maximum-capacity", "25");
    cluster = MiniClusterSupport.startCluster("node-labels", c, 2);
    client = MiniClusterSupport.startClient(cluster.getConfig());
    MiniClusterSupport.awaitEngineGpus(cluster, 8);
    gpuNode = cluster.getNodeManager(0).getNMContext().getNodeId();
    plainNode = cluster.getNodeManager(1).getNMContext().getNodeId();
    MiniClusterSupport.label(cluster, gpuNode, "GPU", true);
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(client, cluster);
  }

  @Test
  void anApplicationAskingForLabelGpuRunsOnlyOnGpuLabelledNodes() throws Exception {
    try (UnmanagedAm am = UnmanagedAm.register(client, cluster.getConfig(),
        UnmanagedAm.submit(client, "train", "ml", Set.of()))) {
      am.ask(6, MiniClusterSupport.oneSmallGpu(), "GPU");
      assertThat(am.awaitHeld(4, Duration.ofSeconds(30))).isEqualTo(4);
      assertThat(am.held()).extracting(Container::getNodeId).containsOnly(gpuNode);
      am.heartbeat();
      assertThat(am.held()).as("the GPU node's 4 GPUs, none of the other node's").hasSize(4);
    }
  }

  @Test
  void requestsWithoutALabelNeverUseTheExclusiveGpuNodes() throws Exception {
    try (UnmanagedAm am = UnmanagedAm.register(client, cluster.getConfig(),
        UnmanagedAm.submit(client, "etl", "etl", Set.of()))) {
      am.ask(6, MiniClusterSupport.oneSmallGpu());
      assertThat(am.awaitHeld(4, Duration.ofSeconds(30))).isEqualTo(4);
      am.heartbeat();
      assertThat(am.held()).extracting(Container::getNodeId).hasSize(4).containsOnly(plainNode);
    }
  }

  @Test
  void aQueuesDefaultLabelExpressionSendsUnlabelledRequestsToItsPartition() throws Exception {
    try (UnmanagedAm am = UnmanagedAm.register(client, cluster.getConfig(),
        UnmanagedAm.submit(client, "default-label", "gpuonly", Set.of()))) {
      am.ask(2, MiniClusterSupport.oneSmallGpu());
      assertThat(am.awaitHeld(2, Duration.ofSeconds(30))).isEqualTo(2);
      assertThat(am.held()).extracting(Container::getNodeId).containsOnly(gpuNode);
    }
  }

  @Test
  void aQueuesMaximumCapacityInALabelBoundsWhatItGetsOfThatLabelsNodes() throws Exception {
    try (UnmanagedAm am = UnmanagedAm.register(client, cluster.getConfig(),
        UnmanagedAm.submit(client, "capped", "capped", Set.of()))) {
      am.ask(3, MiniClusterSupport.oneSmallGpu(), "GPU");
      assertThat(am.awaitHeld(1, Duration.ofSeconds(30))).isEqualTo(1);
      SpindleScheduler spindle = (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
      await(Duration.ofSeconds(20), () -> spindle.explain(am.applicationId()).text().contains("maximum"));
      am.heartbeat();
      assertThat(am.held()).as("a quarter of the GPU node's 4 GPUs, though 3 are idle").hasSize(1)
          .extracting(Container::getNodeId).containsOnly(gpuNode);
    }
  }
}
