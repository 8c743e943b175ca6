package io.spindle.yarn;

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
 * A non-exclusive YARN node label ({@code yarn rmadmin -addToClusterNodeLabels "SPARE(exclusive=false)"}) under
 * Spindle, through a real ResourceManager: requests that name no label use what the label's own requests leave idle
 * on its nodes, after the unlabelled nodes are full; the label's own requests come first there.
 */
class NonExclusiveLabelsTest {

  private static MiniYARNCluster cluster;
  private static YarnClient client;
  private static NodeId spareNode;
  private static NodeId plainNode;

  @BeforeAll
  static void start() throws Exception {
    YarnConfiguration c = new YarnConfiguration();
    MiniClusterSupport.spindleWithGpus(c, 4);
    c.setBoolean(YarnConfiguration.NODE_LABELS_ENABLED, true);
    Path store = Files.createTempDirectory("non-exclusive-labels");
    c.set(YarnConfiguration.FS_NODE_LABELS_STORE_ROOT_DIR, store.toUri().toString());
    String q = "yarn.scheduler.capacity.root.";
    c.set(q + "queues", "owners,etl");
    c.set(q + "owners.capacity", "50");
    c.set(q + "etl.capacity", "50");
    c.set(q + "owners.user-limit-factor", "-1");
    c.set(q + "etl.user-limit-factor", "-1");
    c.set(q + "accessible-node-labels.SPARE.capacity", "100");
    c.set(q + "owners.accessible-node-labels", "SPARE");
    c.set(q + "owners.accessible-node-labels.SPARE.capacity", "100");
    c.set(q + "etl.accessible-node-labels", " ");
    cluster = MiniClusterSupport.startCluster("non-exclusive-labels", c, 2);
    client = MiniClusterSupport.startClient(cluster.getConfig());
    MiniClusterSupport.awaitEngineGpus(cluster, 8);
    spareNode = cluster.getNodeManager(0).getNMContext().getNodeId();
    plainNode = cluster.getNodeManager(1).getNMContext().getNodeId();
    MiniClusterSupport.label(cluster, spareNode, "SPARE", false);
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(client, cluster);
  }

  @Test
  void unlabelledRequestsUseTheIdleNodesOfANonExclusiveLabelAfterTheOwnersOnes() throws Exception {
    try (UnmanagedAm owner = UnmanagedAm.register(client, cluster.getConfig(),
        UnmanagedAm.submit(client, "owner", "owners", Set.of()))) {
      owner.ask(1, MiniClusterSupport.oneSmallGpu(), "SPARE");
      assertThat(owner.awaitHeld(1, Duration.ofSeconds(30))).isEqualTo(1);
      try (UnmanagedAm etl = UnmanagedAm.register(client, cluster.getConfig(),
          UnmanagedAm.submit(client, "etl", "etl", Set.of()))) {
        etl.ask(8, MiniClusterSupport.oneSmallGpu());
        assertThat(etl.awaitHeld(7, Duration.ofSeconds(30))).isEqualTo(7);
        etl.heartbeat();
        assertThat(etl.held()).as("the plain node's 4 GPUs, then the 3 the label's owner left idle").hasSize(7)
            .extracting(Container::getNodeId).containsOnly(plainNode, spareNode);
        assertThat(etl.held()).filteredOn(k -> k.getNodeId().equals(spareNode)).hasSize(3);
      }
      assertThat(owner.held()).extracting(Container::getNodeId).containsOnly(spareNode);
    }
  }
}
