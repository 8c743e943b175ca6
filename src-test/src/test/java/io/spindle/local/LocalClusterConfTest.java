package io.spindle.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.InvalidInputException;
import io.spindle.local.LocalClusterSpec.NodeSpec;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The shipped local-cluster file, its parser's refusals, the sample real-cluster files and topology.sh. */
class LocalClusterConfTest {

  private static final GpuModelCatalog CATALOG = GpuModelCatalog.builtIn();

  @Test
  void shippedNodeFileHasFourGpuNodesOnTwoRacks() throws Exception {
    LocalClusterSpec spec = LocalClusterSpec.read(Path.of("../conf/local-cluster.properties"), CATALOG);
    assertThat(spec.nodes()).hasSize(4);
    assertThat(spec.nodes()).extracting(NodeSpec::rack).containsOnly("/spine1/rack1", "/spine1/rack2")
        .contains("/spine1/rack1", "/spine1/rack2");
    assertThat(spec.resourceTypes()).containsExactly("yarn.io/gpu", "nvidia.com/mig-1g.10gb",
        "nvidia.com/mig-3g.40gb", "nvidia.com/gpu-milli", "nvidia.com/gpu-mem-mb");
    assertThat(spec.rackDepth()).isEqualTo(2);
    assertThat(spec.commonModel().name()).isEqualTo("H100-80GB");
    NodeSpec gpu3 = spec.nodes().get(2);
    assertThat(gpu3.totalGpus()).isEqualTo(4);
    // Places, as Spindle's NodeManager plugin advertises: 7 starts for 1g.10gb and 2 for 3g.40gb per MIG GPU.
    assertThat(spec.advertised(gpu3)).isEqualTo(Map.of("yarn.io/gpu", 2L, "nvidia.com/mig-1g.10gb", 14L,
        "nvidia.com/mig-3g.40gb", 4L, "nvidia.com/gpu-milli", 0L, "nvidia.com/gpu-mem-mb", 0L));
    assertThat(gpu3.instances("1g.10gb")).isEqualTo(7);
    assertThat(gpu3.instances("3g.40gb")).isEqualTo(2);
    for (NodeSpec n : spec.nodes()) {
      assertThat(spec.advertised(n).get("yarn.io/gpu")).isPositive();
    }
    // gpu4: two of its four GPUs time-sliced, advertised as a node without an agent advertises them.
    NodeSpec gpu4 = spec.nodes().get(3);
    assertThat(gpu4.sharedGpus()).isEqualTo(2);
    assertThat(spec.advertised(gpu4)).containsEntry("yarn.io/gpu", 4L).containsEntry("nvidia.com/gpu-milli", 2000L)
        .containsEntry("nvidia.com/gpu-mem-mb", 2 * 81_920L);
  }

  @Test
  void shippedSeedFileHasEightNodesOfEightGpusWithNvlinkIslandsAndPreemption() throws Exception {
    LocalClusterSpec spec = LocalClusterSpec.read(Path.of("../conf/seed-cluster.properties"), CATALOG);
    assertThat(spec.nodes()).hasSize(8).allSatisfy(n -> assertThat(n.totalGpus()).isEqualTo(8));
    assertThat(spec.nodes()).extracting(NodeSpec::rack).containsOnly("/spine1/rack1", "/spine1/rack2");
    assertThat(spec.nodes()).filteredOn(n -> n.nvlinkIslands().stream().distinct().count() == 1).isNotEmpty();
    NodeSpec nvl1 = spec.nodes().get(6);
    assertThat(nvl1.model().name()).isEqualTo("H100-94GB");
    assertThat(nvl1.nvlinkIsland(3)).isEqualTo(1);
    assertThat(spec.schedulerSettings()).containsEntry("yarn.scheduler.spindle.preemption.enabled", "true")
        .containsEntry("yarn.cluster.max-application-priority", "10");
  }

  @Test
  void nvlinkIslandsAndSchedulerSettingsAreCheckedToo() {
    String base = "gpu-model=H100-80GB\nnodes=a\nnode.a.gpus=4\n";
    assertThat(parse(base).nodes().get(0).nvlinkIsland(3)).as("default: one island").isZero();
    assertThat(parse(base + "node.a.nvlink-islands=0,0,1,1\n").nodes().get(0).nvlinkIslands())
        .containsExactly(0, 0, 1, 1);
    assertRefused(base + "node.a.nvlink-islands=0,1\n", "node.a.nvlink-islands", "one island number per GPU");
    assertRefused(base + "node.a.nvlink-islands=0,0,x,1\n", "node.a.nvlink-islands");
    assertThat(parse(base + "yarn.scheduler.spindle.preemption.starvation-seconds=2\n").schedulerSettings())
        .containsExactly(Map.entry("yarn.scheduler.spindle.preemption.starvation-seconds", "2"));
    assertRefused(base + "yarn.scheduler.spindle.zk.address=elsewhere:2181\n", "yarn.scheduler.spindle.zk.address",
        "set by spindle-local itself");
    assertRefused(base + "yarn.resourcemanager.address=x:1\n", "yarn.resourcemanager.address", "unknown key");
  }

  @Test
  void sharedGpusAreSomeOfTheWholeOnesOnANodeWithoutMig() {
    String base = "gpu-model=H100-80GB\nmig-profiles=1g.10gb\nnodes=a\n";
    assertThat(parse(base + "node.a.gpus=2\nnode.a.shared-gpus=2\n").nodes().get(0).sharedGpus()).isEqualTo(2);
    assertThat(parse(base + "node.a.gpus=2\n").sharesGpus()).isFalse();
    assertRefused(base + "node.a.gpus=2\nnode.a.shared-gpus=3\n", "node.a.shared-gpus", "more than the node's 2");
    assertRefused(base + "node.a.gpus=2\nnode.a.shared-gpus=1\nnode.a.mig=1g.10gb\n", "node.a.shared-gpus",
        "cannot have MIG GPUs");
  }

  @Test
  void instancesModeAdvertisesWhatExists() {
    LocalClusterSpec spec = parse("gpu-model=A100-40GB\nmig-profiles=1g.5gb,3g.20gb\nmig-advertise=instances\n"
        + "nodes=a\nnode.a.gpus=1\nnode.a.mig=3g.20gb@4,1g.5gb*2;empty\n");
    NodeSpec a = spec.nodes().get(0);
    assertThat(a.migGpus().get(0).placements()).hasToString("[1g.5gb@0, 1g.5gb@1, 3g.20gb@4]");
    assertThat(spec.advertised(a)).containsEntry("nvidia.com/mig-1g.5gb", 2L).containsEntry("nvidia.com/mig-3g.20gb",
        1L);
    assertThat(a.totalGpus()).isEqualTo(3);
    assertThat(spec.rackDepth()).isEqualTo(1);
  }

  @Test
  void mistakesAreRefusedNamingTheKey() {
    String base = "gpu-model=H100-80GB\nmig-profiles=1g.10gb\nnodes=a\n";
    assertRefused(base + "node.a.gpu=4\n", "node.a.gpu");
    assertRefused(base + "node.b.gpus=4\n", "node.b.gpus");
    assertRefused(base + "node.a.mig=1g.10gb*8\n", "node.a.mig", "no room left");
    assertRefused(base + "node.a.mig=1g.5gb\n", "node.a.mig", "offers no such MIG profile");
    assertRefused(base + "node.a.mig=3g.40gb@1\n", "node.a.mig", "may start only at");
    assertRefused(base + "node.a.gpus=-1\n", "node.a.gpus");
    assertRefused(base + "node.a.rack=rack1\n", "node.a.rack");
    assertRefused(base + "node.a.gpu-model=V100\n", "node.a.gpu-model", "unknown GPU model");
    assertRefused("gpu-model=H100-80GB\nmig-profiles=9g.1gb\nnodes=a\n", "mig-profiles");
    assertRefused("gpu-model=H100-80GB\nmig-profiles=1g.10gb+me\nnodes=a\n", "mig-profiles", "'+'");
    assertRefused("gpu-model=H100-80GB\ngpu-resource=amd.com/gpu\nnodes=a\n", "gpu-resource");
    assertRefused("gpu-model=H100-80GB\nnodes=\n", "nodes");
    assertRefused("gpu-model=H100-80GB\nnodes=a,a\n", "nodes");
    assertRefused("gpu-model=A30-24GB\nnodes=a\nmig-advertise=all\n", "mig-advertise");
  }

  @Test
  void sampleRealClusterFilesAgree() {
    Configuration site = new Configuration(false);
    site.addResource(new org.apache.hadoop.fs.Path(Path.of("../conf/yarn-site.xml").toAbsolutePath().toUri()));
    Configuration types = new Configuration(false);
    types.addResource(new org.apache.hadoop.fs.Path(Path.of("../conf/resource-types.xml").toAbsolutePath().toUri()));
    assertThat(site.get("yarn.resourcemanager.scheduler.class")).isEqualTo(SpindleLocalCluster.SPINDLE_SCHEDULER);
    assertThat(site.get("net.topology.script.file.name")).endsWith("/topology.sh");
    List<String> declared = Arrays.asList(types.getTrimmedStrings("yarn.resource-types"));
    assertThat(declared).contains("nvidia.com/gpu");
    String model = site.get(LocalClusterConf.SPINDLE_NODE_GPU_MODEL);
    for (String profile : site.getTrimmedStrings("yarn.nodemanager.spindle.mig.profiles")) {
      assertThat(declared).contains("nvidia.com/mig-" + profile);
      assertThat(CATALOG.require("model", model).profile(profile)).as(profile).isPresent();
    }
    int plugins = site.getTrimmedStrings("yarn.nodemanager.pluggable-device-framework.device-classes").length;
    assertThat(plugins).isEqualTo(1 + site.getTrimmedStrings("yarn.nodemanager.spindle.mig.profiles").length);
  }

  @Test
  void topologyScriptPrintsOneRackPerHost(@TempDir Path tmp) throws Exception {
    Path table = tmp.resolve("topology.table");
    Files.writeString(table, "# comment\n10.0.0.1 /spine1/rack1\n\ngpu-b01.example.com   /spine1/rack2  # b\n",
        StandardCharsets.UTF_8);
    assertThat(topology(table, "10.0.0.1", "unknown", "gpu-b01.example.com"))
        .isEqualTo("/spine1/rack1 /default/default-rack /spine1/rack2");
    Files.writeString(table, "10.0.0.1 /spine1/rack1\n* /spine0/rack0\n", StandardCharsets.UTF_8);
    assertThat(topology(table, "other", "10.0.0.1")).isEqualTo("/spine0/rack0 /spine1/rack1");
    assertThat(topology(tmp.resolve("missing"), "a", "b")).isEqualTo("/default-rack /default-rack");
  }

  private static String topology(Path table, String... hosts) throws Exception {
    List<String> cmd = new java.util.ArrayList<>(List.of("bash", Path.of("../conf/topology.sh").toString()));
    cmd.addAll(List.of(hosts));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("SPINDLE_TOPOLOGY_TABLE", table.toString());
    Process p = pb.start();
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertThat(p.exitValue()).as(output).isZero();
    return output;
  }

  private static LocalClusterSpec parse(String text) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(text));
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
    return LocalClusterSpec.parse(p, CATALOG);
  }

  private static void assertRefused(String text, String key, String... reasons) {
    assertThatThrownBy(() -> parse(text)).as(text).isInstanceOf(InvalidInputException.class)
        .hasMessageStartingWith(key + "=");
    for (String reason : reasons) {
      assertThatThrownBy(() -> parse(text)).as(text).hasMessageContaining(reason);
    }
  }
}
