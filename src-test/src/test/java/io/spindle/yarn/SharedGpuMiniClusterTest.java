package io.spindle.yarn;

import static io.spindle.yarn.MiniClusterSupport.GPU_MEMORY_MB;
import static io.spindle.yarn.MiniClusterSupport.GPU_MILLI;
import static io.spindle.yarn.MiniClusterSupport.gpuShare;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.spindle.core.engine.EngineStatus;
import io.spindle.core.placement.GpuShareUse;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.placement.NodeView;
import io.spindle.web.SpindleWeb;
import java.io.InputStream;
import java.net.URL;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Shares of a GPU on a real MiniYARNCluster: one NodeManager without Spindle's agent advertising two GPUs and
 * {@code nvidia.com/gpu-milli=2000}, so both are time-sliced. Quarter-GPU containers pack one GPU before the next,
 * YARN's own accounting takes the shares off the node, the status API shows each share on its GPU, and bad asks
 * are refused at once with a reason naming the resource or tag.
 *
 * <p>Needs the engine's share placement (ClusterState placing share shapes, #21); without it the containers start
 * but hold no GPU slot, and the first test fails on which GPU each got.
 */
class SharedGpuMiniClusterTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static MiniYARNCluster cluster;
  private static YarnClient client;
  private static Configuration conf;

  @BeforeAll
  static void start() throws Exception {
    YarnConfiguration c = new YarnConfiguration();
    MiniClusterSupport.spindleWithSharedGpus(c, 2);
    c.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 16_384);
    c.setInt(YarnConfiguration.NM_VCORES, 16);
    c.setInt(SpindleWeb.PORT, 0);
    c.set(SpindleWeb.BIND_ADDRESS, "127.0.0.1");
    MiniClusterSupport.halvesAandB(c);
    cluster = MiniClusterSupport.startCluster("shared-gpus", c, 1);
    conf = cluster.getConfig();
    client = MiniClusterSupport.startClient(conf);
    MiniClusterSupport.await(Duration.ofSeconds(30), () -> client.getNodeReports(NodeState.RUNNING).size() == 1);
    MiniClusterSupport.awaitEngineGpus(cluster, 2);
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(client, cluster);
  }

  private static SpindleScheduler spindle() {
    return (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
  }

  @Test
  void fourQuarterGpusShareOneGpuAndAFifthGoesToTheOther() throws Exception {
    NodeView before = spindle().status().nodes().get(0);
    assertThat(before.node().gpus()).hasSize(2).allMatch(g -> g.sharesBelowWhole());
    ApplicationId app = UnmanagedAm.submit(client, "quarters", "a", Set.of());
    try (UnmanagedAm am = UnmanagedAm.register(client, conf, app)) {
      am.ask(5, gpuShare(250));
      assertThat(am.awaitHeld(5, Duration.ofSeconds(30))).isEqualTo(5);
      assertThat(am.held()).allMatch(c -> c.getResource().getResourceValue(GPU_MILLI) == 250);

      // Which GPU each container got, as the engine placed it.
      EngineStatus status = spindle().status();
      Map<Integer, Long> perGpu = status.containers().stream().filter(c -> c.appId().value().equals(app.toString()))
          .flatMap(c -> c.gpus().stream()).peek(g -> assertThat(g.share()).isTrue())
          .collect(Collectors.groupingBy(GpuSlot::gpuIndex, TreeMap::new, Collectors.counting()));
      assertThat(perGpu).as("four on one GPU, the fifth on the other").containsExactly(Map.entry(0, 4L),
          Map.entry(1, 1L));
      Map<Integer, GpuShareUse> use = status.nodes().get(0).shares();
      assertThat(use.get(0)).isEqualTo(new GpuShareUse(1000, 0, 4, false));
      assertThat(use.get(1)).isEqualTo(new GpuShareUse(250, 0, 1, false));

      // YARN's own node accounting took the shares off the node.
      SchedulerNode node = cluster.getResourceManager().getResourceScheduler()
          .getSchedulerNode(am.held().get(0).getNodeId());
      assertThat(node.getAllocatedResource().getResourceValue(GPU_MILLI)).isEqualTo(1250);

      // The status API's nodes view: the sharing mode, what is taken, and each share's container on its GPU.
      JsonNode gpus = get("nodes").get(0).get("gpus");
      assertThat(gpus.get(0).get("sharing").asText()).isEqualTo("time-slice");
      assertThat(gpus.get(0).get("shareUse").get("usedMilli").asInt()).isEqualTo(1000);
      assertThat(gpus.get(1).get("shareUse").get("shares").asInt()).isEqualTo(1);
      Map<String, Integer> gpuOfContainer = new HashMap<>();
      for (JsonNode g : gpus) {
        for (JsonNode s : g.get("shares")) {
          gpuOfContainer.put(s.get("holder").get("container").asText(), g.get("index").asInt());
        }
      }
      assertThat(gpuOfContainer.keySet()).containsExactlyInAnyOrderElementsOf(
          am.held().stream().map(Container::getId).map(Object::toString).toList());
      assertThat(get("status").get("cluster").get("gpuShares").asInt()).isEqualTo(5);
    }
    MiniClusterSupport.await(Duration.ofSeconds(30), () -> spindle().status().nodes().get(0).shares().values()
        .stream().allMatch(u -> u.shares() == 0));
  }

  /**
   * A share of GPU memory alone reaches its NodeManager with the compute it holds: the NodeManager's shared-GPU plugin
   * serves nvidia.com/gpu-milli, so without it the container would get no GPU.
   */
  @Test
  void aMemoryOnlyShareCarriesTheComputeItHolds() throws Exception {
    io.spindle.core.model.GpuModel model = spindle().status().nodes().get(0).node().gpus().get(0).model();
    long expected = io.spindle.core.model.Resources.of(512, 1)
        .withShare(0, 20_480, io.spindle.core.model.GpuIsolation.ANY).shareMilli(model);
    ApplicationId app = UnmanagedAm.submit(client, "memory-share", "a", Set.of());
    try (UnmanagedAm am = UnmanagedAm.register(client, conf, app)) {
      Resource ask = Resource.newInstance(512, 1);
      ask.setResourceValue(GPU_MEMORY_MB, 20_480);
      am.ask(1, ask);
      assertThat(am.awaitHeld(1, Duration.ofSeconds(30))).isEqualTo(1);
      Container held = am.held().get(0);
      assertThat(held.getResource().getResourceValue(GPU_MILLI)).isPositive().isEqualTo(expected);
      assertThat(held.getResource().getResourceValue(GPU_MEMORY_MB)).isEqualTo(20_480);
      SchedulerNode node = cluster.getResourceManager().getResourceScheduler().getSchedulerNode(held.getNodeId());
      assertThat(node.getAllocatedResource().getResourceValue(GPU_MILLI)).isEqualTo(expected);
    }
    MiniClusterSupport.await(Duration.ofSeconds(30), () -> spindle().status().nodes().get(0).shares().values()
        .stream().allMatch(u -> u.shares() == 0));
  }

  @Test
  void moreThanOneGpuInAShareIsRefusedWithTheResource() throws Exception {
    assertThat(refused(Set.of(), gpuShare(1500)))
        .contains("Spindle rejected").contains("nvidia.com/gpu-milli=1500 is more than one GPU");
  }

  @Test
  void aShareBesideWholeGpusIsRefused() throws Exception {
    Resource both = gpuShare(250);
    both.setResourceValue(MiniClusterSupport.GPU, 1);
    assertThat(refused(Set.of(), both)).contains("nvidia.com/gpu-milli=250").contains("not both");
  }

  @Test
  void anUnknownModelInTheSetIsRefusedWithTheKnownOnes() throws Exception {
    assertThat(refused(Set.of("spindle.gpu.models=H100-80GB|no-such-gpu"), gpuShare(250)))
        .contains("unknown GPU model 'no-such-gpu'").contains("H100-80GB");
  }

  @Test
  void moreMemoryThanTheAcceptedGpusHaveIsRefused() throws Exception {
    Resource big = gpuShare(250);
    big.setResourceValue(GPU_MEMORY_MB, 100_000);
    assertThat(refused(Set.of("spindle.gpu.models=H100-80GB"), big))
        .contains("nvidia.com/gpu-mem-mb=100000 is more memory than any GPU of H100-80GB has");
  }

  @Test
  void migIsolationOverModelsThatNameProfilesDifferentlyAsksForAModel() throws Exception {
    assertThat(refused(Set.of("spindle.gpu.isolation=mig"), gpuShare(250)))
        .contains("spindle.gpu.isolation=mig").contains("name one model with spindle.gpu.models");
  }

  @Test
  void aBadIsolationTagIsRefusedAtSubmission() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> UnmanagedAm.submit(client, "bad-tag", "a",
        Set.of("spindle.gpu.isolation=hardware"))).hasMessageContaining("spindle.gpu.isolation=hardware");
  }

  /** Submits, asks for one container of {@code each}, and returns the diagnostics of the application's kill. */
  private static String refused(Set<String> tags, Resource each) throws Exception {
    ApplicationId app = UnmanagedAm.submit(client, "refused", "a", tags);
    UnmanagedAm am = UnmanagedAm.register(client, conf, app);
    am.ask(1, each);
    try {
      am.awaitHeld(1, Duration.ofSeconds(3));
    } catch (Exception expected) {
      // The attempt may be gone already when the application is killed.
    }
    MiniClusterSupport.await(Duration.ofSeconds(30),
        () -> client.getApplicationReport(app).getYarnApplicationState() == YarnApplicationState.KILLED);
    ApplicationReport r = client.getApplicationReport(app);
    return r.getDiagnostics();
  }

  private static JsonNode get(String path) throws Exception {
    int port = spindle().webAddress().orElseThrow().getPort();
    try (InputStream in = new URL("http://127.0.0.1:" + port + "/api/v1/" + path).openStream()) {
      return JSON.readTree(in);
    }
  }
}
