package io.spindle.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.io.StringReader;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GpuModelCatalogTest {

  private static final GpuModelCatalog CATALOG = GpuModelCatalog.builtIn();

  private static GpuModel model(String name) {
    return CATALOG.find(name).orElseThrow(() -> new AssertionError("no model " + name));
  }

  private static MigProfile profile(String model, String profile) {
    return model(model).profile(profile).orElseThrow(() -> new AssertionError("no profile " + profile));
  }

  private static GpuModelCatalog parse(String text) throws IOException {
    return GpuModelCatalog.parse(new StringReader(text));
  }

  @Test
  void builtInCatalogHasTheShippedModels() {
    assertThat(CATALOG.models()).extracting(GpuModel::name).containsExactlyInAnyOrder(
        "A100-40GB", "A100-80GB", "H100-80GB", "H100-94GB", "H200-141GB", "B200-180GB", "A30-24GB",
        "L40S-48GB", "L40-48GB", "L4-24GB", "A40-48GB", "A10-24GB", "A10G-24GB", "T4-16GB", "V100-16GB", "V100-32GB");
    assertThat(CATALOG.models()).filteredOn(GpuModel::migCapable).extracting(GpuModel::name).containsExactlyInAnyOrder(
        "A100-40GB", "A100-80GB", "H100-80GB", "H100-94GB", "H200-141GB", "B200-180GB", "A30-24GB");
    // Models without MIG are there for whole GPUs and shares; their memory is what a share's memory is measured by.
    assertThat(model("T4-16GB").memoryMb()).isEqualTo(16_384);
    assertThat(GpuModelCatalog.builtIn()).isSameAs(CATALOG);
  }

  @Test
  void modelsHaveTheirMemoryAndSliceCounts() {
    Map<String, Integer> memory = Map.of("A100-40GB", 40, "A100-80GB", 80, "H100-80GB", 80, "H100-94GB", 94,
        "H200-141GB", 141, "B200-180GB", 180, "A30-24GB", 24);
    memory.forEach((name, gb) -> assertThat(model(name).memoryGb()).as(name).isEqualTo(gb));
    for (String name : List.of("A100-40GB", "A100-80GB", "H100-80GB", "H100-94GB", "H200-141GB", "B200-180GB")) {
      assertThat(model(name).memorySlices()).as(name).isEqualTo(8);
      assertThat(model(name).computeSlices()).as(name).isEqualTo(7);
    }
    assertThat(model("A30-24GB").memorySlices()).isEqualTo(4);
    assertThat(model("A30-24GB").computeSlices()).isEqualTo(4);
  }

  /** Profile names follow mig-geometry.md, plus the one 1g media-extension variant each product offers. */
  @Test
  void profileNamesFollowTheProductMemory() {
    assertThat(model("A100-40GB").profiles()).extracting(MigProfile::name).containsExactlyInAnyOrder(
        "1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb");
    assertThat(model("A100-80GB").profiles()).extracting(MigProfile::name).containsExactlyInAnyOrder(
        "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb");
    assertThat(model("H100-80GB").profiles()).extracting(MigProfile::name).containsExactlyInAnyOrder(
        "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb");
    assertThat(model("H100-94GB").profiles()).extracting(MigProfile::name).containsExactlyInAnyOrder(
        "1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb");
    assertThat(model("H200-141GB").profiles()).extracting(MigProfile::name).containsExactlyInAnyOrder(
        "1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb");
    assertThat(model("B200-180GB").profiles()).extracting(MigProfile::name).containsExactlyInAnyOrder(
        "1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb");
    assertThat(model("A30-24GB").profiles()).extracting(MigProfile::name).containsExactlyInAnyOrder(
        "1g.6gb", "1g.6gb+me", "2g.12gb", "2g.12gb+me", "4g.24gb");
  }

  /** The 8-slice geometry table of mig-geometry.md, checked on every 8-slice product. */
  @Test
  void eightSliceGeometryMatchesNvmlPlacements() {
    for (String name : List.of("A100-40GB", "A100-80GB", "H100-80GB", "H100-94GB", "H200-141GB", "B200-180GB")) {
      List<MigProfile> p = model(name).profiles();
      assertThat(p).as(name).hasSize(7);
      // name-independent description: (nvml id, compute, memory, starts, max instances, media extension)
      assertThat(p).as(name).extracting(MigProfile::nvmlProfileId, MigProfile::computeSlices,
              MigProfile::memorySlices, MigProfile::legalStarts, MigProfile::maxInstances, MigProfile::mediaExtension)
          .containsExactlyInAnyOrder(
              org.assertj.core.groups.Tuple.tuple(19, 1, 1, List.of(0, 1, 2, 3, 4, 5, 6), 7, false),
              org.assertj.core.groups.Tuple.tuple(20, 1, 1, List.of(0, 1, 2, 3, 4, 5, 6), 1, true),
              org.assertj.core.groups.Tuple.tuple(15, 1, 2, List.of(0, 2, 4, 6), 4, false),
              org.assertj.core.groups.Tuple.tuple(14, 2, 2, List.of(0, 2, 4), 3, false),
              org.assertj.core.groups.Tuple.tuple(9, 3, 4, List.of(0, 4), 2, false),
              org.assertj.core.groups.Tuple.tuple(5, 4, 4, List.of(0), 1, false),
              org.assertj.core.groups.Tuple.tuple(0, 7, 8, List.of(0), 1, false));
    }
    MigProfile h3g = profile("H100-80GB", "3g.40gb");
    assertThat(h3g.nvmlProfileId()).isEqualTo(9);
    assertThat(profile("H100-80GB", "1g.20gb").nvmlProfileId()).isEqualTo(15);
    assertThat(profile("H200-141GB", "7g.141gb").nvmlProfileId()).isEqualTo(0);
  }

  @Test
  void a30GeometryMatchesTable() {
    MigProfile g1 = profile("A30-24GB", "1g.6gb");
    assertThat(List.of(g1.computeSlices(), g1.memorySlices(), g1.maxInstances())).containsExactly(1, 1, 4);
    assertThat(g1.legalStarts()).containsExactly(0, 1, 2, 3);
    MigProfile g1me = profile("A30-24GB", "1g.6gb+me");
    assertThat(g1me.mediaExtension()).isTrue();
    assertThat(g1me.maxInstances()).isEqualTo(1);
    assertThat(g1me.legalStarts()).containsExactly(0, 1, 2, 3);
    MigProfile g2 = profile("A30-24GB", "2g.12gb");
    assertThat(List.of(g2.computeSlices(), g2.memorySlices(), g2.maxInstances())).containsExactly(2, 2, 2);
    assertThat(g2.legalStarts()).containsExactly(0, 2);
    MigProfile g2me = profile("A30-24GB", "2g.12gb+me");
    assertThat(g2me.mediaExtension()).isTrue();
    assertThat(g2me.maxInstances()).isEqualTo(1);
    MigProfile g4 = profile("A30-24GB", "4g.24gb");
    assertThat(List.of(g4.computeSlices(), g4.memorySlices(), g4.maxInstances())).containsExactly(4, 4, 1);
    assertThat(g4.legalStarts()).containsExactly(0);
  }

  @Test
  void findsModelsByNameAndAliasIgnoringCase() {
    GpuModel h100 = model("H100-80GB");
    assertThat(CATALOG.find("nvidia h100 80gb hbm3")).contains(h100);
    assertThat(CATALOG.find("NVIDIA H100 80GB HBM3")).contains(h100);
    assertThat(CATALOG.find("  NVIDIA H100 80GB HBM3  ")).contains(h100);
    assertThat(CATALOG.find("h100-80gb")).contains(h100);
    assertThat(CATALOG.find("H100-SXM5-80GB")).contains(h100);
    assertThat(CATALOG.find("NVIDIA H100 NVL")).contains(model("H100-94GB"));
    assertThat(CATALOG.find("nvidia a100-sxm4-40gb")).contains(model("A100-40GB"));
    assertThat(CATALOG.find("NVIDIA A100 80GB PCIe")).contains(model("A100-80GB"));
    assertThat(CATALOG.find("nvidia h200")).contains(model("H200-141GB"));
    assertThat(CATALOG.find("NVIDIA B200")).contains(model("B200-180GB"));
    assertThat(CATALOG.find("nvidia a30")).contains(model("A30-24GB"));
    assertThat(CATALOG.find("Tesla T4")).contains(model("T4-16GB"));
    assertThat(CATALOG.find("Tesla K80")).isEmpty();
    assertThat(CATALOG.find(null)).isEmpty();
    assertThat(CATALOG.require("node.gpuModel", "nvidia h100 80gb hbm3")).isSameAs(h100);
  }

  @Test
  void chargesSlicesByTheLargerOfComputeAndMemoryShareOnH100() {
    Map<String, Long> expected = Map.of("1g.10gb", 120L, "1g.10gb+me", 120L, "1g.20gb", 210L, "2g.20gb", 240L,
        "3g.40gb", 420L, "4g.40gb", 480L, "7g.80gb", 840L);
    expected.forEach((p, units) -> assertThat(profile("H100-80GB", p).gpuUnits()).as(p).isEqualTo(units));
    // 3g.40gb = max(3/7, 4/8) of a GPU
    assertThat(profile("H100-80GB", "3g.40gb").gpuUnits())
        .isEqualTo((long) (Math.max(3.0 / 7, 4.0 / 8) * ResourceVector.GPU_UNITS));
    assertThat(profile("H100-80GB", "7g.80gb").gpuUnits()).isEqualTo(ResourceVector.GPU_UNITS);
  }

  @Test
  void chargesAreTheSameForEveryEightSliceProduct() {
    for (GpuModel m : CATALOG.models()) {
      if (m.memorySlices() != 8) {
        continue;
      }
      assertThat(m.profiles()).as(m.name()).extracting(MigProfile::gpuUnits)
          .containsExactlyInAnyOrder(120L, 120L, 210L, 240L, 420L, 480L, 840L);
    }
  }

  @Test
  void chargesSlicesOnA30() {
    assertThat(profile("A30-24GB", "1g.6gb").gpuUnits()).isEqualTo(210);
    assertThat(profile("A30-24GB", "1g.6gb+me").gpuUnits()).isEqualTo(210);
    assertThat(profile("A30-24GB", "2g.12gb").gpuUnits()).isEqualTo(420);
    assertThat(profile("A30-24GB", "2g.12gb+me").gpuUnits()).isEqualTo(420);
    assertThat(profile("A30-24GB", "4g.24gb").gpuUnits()).isEqualTo(840);
  }

  @Test
  void chargeUnitsIsMaxOfComputeAndMemoryShares() {
    assertThat(GpuModel.chargeUnits(3, 4, 7, 8)).isEqualTo(420);
    assertThat(GpuModel.chargeUnits(4, 4, 7, 8)).isEqualTo(480);
    assertThat(GpuModel.chargeUnits(1, 2, 7, 8)).isEqualTo(210);
    assertThat(GpuModel.chargeUnits(2, 2, 4, 4)).isEqualTo(420);
  }

  @Test
  void requireUnknownModelNamesFieldAndValue() {
    InvalidInputException e = catchThrowableOfType(InvalidInputException.class,
        () -> CATALOG.require("node.gpuModel", "Tesla K80"));
    assertThat(e).isNotNull();
    assertThat(e.field()).isEqualTo("node.gpuModel");
    assertThat(e.value()).isEqualTo("Tesla K80");
    assertThat(e.getMessage()).contains("node.gpuModel=Tesla K80").contains("unknown GPU model")
        .contains("H100-80GB");
  }

  @Test
  void requireProfileAcceptsKnownAndRejectsUnknownProfiles() {
    CATALOG.requireProfile("resource", "3g.40gb");
    CATALOG.requireProfile("resource", "1g.6gb+me");
    assertThat(CATALOG.modelsOffering("3g.40gb")).extracting(GpuModel::name)
        .containsExactly("A100-80GB", "H100-80GB");
    assertThat(CATALOG.modelsOffering("4g.24gb")).extracting(GpuModel::name).containsExactly("A30-24GB");
    assertThat(CATALOG.modelsOffering("9g.99gb")).isEmpty();

    InvalidInputException e = catchThrowableOfType(InvalidInputException.class,
        () -> CATALOG.requireProfile("container.migProfile", "9g.99gb"));
    assertThat(e).isNotNull();
    assertThat(e.field()).isEqualTo("container.migProfile");
    assertThat(e.value()).isEqualTo("9g.99gb");
    assertThat(e.getMessage()).contains("unknown MIG profile");
  }

  @Test
  void modelProfileLookups() {
    GpuModel h100 = model("H100-80GB");
    assertThat(h100.profile("3g.40gb")).isPresent();
    assertThat(h100.profile("3g.20gb")).isEmpty();
    assertThat(h100.profilesByName()).hasSize(7).containsKey("1g.10gb+me");
    assertThat(profile("H100-80GB", "3g.40gb").resourceName()).isEqualTo("nvidia.com/mig-3g.40gb");
  }

  @Test
  void ofBuildsACatalogAndRejectsDuplicateModels() {
    GpuModel t4 = new GpuModel("T4", 16, 0, 0, List.of(), List.of("Tesla T4"));
    GpuModelCatalog c = GpuModelCatalog.of(List.of(t4));
    assertThat(c.models()).containsExactly(t4);
    assertThat(c.find("tesla t4")).contains(t4);
    assertThat(t4.migCapable()).isFalse();
    assertThatThrownBy(() -> GpuModelCatalog.of(List.of(t4, t4)))
        .isInstanceOfSatisfying(InvalidInputException.class, e -> {
          assertThat(e.field()).isEqualTo("model");
          assertThat(e.value()).isEqualTo("T4");
        })
        .hasMessageContaining("duplicate");
  }

  // ---------------------------------------------------------------- the text format

  private static final String SMALL = String.join("\n",
      "# comment",
      "geometry two 2 2",
      "slot two 1 1 1 0,1 2",
      "slot two 2 2 2 0 1",
      "model X1 two 10 1g.5gb 2g.10gb aliases=Vendor X1, vendor x-one",
      "");

  @Test
  void parsesTheTextFormat() throws IOException {
    GpuModelCatalog c = parse(SMALL);
    GpuModel x1 = c.require("m", "vendor x-one");
    assertThat(x1.name()).isEqualTo("X1");
    assertThat(x1.memoryGb()).isEqualTo(10);
    assertThat(x1.aliases()).containsExactly("Vendor X1", "vendor x-one");
    MigProfile one = x1.profile("1g.5gb").orElseThrow();
    assertThat(one.nvmlProfileId()).isEqualTo(1);
    assertThat(one.legalStarts()).containsExactly(0, 1);
    assertThat(one.maxInstances()).isEqualTo(2);
    assertThat(one.gpuUnits()).isEqualTo(420);
    assertThat(x1.profile("2g.10gb").orElseThrow().gpuUnits()).isEqualTo(840);
  }

  private static void rejectsAtLine(String text, int line, String... fragments) {
    InvalidInputException e = catchThrowableOfType(InvalidInputException.class, () -> parse(text));
    assertThat(e).as("expected rejection of:%n%s", text).isNotNull();
    assertThat(e.field()).isEqualTo("gpu-models line " + line);
    for (String f : fragments) {
      assertThat(e.getMessage()).contains(f);
    }
  }

  @Test
  void parseRejectsModelWithUnknownGeometryNamingTheLine() {
    rejectsAtLine(SMALL + "model X2 nosuch 10 a b\n", 6, "unknown geometry", "nosuch");
  }

  @Test
  void parseRejectsSlotWithUnknownGeometryNamingTheLine() {
    rejectsAtLine("geometry two 2 2\n\nslot three 1 1 1 0 1\n", 3, "unknown geometry", "three");
  }

  @Test
  void parseRejectsWrongNumberOfProfileNamesNamingTheLine() {
    rejectsAtLine(SMALL + "model X2 two 10 1g.5gb\n", 6, "1 profile names for 2 slots");
  }

  @Test
  void parseRejectsUnknownRecordTypeNamingTheLine() {
    rejectsAtLine("# header\ngemoetry two 2 2\n", 2, "unknown record type", "gemoetry");
  }

  @Test
  void parseRejectsNonNumberNamingTheLine() {
    rejectsAtLine("geometry two two 2\n", 1, "malformed record");
    rejectsAtLine(SMALL.replace("model X1 two 10", "model X1 two ten"), 5, "malformed record");
  }

  @Test
  void parseRejectsTruncatedRecordNamingTheLine() {
    rejectsAtLine("# a\n# b\ngeometry two 2\n", 3, "malformed record", "geometry two 2");
  }

  @Test
  void parseRejectsMalformedSlotNamingTheSlotLine() {
    rejectsAtLine(SMALL.replace("slot two 2 2 2 0 1", "slot two 2 2 x 0 1"), 4, "malformed record");
  }
}
