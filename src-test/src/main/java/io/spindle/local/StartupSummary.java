package io.spindle.local;

import io.spindle.ha.ZkSettings;
import io.spindle.local.LocalClusterSpec.NodeSpec;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;

/** What the command prints once the cluster is up: where everything is and how to use it. */
final class StartupSummary {

  private StartupSummary() {}

  static void print(SpindleLocalCluster cluster, PrintStream out) {
    Configuration c = cluster.yarnCluster().getConfig();
    LocalWorkdir workdir = cluster.workdir();
    out.println();
    out.println("Spindle local cluster is up.");
    out.printf("  scheduler        %s%n", cluster.schedulerClass());
    out.printf("  ZooKeeper        %s   (Spindle state under %s)%n", cluster.zookeeperConnectString(),
        ZkSettings.from(c).root());
    if (cluster.ha()) {
      for (String id : RmHaPair.IDS) {
        out.printf("  ResourceManager  %s   (%s%s; scheduler %s, admin %s)%n",
            c.get(HAUtil.addSuffix(YarnConfiguration.RM_ADDRESS, id)), id,
            id.equals(RmHaPair.IDS.get(0)) ? ", active" : ", standby",
            c.get(HAUtil.addSuffix(YarnConfiguration.RM_SCHEDULER_ADDRESS, id)),
            c.get(HAUtil.addSuffix(YarnConfiguration.RM_ADMIN_ADDRESS, id)));
      }
    } else {
      out.printf("  ResourceManager  %s   (scheduler %s, admin %s)%n", c.get(YarnConfiguration.RM_ADDRESS),
          c.get(YarnConfiguration.RM_SCHEDULER_ADDRESS), c.get(YarnConfiguration.RM_ADMIN_ADDRESS));
    }
    out.printf("  RM web UI        %s%n", cluster.rmWebUrl());
    cluster.webUrl().ifPresent(url -> out.printf(
        "  Spindle web      %s   (GPU map; status API %sapi/v1/status; %smetrics)%n", url, url, url));
    out.printf("  HADOOP_CONF_DIR  %s%n", workdir.confDir());
    out.printf("  logs             %s%n", workdir.logFile());
    printNodes(cluster, out);
    if (!cluster.distinctHosts()) {
      out.println("  note: 127.0.0.2.. cannot be bound here, so all nodes share the host localhost and one rack");
    }
    out.println();
    out.println("Use it from another shell:");
    out.printf("  HADOOP_CONF_DIR=%s yarn node -list -showDetails%n", workdir.confDir());
    out.printf("  source %s   # then yarn, spark-submit --master yarn ...%n", workdir.envFile());
    out.println();
    out.flush();
  }

  /** Each node as the ResourceManager sees it (rack, resources), with the MIG layouts of its GPUs. */
  private static void printNodes(SpindleLocalCluster cluster, PrintStream out) {
    LocalClusterSpec spec = cluster.spec();
    List<NodeId> nodeIds = cluster.nodeIds();
    out.println("  nodes:");
    Map<NodeId, RMNode> rmNodes = cluster.resourceManager().getRMContext().getRMNodes();
    for (int i = 0; i < spec.nodes().size(); i++) {
      NodeSpec n = spec.nodes().get(i);
      RMNode rm = rmNodes.get(nodeIds.get(i));
      String rack = rm == null ? "?" : rm.getRackName();
      StringBuilder res = new StringBuilder();
      if (rm != null) {
        for (String type : spec.resourceTypes()) {
          long v = rm.getTotalCapability().getResourceValue(type);
          if (v > 0) {
            res.append(res.length() == 0 ? "" : ", ").append(type).append('=').append(v);
          }
        }
      }
      out.printf("    %-6s %-21s %-14s %s, %d GiB, %d vcores; %s%n", n.name(), nodeIds.get(i), rack,
          n.model().name(), n.memoryMb() / 1024, n.vcores(), res);
      if (n.sharedGpus() > 0) {
        out.printf("    %-6s %-21s %-14s   GPUs 0..%d time-sliced for shares (no agent: modelled from"
            + " nvidia.com/gpu-milli)%n", "", "", "", n.sharedGpus() - 1);
      }
      if (!n.nvlinkIslands().isEmpty()) {
        out.printf("    %-6s %-21s %-14s   NVLink islands by GPU: %s%n", "", "", "", n.nvlinkIslands());
      }
      for (int j = 0; j < n.migGpus().size(); j++) {
        out.printf("    %-6s %-21s %-14s   MIG GPU %d: %s%n", "", "", "", n.wholeGpus() + j,
            n.migGpus().get(j).placements());
      }
    }
  }
}
