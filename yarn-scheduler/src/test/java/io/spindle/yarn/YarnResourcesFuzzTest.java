package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.fuzz.FuzzInput;
import io.spindle.fuzz.HostileInput;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Hostile YARN resources: what an ApplicationMaster asks for ({@link YarnResources#shape}) and what a NodeManager
 * advertises ({@link YarnResources#node}) become core shapes and nodes, or an {@link IllegalArgumentException} that
 * names the resource or field, which the adapter turns into a rejection; never an arithmetic overflow, a silently
 * dropped resource or a node of a billion GPUs.
 */
class YarnResourcesFuzzTest {

  private static final String TARGET = "resource requests (YARN to core)";
  private static final GpuModelCatalog CATALOG = GpuModelCatalog.builtIn();
  private static final YarnResources TRANSLATE =
      new YarnResources(CATALOG, CATALOG.require("model", "H100-80GB"), 4);
  /**
   * Types the cluster declares: GPUs, two real MIG profiles, one no GPU offers, a share's two, and one Spindle does
   * not schedule.
   */
  private static final List<String> TYPES = List.of("yarn.io/gpu", "nvidia.com/gpu", "nvidia.com/mig-1g.10gb",
      "nvidia.com/mig-3g.40gb", "nvidia.com/mig-9g.99gb", "nvidia.com/gpu-milli", "nvidia.com/gpu-mem-mb",
      "yarn.io/fpga");

  @BeforeAll
  static void declareTypes() {
    Configuration c = new YarnConfiguration();
    c.set(YarnConfiguration.RESOURCE_TYPES, String.join(",", TYPES));
    ResourceUtils.resetResourceTypes(c);
  }

  @AfterAll
  static void restoreTypes() {
    ResourceUtils.resetResourceTypes(new YarnConfiguration());
    HostileInput.report(TARGET);
  }

  @Test
  void randomResourcesBecomeShapesOrRejectionsNamingTheResource() {
    HostileInput.Tally tally = HostileInput.run(TARGET, YarnResourcesFuzzTest::check);
    assertThat(tally.rejected()).as("bad resources tried").isPositive();
    assertThat(tally.accepted()).as("good resources tried").isPositive();
  }

  /** Found by this test: whole GPUs beside MIG instances were dropped without a word. */
  @Test
  void wholeGpusAndMigInstancesTogetherAreRefused() {
    Resource both = Resource.newInstance(1024, 1, Map.of("yarn.io/gpu", 4L, "nvidia.com/mig-1g.10gb", 1L));
    assertThatThrownBy(() -> TRANSLATE.shape(both)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("whole GPUs or for MIG instances (1g.10gb), not both");
  }

  /** Found by this test: counts beyond an int, or two GPU types adding up past one, were an ArithmeticException. */
  @Test
  void gpuCountsBeyondAnIntAreRefusedNamingTheResource() {
    Resource huge = Resource.newInstance(1024, 1, Map.of("yarn.io/gpu", 1L << 31));
    assertThatThrownBy(() -> TRANSLATE.shape(huge)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("resource yarn.io/gpu=2147483648");
    Resource twoTypes = Resource.newInstance(1024, 1,
        Map.of("yarn.io/gpu", (long) Integer.MAX_VALUE, "nvidia.com/gpu", 1L));
    assertThatThrownBy(() -> TRANSLATE.shape(twoTypes)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("more GPUs than can be counted");
  }

  /** A resource type the cluster declares but Spindle does not schedule used to be ignored, and not given. */
  @Test
  void otherResourceTypesAreRefusedRatherThanIgnored() {
    Resource fpga = Resource.newInstance(1024, 1, Map.of("yarn.io/fpga", 2L));
    assertThatThrownBy(() -> TRANSLATE.shape(fpga)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("resource yarn.io/fpga=2 is not one Spindle schedules");
    assertThat(TRANSLATE.shape(Resource.newInstance(1024, 1, Map.of("yarn.io/fpga", 0L))))
        .isEqualTo(Resources.of(1024, 1));
  }

  /** A NodeManager advertising two billion GPUs made the ResourceManager model each one. */
  @Test
  void aNodeWithMoreGpusThanCanBeModelledIsRefused() {
    Resource total = Resource.newInstance(1 << 20, 64, Map.of("yarn.io/gpu", 2_000_000_000L));
    assertThatThrownBy(() -> TRANSLATE.node(NodeId.of("nm1.example:8041"), "/rack1", total))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 1024 GPUs per node");
  }

  @FuzzTest(maxExecutions = 10_000)
  void coverageGuided(byte[] bytes) {
    HostileInput.once(TARGET, YarnResourcesFuzzTest::check, bytes);
  }

  static String check(FuzzInput in) {
    long memory = in.bool() ? in.longIn(0, 1 << 20) : in.interestingLong();
    int vcores = in.bool() ? in.intIn(0, 64) : in.interestingInt();
    Map<String, Long> others = new HashMap<>();
    int n = in.below(4);
    for (int i = 0; i < n; i++) {
      others.put(in.pick(TYPES), in.bool() ? in.longIn(0, 16) : in.interestingLong());
    }
    Resource r = Resource.newInstance(memory, vcores, others);
    if (in.below(4) == 0) {
      return node(r);
    }
    Resources shape;
    try {
      shape = TRANSLATE.shape(r);
    } catch (IllegalArgumentException e) {
      assertThat(e.getMessage()).containsAnyOf("resource ", "memoryMb", "vcores", "MIG", "share of one GPU");
      return HostileInput.rejected(e, IllegalArgumentException.class);
    }
    // Accepted: exactly what was asked, nothing dropped.
    assertThat(shape.memoryMb()).isEqualTo(memory);
    assertThat(shape.vcores()).isEqualTo(vcores);
    long whole = others.getOrDefault("yarn.io/gpu", 0L) + others.getOrDefault("nvidia.com/gpu", 0L);
    long mig = others.getOrDefault("nvidia.com/mig-1g.10gb", 0L) + others.getOrDefault("nvidia.com/mig-3g.40gb", 0L);
    assertThat((long) shape.gpus()).isEqualTo(whole);
    assertThat((long) shape.migInstances()).isEqualTo(mig);
    assertThat((long) shape.gpuMilli()).isEqualTo(others.getOrDefault("nvidia.com/gpu-milli", 0L));
    assertThat(shape.gpuMemoryMb()).isEqualTo(others.getOrDefault("nvidia.com/gpu-mem-mb", 0L));
    assertThat(others.getOrDefault("yarn.io/fpga", 0L)).as("a type Spindle does not schedule").isZero();
    return HostileInput.ACCEPTED;
  }

  private static String node(Resource total) {
    Node node;
    try {
      node = TRANSLATE.node(NodeId.of("nm1.example:8041"), "/rack1", total);
    } catch (IllegalArgumentException e) {
      assertThat(e.getMessage()).containsAnyOf("nm1.example", "node.");
      return HostileInput.rejected(e, IllegalArgumentException.class);
    }
    assertThat(node.gpus()).hasSizeLessThanOrEqualTo(YarnResources.MAX_GPUS_PER_NODE);
    return HostileInput.ACCEPTED;
  }
}
