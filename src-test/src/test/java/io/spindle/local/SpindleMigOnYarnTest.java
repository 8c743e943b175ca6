package io.spindle.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.channel.mig.MigStateStore;
import io.spindle.ha.avro.MigInstanceRecord;
import io.spindle.ha.avro.MigLayoutRecord;
import io.spindle.yarn.UnmanagedAm;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * MIG through YARN with Spindle as the scheduler: the sample local cluster (MiniYARNCluster, embedded ZooKeeper, node
 * gpu3 with GPU 2 as 7 x 1g.10gb and GPU 3 as 2 x 3g.40gb, reported to ZooKeeper the way Spindle's NodeManager agent
 * reports them). A MIG ask lands on the MIG node; an ask the existing instances cannot meet makes Spindle write a
 * desired layout to ZooKeeper, and the containers come once the node reports it applied.
 */
class SpindleMigOnYarnTest {

  private static final String MIG_1G = "nvidia.com/mig-1g.10gb";
  private static final String MIG_3G = "nvidia.com/mig-3g.40gb";

  @TempDir
  static Path tmp;
  private static SpindleLocalCluster cluster;
  private static YarnClient client;
  private static Configuration conf;
  private static NodeId migNode;

  @BeforeAll
  static void start() throws Exception {
    // The sample queues, with a one-second re-partition cost so the test need not wait the default 30 s.
    Path queues = tmp.resolve("capacity-scheduler.xml");
    Files.writeString(queues, Files.readString(sampleQueues()).replace("</configuration>",
        "<property><name>yarn.scheduler.spindle.mig.reconfigure-seconds</name><value>1</value></property>\n"
            + "</configuration>"));
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    cluster = SpindleLocalCluster.start(SpindleLocalCluster.Options.parse("--workdir", tmp.resolve("run").toString(),
        "--queues", queues.toString()), new PrintStream(buffer, true, StandardCharsets.UTF_8));
    conf = cluster.clientConf();
    client = YarnClient.createYarnClient();
    client.init(conf);
    client.start();
    List<String> names = cluster.spec().nodes().stream().map(LocalClusterSpec.NodeSpec::name).toList();
    migNode = cluster.nodeIds().get(names.indexOf("gpu3"));
  }

  @AfterAll
  static void stop() throws Exception {
    if (client != null) {
      client.stop();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aMigAskLandsOnAMigSliceOfTheMigNode() throws Exception {
    try (UnmanagedAm am = UnmanagedAm.register(client, conf, submit("mig-1g"))) {
      am.ask(3, mig(MIG_1G));
      assertThat(am.awaitHeld(3, Duration.ofSeconds(30))).isEqualTo(3);
      for (Container c : am.held()) {
        assertThat(c.getNodeId()).isEqualTo(migNode);
        assertThat(c.getResource().getResourceValue(MIG_1G)).isEqualTo(1);
        assertThat(c.getResource().getResourceValue("yarn.io/gpu")).isZero();
      }
    }
  }

  @Test
  void anAskTheExistingInstancesCannotMeetIsServedAfterTheNodeRepartitionsAnIdleGpu() throws Exception {
    try (CuratorFramework zk = CuratorFrameworkFactory.newClient(cluster.zookeeperConnectString(),
        new RetryOneTime(100))) {
      zk.start();
      MigStateStore store = new MigStateStore(zk, "/spindle/" + SpindleLocalCluster.CLUSTER_ID);
      String zkNode = cluster.distinctHosts() ? migNode.getHost() : migNode.toString();
      long before = store.reported(zkNode, 2).orElseThrow().getVersion();

      // Two 3g.40gb instances exist (GPU 3); four are asked. GPU 2 (7 x 1g.10gb) is idle and must be re-partitioned.
      try (UnmanagedAm am = UnmanagedAm.register(client, conf, submit("mig-3g"))) {
        am.ask(4, mig(MIG_3G));
        assertThat(am.awaitHeld(4, Duration.ofSeconds(60))).isEqualTo(4);
        assertThat(am.held()).allMatch(c -> c.getNodeId().equals(migNode)
            && c.getResource().getResourceValue(MIG_3G) == 1);
      }
      MigLayoutRecord desired = store.desired(zkNode, 2).orElseThrow();
      MigLayoutRecord reported = store.reported(zkNode, 2).orElseThrow();
      assertThat(desired.getVersion()).isGreaterThan(before);
      assertThat(reported.getVersion()).isEqualTo(desired.getVersion());
      assertThat(reported.getError()).isNull();
      assertThat(reported.getInstances()).extracting(MigInstanceRecord::getProfile).contains("3g.40gb");
    }
  }

  private static Path sampleQueues() {
    Path here = Path.of("conf", "capacity-scheduler.xml");
    return Files.exists(here) ? here : Path.of("..", "conf", "capacity-scheduler.xml");
  }

  private static Resource mig(String resource) {
    Resource r = Resource.newInstance(1024, 1);
    r.setResourceValue(resource, 1);
    return r;
  }

  private static ApplicationId submit(String name) throws Exception {
    return UnmanagedAm.submit(client, name, "inference", Set.of());
  }

}
