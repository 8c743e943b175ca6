package io.spindle.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.spindle.channel.mig.MigStateStore;
import io.spindle.client.cli.SpindleCli;
import io.spindle.core.model.GpuHealthPolicy;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.ha.ZkSettings;
import io.spindle.nm.GpuDiscovery;
import io.spindle.nm.GpuHealthMonitor;
import io.spindle.nm.GpuSharingSettings;
import io.spindle.nm.MigReconfigurer;
import io.spindle.nm.MigStateAgent;
import io.spindle.nm.ProcessNvidiaSmi;
import io.spindle.yarn.MiniClusterSupport;
import io.spindle.yarn.UnmanagedAm;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #25's acceptance on a MiniYARNCluster: a GPU of a running 2-node gang is reported failed (the node's own
 * health watch, Spindle's {@code MigStateAgent} with its {@code GpuHealthMonitor}, reads a fake {@code nvidia-smi}
 * and a kernel log that turns to Xid 79); the gang restarts with its replacement on the same rack although an
 * emptier rack would be the best fit for a new gang, the failed GPU is never handed out until the node reports it
 * healthy, and {@code why} says what happened.
 *
 * <p>Racks: rack1 holds a1, a2, a3; rack2 holds b1, b2; 8 GPUs each. A filler gang holds rack2 while the training
 * gang starts, so the training gang lands on rack1; the filler then leaves, and rack2 is empty when the GPU fails.
 */
class GpuFailureHotSwapTest {

  private static final String XID_79_ON_GPU_3 = "[Mon Dec  7 10:07:19 2026] NVRM: Xid (PCI:0000:5d:00): 79, "
      + "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n";
  private static final Path FIXTURES = Path.of("..", "yarn-scheduler", "src", "test", "resources", "nvidia-smi");

  @TempDir
  static Path tmp;
  private static SpindleLocalCluster cluster;
  private static YarnClient client;
  private static Configuration conf;
  private static CuratorFramework zk;
  private static final ObjectMapper JSON = new ObjectMapper();

  @BeforeAll
  static void start() throws Exception {
    StringBuilder nodes = new StringBuilder("gpu-model = H100-80GB\nnodes = a1,a2,a3,b1,b2\n");
    for (String n : List.of("a1", "a2", "a3", "b1", "b2")) {
      nodes.append("node.").append(n).append(".rack = /spine1/").append(n.startsWith("a") ? "rack1" : "rack2")
          .append("\nnode.").append(n).append(".memory-mb = 65536\nnode.").append(n).append(".vcores = 32\nnode.")
          .append(n).append(".gpus = 8\n");
    }
    Path spec = Files.writeString(tmp.resolve("nodes.properties"), nodes.toString());
    cluster = SpindleLocalCluster.start(SpindleLocalCluster.Options.parse("--workdir", tmp.resolve("run").toString(),
        "--conf", spec.toString()), new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    assertThat(cluster.distinctHosts()).as("each node its own loopback host, so racks apply").isTrue();
    conf = cluster.clientConf();
    client = MiniClusterSupport.startClient(conf);
    ZkSettings settings = ZkSettings.from(cluster.yarnCluster().getConfig());
    zk = CuratorFrameworkFactory.newClient(settings.address(), new RetryOneTime(200));
    zk.start();
  }

  @AfterAll
  static void stop() throws Exception {
    if (zk != null) {
      zk.close();
    }
    if (client != null) {
      client.stop();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aGangWhoseGpuFailsRestartsOnItsRackAndTheGpuIsNotHandedOutUntilHealthy() throws Exception {
    try (UnmanagedAm filler = UnmanagedAm.register(client, conf, submit("filler", "spindle.gang.size=2",
        "spindle.topology.required=rack"));
        UnmanagedAm train = UnmanagedAm.register(client, conf, submit("train", "spindle.gang.size=2"))) {
      filler.ask(2, MiniClusterSupport.gpus(8));
      assertThat(filler.awaitHeld(2, Duration.ofSeconds(60))).isEqualTo(2);
      assertThat(racks(filler.held())).as("the best fit for a rack-bound pair: the rack it fills").containsExactly(
          "/spine1/rack2");
      train.ask(2, MiniClusterSupport.gpus(8));
      assertThat(train.awaitHeld(2, Duration.ofSeconds(60))).isEqualTo(2);
      assertThat(racks(train.held())).containsExactly("/spine1/rack1");
      filler.release(2);
      train.heartbeat();

      // The node of the gang's first member starts watching its GPUs: Spindle's own NodeManager agent, on a fake
      // nvidia-smi of 8 H100s, with a kernel log.
      NodeId broken = train.held().get(0).getNodeId();
      Path smi = copyFixture("h100-8x");
      Path kernelLog = Files.writeString(tmp.resolve("kern.log"), "");
      try (MigStateAgent agent = watch(broken, smi, kernelLog)) {
        awaitWhy(train.applicationId(), "runs 2 containers"); // Healthy reports change nothing.

        Files.writeString(kernelLog, XID_79_ON_GPU_3);

        MiniClusterSupport.await(Duration.ofSeconds(60), () -> {
          train.heartbeat();
          return train.completed().size() == 2;
        });
        assertThat(train.completed()).extracting(ContainerStatus::getExitStatus).as("stopped, not failed")
            .containsOnly(ContainerExitStatus.PREEMPTED);
        assertThat(train.awaitHeld(2, Duration.ofSeconds(60))).isEqualTo(2);
        assertThat(train.batches()).as("restarted whole").containsExactly(2, 2);
        assertThat(racks(train.held())).as("hot swap: inside the rack it held, not on the empty rack2")
            .containsExactly("/spine1/rack1");
        assertThat(train.held()).extracting(Container::getNodeId).doesNotContain(broken);
        String why = why(train.applicationId());
        assertThat(why).contains("GPU 3 of node " + broken).contains("Xid 79").contains("fallen off the bus")
            .contains("re-queued it whole");

        JsonNode gpu3 = gpu(broken, 3);
        assertThat(gpu3.get("service").asText()).isEqualTo("out");
        assertThat(gpu3.get("serviceReason").asText()).contains("Xid 79");

        // Everything else free is taken: 40 GPUs, 16 the gang's, one failed.
        try (UnmanagedAm fill = UnmanagedAm.register(client, conf, submit("fill"))) {
          fill.ask(24, MiniClusterSupport.gpus(1));
          assertThat(fill.awaitHeld(23, Duration.ofSeconds(60))).isEqualTo(23);
          Thread.sleep(2_000); // Several cycles: the last container must not come.
          fill.heartbeat();
          assertThat(fill.held()).as("the failed GPU is not handed out").hasSize(23);
          assertThat(gpu(broken, 3).get("holder").isNull()).isTrue();

          Files.writeString(kernelLog, ""); // Reset and reboot: the node reports the GPU healthy again.
          assertThat(fill.awaitHeld(24, Duration.ofSeconds(60))).isEqualTo(24);
          assertThat(gpu(broken, 3).get("service").asText()).isEqualTo("in-service");
          assertThat(gpu(broken, 3).get("holder").get("appId").asText()).isEqualTo(fill.applicationId().toString());
        }
      }
    }
  }

  // ---------------------------------------------------------------- helpers

  private static ApplicationId submit(String name, String... tags) throws Exception {
    return UnmanagedAm.submit(client, name, "llm", Set.of(tags));
  }

  private static Set<String> racks(List<Container> containers) {
    Map<String, String> rackOf = cluster.spec().nodes().stream().collect(Collectors.toMap(
        n -> cluster.nodeIds().get(cluster.spec().nodes().indexOf(n)).toString(), LocalClusterSpec.NodeSpec::rack));
    return containers.stream().map(c -> rackOf.get(c.getNodeId().toString())).collect(Collectors.toSet());
  }

  /** Starts the node's health watch and its reports to ZooKeeper, as the NodeManager's Spindle plugin does. */
  private static MigStateAgent watch(NodeId node, Path smiDir, Path kernelLog) {
    ProcessNvidiaSmi smi = new ProcessNvidiaSmi(List.of("sh", FIXTURES.resolve("fake-nvidia-smi.sh").toString(),
        smiDir.toString()), Duration.ofSeconds(10));
    GpuDiscovery discovery = new GpuDiscovery(smi, GpuModelCatalog.builtIn(), GpuSharingSettings.exclusive());
    MigStateAgent agent = new MigStateAgent(node.getHost(), new MigStateStore(zk,
        ZkSettings.from(cluster.yarnCluster().getConfig()).root()), discovery, new MigReconfigurer(smi, discovery),
        gpu -> false, inventory -> { }, System::currentTimeMillis, Duration.ofMillis(500));
    agent.watchHealth(new GpuHealthMonitor(GpuHealthMonitor.tools(smi, kernelLog, null, Duration.ofSeconds(10)),
        GpuHealthPolicy.DEFAULT), Duration.ofMillis(200));
    agent.start();
    return agent;
  }

  private static Path copyFixture(String name) throws Exception {
    Path to = tmp.resolve(name);
    Files.createDirectories(to);
    try (var files = Files.list(FIXTURES.resolve(name))) {
      for (Path f : files.toList()) {
        Files.copy(f, to.resolve(f.getFileName()));
      }
    }
    return to;
  }

  private static String why(ApplicationId app) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int exit = new SpindleCli(new PrintStream(out, true, StandardCharsets.UTF_8))
        .run(new String[] {"--url", cluster.webUrl().orElseThrow(), "why", app.toString()}, Map.of());
    String text = out.toString(StandardCharsets.UTF_8).strip();
    assertThat(exit).as(text).isZero();
    return text;
  }

  private static void awaitWhy(ApplicationId app, String text) throws Exception {
    MiniClusterSupport.await(Duration.ofSeconds(30), () -> why(app).contains(text));
  }

  /** GPU {@code index} of {@code node} as the status API's node list shows it. */
  private static JsonNode gpu(NodeId node, int index) throws Exception {
    JsonNode nodes = JSON.readTree(new URL(cluster.webUrl().orElseThrow() + "api/v1/nodes"));
    for (JsonNode n : nodes) {
      if (n.get("id").asText().equals(node.toString())) {
        return n.get("gpus").get(index);
      }
    }
    throw new AssertionError("no node " + node + " in " + nodes);
  }
}
