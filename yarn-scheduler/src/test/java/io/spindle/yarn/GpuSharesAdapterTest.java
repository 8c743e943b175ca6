package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuIsolation;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuModelSet;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
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
 * Shares of one GPU through the YARN adapter: {@code nvidia.com/gpu-milli} and {@code nvidia.com/gpu-mem-mb} asks,
 * the {@code spindle.gpu.models} and {@code spindle.gpu.isolation} tags, and nodes that advertise shared GPUs
 * without an agent's report.
 */
class GpuSharesAdapterTest {

  private static final GpuModelCatalog CATALOG = GpuModelCatalog.builtIn();
  private static final YarnResources TRANSLATE = new YarnResources(CATALOG, CATALOG.require("model", "H100-80GB"), 8);
  private static final NodeId NODE = NodeId.of("nm1.example:8041");

  @BeforeAll
  static void declareTypes() {
    Configuration c = new YarnConfiguration();
    c.set(YarnConfiguration.RESOURCE_TYPES, "yarn.io/gpu,nvidia.com/gpu,nvidia.com/gpu-milli,nvidia.com/gpu-mem-mb,"
        + "nvidia.com/mig-1g.10gb,nvidia.com/mig-2g.20gb");
    ResourceUtils.resetResourceTypes(c);
  }

  @AfterAll
  static void restoreTypes() {
    ResourceUtils.resetResourceTypes(new YarnConfiguration());
  }

  private static Resource ask(Map<String, Long> gpu) {
    return Resource.newInstance(1024, 1, gpu);
  }

  private static SpindleTags tags(String... t) {
    return SpindleTags.parse(List.of(t));
  }

  @Test
  void aQuarterGpuAskIsAShareOfOneGpu() {
    Resources s = TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-milli", 250L)));
    assertThat(s.wantsShare()).isTrue();
    assertThat(s.gpuMilli()).isEqualTo(250);
    assertThat(s.gpus()).isZero();
    assertThat(s.isolation()).isEqualTo(GpuIsolation.ANY);
    Resources memory = TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-milli", 100L, "nvidia.com/gpu-mem-mb", 8192L)));
    assertThat(memory.gpuMemoryMb()).isEqualTo(8192);
    assertThat(TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-mem-mb", 4096L))).gpuMilli()).isZero();
  }

  @Test
  void moreThanOneGpuOrAShareBesideWholeGpusOrMigIsRefusedNamingTheResource() {
    assertThatThrownBy(() -> TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-milli", 1500L))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("resource nvidia.com/gpu-milli=1500 is more than one GPU");
    assertThatThrownBy(() -> TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-milli", 250L, "yarn.io/gpu", 2L))))
        .hasMessageContaining("nvidia.com/gpu-milli=250").hasMessageContaining("2 whole GPU(s), not both");
    assertThatThrownBy(() -> TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-mem-mb", 1024L,
        "nvidia.com/mig-1g.10gb", 1L)))).hasMessageContaining("nvidia.com/gpu-mem-mb=1024")
        .hasMessageContaining("MIG instance(s) of 1g.10gb, not both");
  }

  @Test
  void modelTagsApplyToWholeGpusMigAndSharesInTheCatalogsSpelling() {
    // YARN lower-cases tags; the catalog's names and nvidia-smi's both count.
    SpindleTags t = tags("spindle.gpu.models=a100-80gb|NVIDIA H100 80GB HBM3");
    GpuModelSet both = GpuModelSet.of("A100-80GB", "H100-80GB");
    assertThat(TRANSLATE.shape(ask(Map.of("nvidia.com/gpu", 2L)), t).models()).isEqualTo(both);
    assertThat(TRANSLATE.shape(ask(Map.of("nvidia.com/mig-1g.10gb", 1L)), t).models()).isEqualTo(both);
    assertThat(TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-milli", 250L)), t).models()).isEqualTo(both);
    // The AM asks no GPU: a model means nothing to it.
    assertThat(TRANSLATE.shape(Resource.newInstance(1024, 1), t)).isEqualTo(Resources.of(1024, 1));
    // An unknown name stays as written, for the engine's admission to refuse with the known models.
    assertThat(TRANSLATE.shape(ask(Map.of("nvidia.com/gpu", 1L)), tags("spindle.gpu.models=t4|h100-80gb"))
        .models().names()).containsExactly("H100-80GB", "t4");
  }

  @Test
  void mpsIsolationAsksForAnMpsGpu() {
    Resources s = TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-milli", 250L)), tags("spindle.gpu.isolation=MPS"));
    assertThat(s.isolation()).isEqualTo(GpuIsolation.MPS);
    // Whole GPUs are not shared: the isolation leaves them alone.
    assertThat(TRANSLATE.shape(ask(Map.of("nvidia.com/gpu", 1L)), tags("spindle.gpu.isolation=mps")).gpus())
        .isEqualTo(1);
  }

  @Test
  void migIsolationTurnsTheShareIntoTheSmallestCoveringProfile() {
    SpindleTags h100 = tags("spindle.gpu.isolation=mig", "spindle.gpu.models=H100-80GB");
    // A seventh of the compute is 1g; 10 GB of 80 GB is one memory slice.
    Resources small = TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-milli", 100L)), h100);
    assertThat(small.wantsShare()).isFalse();
    assertThat(small.migProfile()).isEqualTo("1g.10gb");
    assertThat(small.migInstances()).isEqualTo(1);
    // A quarter of the compute needs two of seven compute slices.
    assertThat(TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-milli", 250L)), h100).migProfile()).isEqualTo("2g.20gb");
    // Little compute but 15 GB: the 1g profile with two memory slices.
    assertThat(TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-milli", 100L, "nvidia.com/gpu-mem-mb", 15_000L)), h100)
        .migProfile()).isEqualTo("1g.20gb");
    assertThat(TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-milli", 1000L)), h100).migProfile()).isEqualTo("7g.80gb");
    // Two models that name the instance alike.
    assertThat(TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-milli", 100L)),
        tags("spindle.gpu.isolation=mig", "spindle.gpu.models=H100-80GB|A100-80GB")).migProfile())
        .isEqualTo("1g.10gb");
  }

  @Test
  void migIsolationOverModelsThatNameTheInstanceDifferentlyAsksToNameAModel() {
    assertThatThrownBy(() -> TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-milli", 100L)),
        tags("spindle.gpu.isolation=mig")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("spindle.gpu.isolation=mig")
        .hasMessageContaining("1g.5gb on A100-40GB")
        .hasMessageContaining("1g.10gb on A100-80GB|H100-80GB")
        .hasMessageContaining("name one model with spindle.gpu.models");
    assertThatThrownBy(() -> TRANSLATE.shape(ask(Map.of("nvidia.com/gpu-mem-mb", 50_000L)),
        tags("spindle.gpu.isolation=mig", "spindle.gpu.models=a30-24gb")))
        .hasMessageContaining("no MIG profile of A30-24GB covers nvidia.com/gpu-mem-mb=50000");
  }

  @Test
  void aMigShareCarriesTheInstancesResourceToItsNode() {
    Resource asked = ask(Map.of("nvidia.com/gpu-milli", 250L));
    Resource carried = GpuAskShapes.containerResource(asked, Resources.of(1024, 1).withMig("2g.20gb", 1), null);
    assertThat(carried.getResourceValue("nvidia.com/mig-2g.20gb")).isEqualTo(1);
    assertThat(carried.getResourceValue("nvidia.com/gpu-milli")).isZero();
    assertThat(carried.getMemorySize()).isEqualTo(1024);
    // A profile the cluster does not declare: the ask as it was.
    assertThat(GpuAskShapes.containerResource(asked, Resources.of(1024, 1).withMig("7g.80gb", 1), null)).isSameAs(asked);
    Resources share = Resources.of(1024, 1).withShare(250, 0, GpuIsolation.ANY);
    assertThat(GpuAskShapes.containerResource(asked, share, null)).isSameAs(asked);
  }

  /** The NodeManager's shared-GPU plugin serves nvidia.com/gpu-milli only: a memory share carries the compute it holds. */
  @Test
  void aMemoryOnlyShareCarriesTheComputeItHoldsToItsNode() {
    Resource asked = ask(Map.of("nvidia.com/gpu-mem-mb", 12_000L));
    Resources share = Resources.of(1024, 1).withShare(0, 12_000, GpuIsolation.ANY);
    io.spindle.core.model.GpuModel l40s = io.spindle.core.model.GpuModelCatalog.builtIn().require("model", "L40S-48GB");
    Resource carried = GpuAskShapes.containerResource(asked, share, l40s);
    assertThat(carried.getResourceValue("nvidia.com/gpu-milli")).isEqualTo(share.shareMilli(l40s)).isEqualTo(245);
    assertThat(carried.getResourceValue("nvidia.com/gpu-mem-mb")).isEqualTo(12_000);
    assertThat(carried.getMemorySize()).isEqualTo(1024);
    assertThat(asked.getResourceValue("nvidia.com/gpu-milli")).as("the ask is not changed").isZero();
    Resource withCompute = ask(Map.of("nvidia.com/gpu-milli", 100L, "nvidia.com/gpu-mem-mb", 12_000L));
    assertThat(GpuAskShapes.containerResource(withCompute, Resources.of(1024, 1).withShare(100, 12_000,
        GpuIsolation.ANY), l40s)).isSameAs(withCompute);
  }

  @Test
  void badGpuTagsAreRefusedWithTheTag() {
    assertThatThrownBy(() -> tags("spindle.gpu.isolation=hardware")).hasMessageContaining("spindle.gpu.isolation=hardware")
        .hasMessageContaining("=mig");
    assertThatThrownBy(() -> tags("spindle.gpu.models=a100-80gb||h100-80gb")).hasMessageContaining("empty model name");
    assertThatThrownBy(() -> tags("spindle.gpu.models=")).hasMessageContaining("names no GPU model");
    assertThat(tags("nightly").gpu()).isEqualTo(GpuTags.NONE);
  }

  @Test
  void aNodeAdvertisingMilliBesideItsGpusHasThatManyTimeSlicedGpus() {
    Resource total = Resource.newInstance(65_536, 32, Map.of("yarn.io/gpu", 4L, "nvidia.com/gpu-milli", 2000L));
    Node node = TRANSLATE.node(NODE, "/rack1", total);
    assertThat(node.gpus()).hasSize(4);
    assertThat(node.gpus()).extracting(Gpu::sharing).containsExactly(GpuSharing.TIME_SLICE, GpuSharing.TIME_SLICE,
        GpuSharing.EXCLUSIVE, GpuSharing.EXCLUSIVE);
    // Milli alone: every GPU it speaks of is shared.
    Node onlyShares = TRANSLATE.node(NODE, "/rack1", Resource.newInstance(65_536, 32,
        Map.of("nvidia.com/gpu-milli", 3000L)));
    assertThat(onlyShares.gpus()).hasSize(3).allMatch(Gpu::sharesBelowWhole);
    YarnResources mps = new YarnResources(CATALOG, CATALOG.require("model", "H100-80GB"), 8, GpuSharing.MPS);
    assertThat(mps.node(NODE, "/rack1", total).gpus().get(0).sharing()).isEqualTo(GpuSharing.MPS);
  }

  @Test
  void aNodeAdvertisingMilliThatAreNotWholeGpusOrMoreThanItsGpusIsRefused() {
    assertThatThrownBy(() -> TRANSLATE.node(NODE, "/rack1", Resource.newInstance(65_536, 32,
        Map.of("nvidia.com/gpu-milli", 2500L)))).hasMessageContaining("nvidia.com/gpu-milli=2500")
        .hasMessageContaining("1000 per shared GPU");
    assertThatThrownBy(() -> TRANSLATE.node(NODE, "/rack1", Resource.newInstance(65_536, 32,
        Map.of("yarn.io/gpu", 2L, "nvidia.com/gpu-milli", 4000L)))).hasMessageContaining("but only 2 GPUs");
    assertThatThrownBy(() -> TRANSLATE.node(NODE, "/rack1", Resource.newInstance(65_536, 32,
        Map.of("nvidia.com/gpu-milli", 2_000_000_000L)))).hasMessageContaining("at most 1024 GPUs per node");
    assertThatThrownBy(() -> new YarnResources(CATALOG, CATALOG.require("model", "H100-80GB"), 8,
        GpuSharing.EXCLUSIVE)).hasMessageContaining("yarn.scheduler.spindle.node.gpu-sharing=exclusive");
  }
}
