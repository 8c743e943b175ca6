package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.placement.NodeView;
import java.time.Duration;
import java.util.List;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.junit.jupiter.api.Test;

/**
 * YARN's graceful decommission ({@code yarn rmadmin -refreshNodes -g}) reaches Spindle as a cordon: a real
 * ResourceManager (MockRM) with Spindle as its scheduler, a NodeManager that still runs an application (so YARN keeps
 * it DECOMMISSIONING), its heartbeats, and a recommission that gives the node back. What a cordon does to placement
 * is the engine's ({@code NodeCordonTest}, and {@code StatusApiTest} through the admin operation).
 */
class GracefulDecommissionTest {

  @Test
  void aNodeBeingDecommissionedIsCordonedAndARecommissionedOneIsNot() throws Exception {
    YarnConfiguration c = new YarnConfiguration();
    c.set(YarnConfiguration.RM_SCHEDULER, SpindleScheduler.class.getName());
    c.set("yarn.scheduler.capacity.root.queues", "default");
    c.set("yarn.scheduler.capacity.root.default.capacity", "100");
    c.set("yarn.scheduler.capacity.maximum-am-resource-percent", "1.0"); // One node at first: let the AM start.
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.setMiniClusterMode(true);
    MockRM rm = new MockRM(c);
    rm.start();
    try {
      SpindleScheduler spindle = (SpindleScheduler) rm.getResourceScheduler();
      // A real application whose AM runs on the node: YARN keeps a decommissioning node until its work is done.
      MockNM leaving = rm.registerNode("127.0.0.1:1234", 8192, 8);
      org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp app =
          org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter.submitWithMemory(1024, rm);
      org.apache.hadoop.yarn.server.resourcemanager.MockAM am = MockRM.launchAndRegisterAM(app, rm, leaving);
      MockNM staying = rm.registerNode("localhost:1235", 8192, 8);
      leaving.nodeHeartbeat(am.getApplicationAttemptId(), 1, org.apache.hadoop.yarn.api.records.ContainerState.RUNNING);
      staying.nodeHeartbeat(true);
      MiniClusterSupport.await(Duration.ofSeconds(20), () -> spindle.status().nodes().size() == 2);

      rm.sendNodeGracefulDecommission(leaving, 3600);
      rm.waitForState(leaving.getNodeId(), NodeState.DECOMMISSIONING);
      leaving.nodeHeartbeat(am.getApplicationAttemptId(), 1, org.apache.hadoop.yarn.api.records.ContainerState.RUNNING);
      MiniClusterSupport.await(Duration.ofSeconds(20),
          () -> NodeEvents.DECOMMISSIONING.equals(view(spindle, "127.0.0.1:1234").cordoned()));
      assertThat(view(spindle, "localhost:1235").cordoned()).isNull();

      rm.sendNodeEvent(leaving, RMNodeEventType.RECOMMISSION);
      rm.waitForState(leaving.getNodeId(), NodeState.RUNNING);
      leaving.nodeHeartbeat(am.getApplicationAttemptId(), 1, org.apache.hadoop.yarn.api.records.ContainerState.RUNNING);
      MiniClusterSupport.await(Duration.ofSeconds(20), () -> view(spindle, "127.0.0.1:1234").cordoned() == null);
    } finally {
      rm.stop();
    }
  }

  private static NodeView view(SpindleScheduler spindle, String node) {
    return spindle.status().nodes().stream().filter(v -> v.node().id().value().equals(node)).findFirst()
        .orElseThrow(() -> new AssertionError("no node " + node));
  }
}
