package io.spindle.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.List;
import java.util.Set;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

class ModelValidationTest {

  private static final GpuModel H100 = GpuModelCatalog.builtIn().require("test", "H100-80GB");
  private static final GpuModel A100 = GpuModelCatalog.builtIn().require("test", "A100-80GB");
  private static final GpuModel T4 = new GpuModel("T4", 16, 0, 0, List.of(), List.of("Tesla T4"));

  private static InvalidInputException invalid(ThrowingCallable call, String field) {
    InvalidInputException e = catchThrowableOfType(InvalidInputException.class, call);
    assertThat(e).as("expected InvalidInputException on %s", field).isNotNull();
    assertThat(e.field()).isEqualTo(field);
    assertThat(e.getMessage()).startsWith(field + "=");
    return e;
  }

  private static Gpu gpu(int index, GpuModel model) {
    return new Gpu(index, model, 0, false);
  }

  // ------------------------------------------------ Resources

  @Test
  void resourcesRejectNegativeMemory() {
    InvalidInputException e = invalid(() -> new Resources(-1, 1, 0, null, null, 0), "memoryMb");
    assertThat(e.value()).isEqualTo("-1");
    assertThat(e.getMessage()).contains("must not be negative");
    invalid(() -> Resources.of(-1024, 1), "memoryMb");
  }

  @Test
  void resourcesRejectNegativeVcores() {
    InvalidInputException e = invalid(() -> Resources.of(1024, -2), "vcores");
    assertThat(e.value()).isEqualTo("-2");
  }

  @Test
  void resourcesRejectNegativeGpus() {
    InvalidInputException e = invalid(() -> Resources.of(1024, 1).withGpus(-1), "gpus");
    assertThat(e.value()).isEqualTo("-1");
  }

  @Test
  void resourcesRejectNegativeMigInstances() {
    invalid(() -> new Resources(0, 0, 0, null, "3g.40gb", -1), "migInstances");
  }

  @Test
  void resourcesRejectWholeGpusAndMigTogether() {
    InvalidInputException e = invalid(() -> new Resources(1024, 1, 2, null, "3g.40gb", 1), "gpus");
    assertThat(e.getMessage()).contains("not both").contains("3g.40gb");
  }

  @Test
  void resourcesRejectMigProfileWithoutInstancesAndInstancesWithoutProfile() {
    invalid(() -> Resources.of(1024, 1).withMig("3g.40gb", 0), "migInstances");
    invalid(() -> new Resources(1024, 1, 0, null, null, 2), "migInstances");
  }

  @Test
  void resourcesRejectGpuModelWithoutGpus() {
    InvalidInputException e = invalid(() -> Resources.of(1024, 1).withGpuModel("H100-80GB"), "gpuModel");
    assertThat(e.value()).isEqualTo("H100-80GB");
  }

  @Test
  void resourcesAcceptValidShapes() {
    Resources whole = Resources.of(4096, 8).withGpus(2).withGpuModel("H100-80GB");
    assertThat(whole.gpus()).isEqualTo(2);
    assertThat(whole.wantsMig()).isFalse();
    assertThat(whole.baseVector()).isEqualTo(new ResourceVector(4096, 8, 2 * 840));
    Resources mig = Resources.of(4096, 8).withMig("3g.40gb", 2);
    assertThat(mig.wantsMig()).isTrue();
    assertThat(mig.gpus()).isZero();
    assertThat(mig.baseVector()).isEqualTo(new ResourceVector(4096, 8, 0));
    // withMig drops whole GPUs, so switching forms is never a mix
    assertThat(whole.withMig("3g.40gb", 1).gpus()).isZero();
    // blank strings mean "none"
    Resources blank = new Resources(1, 1, 0, " ", "", 0);
    assertThat(blank.models().isAny()).isTrue();
    assertThat(blank.migProfile()).isNull();
    assertThat(Resources.NONE.baseVector()).isEqualTo(ResourceVector.ZERO);
  }

  // ------------------------------------------------ Gpu

  @Test
  void gpuRejectsMigOnNonMigModel() {
    GpuModel t4 = GpuModelCatalog.of(List.of(T4)).require("node.gpuModel", "tesla t4");
    assertThat(t4.migCapable()).isFalse();
    InvalidInputException e = invalid(() -> new Gpu(0, t4, 0, true), "gpu.migEnabled");
    assertThat(e.value()).isEqualTo("T4");
    assertThat(e.getMessage()).contains("does not support MIG");
    assertThat(new Gpu(0, t4, 0, false).migEnabled()).isFalse();
    assertThat(new Gpu(0, H100, 0, true).migEnabled()).isTrue();
  }

  @Test
  void gpuRejectsNegativeIndexIslandAndMissingModel() {
    invalid(() -> new Gpu(-1, H100, 0, false), "gpu.index");
    invalid(() -> new Gpu(0, H100, -1, false), "gpu.nvlinkIsland");
    invalid(() -> new Gpu(0, null, 0, false), "gpu.model");
  }

  // ------------------------------------------------ Node

  @Test
  void nodeRejectsDuplicateGpuIndex() {
    InvalidInputException e = invalid(
        () -> new Node(NodeId.of("n1"), "/s1/r1", 1024, 8, List.of(gpu(0, H100), gpu(1, H100), gpu(0, H100))), "node.gpus");
    assertThat(e.value()).isEqualTo("n1/gpu0");
    assertThat(e.getMessage()).contains("duplicate GPU index");
  }

  @Test
  void nodeRejectsMixedGpuModels() {
    InvalidInputException e = invalid(
        () -> new Node(NodeId.of("n1"), "/s1/r1", 1024, 8, List.of(gpu(0, H100), gpu(1, A100))), "node.gpus");
    assertThat(e.value()).isEqualTo("n1");
    assertThat(e.getMessage()).contains("H100-80GB").contains("A100-80GB");
  }

  @Test
  void nodeRejectsBlankId() {
    invalid(() -> new Node(NodeId.of(" "), "/s1/r1", 1024, 8, List.of()), "node.id");
    invalid(() -> new Node(null, "/s1/r1", 1024, 8, List.of()), "node.id");
  }

  @Test
  void nodeRejectsBlankLocation() {
    invalid(() -> new Node(NodeId.of("n1"), "", 1024, 8, List.of()), "node.location");
  }

  @Test
  void nodeRejectsNegativeMemory() {
    InvalidInputException e = invalid(() -> new Node(NodeId.of("n1"), "/s1/r1", -1, 8, List.of()), "node.memoryMb");
    assertThat(e.value()).isEqualTo("-1");
  }

  @Test
  void nodeRejectsNegativeVcores() {
    invalid(() -> new Node(NodeId.of("n1"), "/s1/r1", 1024, -8, List.of()), "node.vcores");
  }

  @Test
  void nodeReportsModelAndCapacity() {
    Node n = new Node(NodeId.of("n1"), "/s1/r1", 2048, 16, List.of(gpu(0, H100), new Gpu(1, H100, 0, true)));
    assertThat(n.gpuModel()).isSameAs(H100);
    assertThat(n.capacity()).isEqualTo(new ResourceVector(2048, 16, 2 * 840));
    Node cpu = new Node(NodeId.of("c1"), "/s1/r1", 2048, 16, List.of());
    assertThat(cpu.gpuModel()).isNull();
    assertThat(cpu.capacity()).isEqualTo(new ResourceVector(2048, 16, 0));
  }

  // ------------------------------------------------ Topology

  @Test
  void topologyRejectsLocationWithWrongSegmentCount() {
    InvalidInputException e = invalid(
        () -> Topology.builder("spine", "rack").location("/s1/r1").location("/s1").build(), "topology.location");
    assertThat(e.value()).isEqualTo("/s1");
    assertThat(e.getMessage()).contains("1 segment").contains("need 2");
    invalid(() -> Topology.builder("rack").location("/s1/r1").build(), "topology.location");
  }

  @Test
  void topologyRejectsBadPaths() {
    InvalidInputException rack1 = invalid(() -> Topology.builder("rack").location("rack1").build(),
        "topology.location");
    assertThat(rack1.value()).isEqualTo("rack1");
    InvalidInputException empty = invalid(() -> Topology.builder("a", "b").location("/a//b").build(),
        "topology.location");
    assertThat(empty.value()).isEqualTo("/a//b");
    assertThat(empty.getMessage()).contains("empty segment");
    invalid(() -> Topology.builder("rack").location("/").build(), "topology.location");
    invalid(() -> Topology.builder("rack").location("/r1/").build(), "topology.location");
    invalid(() -> Topology.ancestry("rack1"), "topology.location");
  }

  @Test
  void topologyRejectsDuplicateLevelNames() {
    InvalidInputException e = invalid(() -> Topology.builder("rack", "rack").location("/a/b").build(),
        "topology.levels");
    assertThat(e.value()).isEqualTo("rack");
    assertThat(e.getMessage()).contains("duplicate level");
  }

  @Test
  void topologyRejectsNoOrBlankLevels() {
    invalid(() -> new Topology(List.of(), Set.of()), "topology.levels");
    invalid(() -> Topology.builder("spine", " ").build(), "topology.levels");
  }

  @Test
  void requireLocationRejectsNodeOutsideTheTopology() {
    Topology t = Topology.builder("spine", "rack").location("/s1/r1").location("/s1/r2").build();
    Node inside = new Node(NodeId.of("n1"), "/s1/r1", 1024, 8, List.of());
    t.requireLocation(inside);
    Node outside = new Node(NodeId.of("n9"), "/s2/r1", 1024, 8, List.of());
    InvalidInputException e = invalid(() -> t.requireLocation(outside), "node.location");
    assertThat(e.value()).contains("n9").contains("/s2/r1");
    assertThat(e.getMessage()).contains("outside the topology");
  }

  @Test
  void ancestryListsPathsFromTheTop() {
    assertThat(Topology.ancestry("/s1/r3")).containsExactly("/s1", "/s1/r3");
    assertThat(Topology.ancestry("/default-rack")).containsExactly("/default-rack");
  }

  @Test
  void singleRackHoldsTheDefaultRack() {
    Topology t = Topology.singleRack();
    assertThat(t.levels()).containsExactly("rack");
    assertThat(t.contains(Topology.DEFAULT_RACK)).isTrue();
    assertThat(t.contains("/s1/r1")).isFalse();
    t.requireLocation(new Node(NodeId.of("n1"), Topology.DEFAULT_RACK, 1, 1, List.of()));
  }
}
