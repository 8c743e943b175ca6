package io.spindle.nm;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GpuDiscoveryTest {

  private static final GpuModelCatalog CATALOG = GpuModelCatalog.builtIn();
  private static final GpuModel A100 = CATALOG.find("A100-40GB").orElseThrow();

  @TempDir
  Path temp;

  @Test
  void mixedMigA100() {
    GpuInventory inventory = discover(FakeNvidiaSmi.of("a100-mig", temp).smi());

    assertThat(inventory.gpus()).hasSize(2);
    DiscoveredGpu mig = inventory.gpu(0).orElseThrow();
    assertThat(mig.model()).isEqualTo(A100);
    assertThat(mig.migEnabled()).isTrue();
    assertThat(mig.nvlinkIsland()).isZero();
    assertThat(mig.layout()).isEqualTo(MigLayout.of(A100, List.of(
        at("2g.10gb", 0), at("1g.5gb", 2), at("1g.5gb", 3), at("3g.20gb", 4))));
    assertThat(mig.instanceAt(4).orElseThrow().uuid()).isEqualTo("MIG-4f1e6a7b-2c3d-5e8f-9a0b-1c2d3e4f5a60");
    assertThat(mig.instanceAt(4).orElseThrow().gpuInstanceId()).isEqualTo(2);
    assertThat(mig.instanceAt(0).orElseThrow().uuid()).isEqualTo("MIG-8b9c0d1e-3f4a-5b6c-7d8e-9f0a1b2c3d61");
    assertThat(mig.migInstances()).allSatisfy(i -> assertThat(i.busy()).isFalse());
    assertThat(mig.busy()).isFalse();
    DiscoveredGpu whole = inventory.gpu(1).orElseThrow();
    assertThat(whole.migEnabled()).isFalse();
    assertThat(whole.migInstances()).isEmpty();
    assertThat(whole.toGpu().nvlinkIsland()).isZero();
    assertThat(inventory.wholeGpus()).containsExactly(whole);
  }

  @Test
  void processesMarkTheirInstanceAndGpuBusy() {
    GpuInventory inventory = discover(FakeNvidiaSmi.of("a100-mig", temp).serve("query.xml", "query-busy.xml").smi());

    DiscoveredGpu mig = inventory.gpu(0).orElseThrow();
    assertThat(mig.busy()).isTrue();
    assertThat(mig.instanceAt(4).orElseThrow().busy()).isTrue();
    assertThat(mig.instanceAt(0).orElseThrow().busy()).isFalse();
  }

  @Test
  void eightH100sOnNvSwitch() {
    GpuInventory inventory = discover(FakeNvidiaSmi.of("h100-8x", temp).smi());

    assertThat(inventory.gpus()).hasSize(8);
    assertThat(inventory.gpus()).allSatisfy(g -> {
      assertThat(g.model().name()).isEqualTo("H100-80GB");
      assertThat(g.migEnabled()).isFalse();
      assertThat(g.nvlinkIsland()).isZero();
    });
    assertThat(inventory.gpus()).extracting(DiscoveredGpu::minorNumber).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
  }

  @Test
  void memoryAndConfiguredSharingModeOfEveryGpu() {
    GpuSharingSettings sharing = GpuSharingSettings.parse("node", "time-slice", "per-gpu", "3:mps, 5:exclusive");
    GpuInventory inventory = new GpuDiscovery(FakeNvidiaSmi.of("h100-8x", temp).smi(), CATALOG, sharing).discover();

    assertThat(inventory.gpus()).extracting(DiscoveredGpu::memoryMb).containsOnly(81_559L);
    assertThat(inventory.gpus()).extracting(DiscoveredGpu::sharing).containsExactly(GpuSharing.TIME_SLICE,
        GpuSharing.TIME_SLICE, GpuSharing.TIME_SLICE, GpuSharing.MPS, GpuSharing.TIME_SLICE, GpuSharing.EXCLUSIVE,
        GpuSharing.TIME_SLICE, GpuSharing.TIME_SLICE);
    Gpu mps = inventory.gpu(3).orElseThrow().toGpu();
    assertThat(mps.sharing()).isEqualTo(GpuSharing.MPS);
    assertThat(mps.sharesBelowWhole()).isTrue();
    assertThat(inventory.gpu(5).orElseThrow().toGpu().sharesBelowWhole()).isFalse();
    // The catalog's memory is what the scheduler counts a share's amount against; nvidia-smi's is the real one.
    assertThat(inventory.gpu(3).orElseThrow().shareableMemoryMb()).isEqualTo(80L * 1024);
  }

  @Test
  void aMigGpuIsNeverSharedWhateverIsConfigured() {
    GpuSharingSettings sharing = GpuSharingSettings.parse("node", "mps", "per-gpu", "0:time-slice");
    GpuInventory inventory = new GpuDiscovery(FakeNvidiaSmi.of("a100-mig", temp).smi(), CATALOG, sharing).discover();

    DiscoveredGpu mig = inventory.gpu(0).orElseThrow();
    assertThat(mig.migEnabled()).isTrue();
    assertThat(mig.sharing()).isEqualTo(GpuSharing.EXCLUSIVE);
    assertThat(mig.shared()).isFalse();
    assertThat(mig.memoryMb()).isEqualTo(40_960);
    assertThat(inventory.gpu(1).orElseThrow().sharing()).isEqualTo(GpuSharing.MPS);
  }

  @Test
  void memoryThatNvidiaSmiDoesNotPrintIsUnknownNotAnError() {
    String xml = FakeNvidiaSmi.fixture("h100-8x/query.xml").replaceFirst("<total>81559 MiB</total>",
        "<total>N/A</total>");
    GpuInventory inventory = new GpuDiscovery(ScriptedNvidiaSmi.like("h100-8x").answer(GpuDiscovery.QUERY, xml),
        CATALOG).discover();

    assertThat(inventory.gpus()).hasSize(8);
    assertThat(inventory.gpu(0).orElseThrow().memoryMb()).isZero();
    assertThat(inventory.gpu(0).orElseThrow().shareableMemoryMb()).isEqualTo(80L * 1024);
    assertThat(inventory.gpu(1).orElseThrow().memoryMb()).isEqualTo(81_559);
    assertThat(inventory.gpus()).extracting(DiscoveredGpu::sharing).containsOnly(GpuSharing.EXCLUSIVE);
  }

  @Test
  void unreadableMemoryIsAnError() {
    String xml = FakeNvidiaSmi.fixture("h100-8x/query.xml").replaceFirst("<total>81559 MiB</total>",
        "<total>lots</total>");
    GpuDiscovery discovery = new GpuDiscovery(ScriptedNvidiaSmi.like("h100-8x").answer(GpuDiscovery.QUERY, xml),
        CATALOG);

    assertThat(discovery.discover().isEmpty()).isTrue();
    assertThat(discovery.lastProblems()).singleElement().asString()
        .contains("<fb_memory_usage><total> is 'lots', not '<n> MiB'");
  }

  @Test
  void twoIslandsOfFour() {
    GpuInventory inventory = discover(FakeNvidiaSmi.of("h100-2x4-islands", temp).smi());

    assertThat(inventory.gpus()).extracting(DiscoveredGpu::nvlinkIsland).containsExactly(0, 0, 0, 0, 1, 1, 1, 1);
  }

  @Test
  void emptyOutputAdvertisesNothing() {
    GpuDiscovery discovery = new GpuDiscovery(ScriptedNvidiaSmi.like("a100-mig").answer(GpuDiscovery.QUERY, ""),
        CATALOG);

    assertThat(discovery.discover().isEmpty()).isTrue();
    assertThat(discovery.lastProblems()).singleElement().asString()
        .contains("nvidia-smi -q -x printed unreadable output (empty output)");
  }

  @Test
  void truncatedXmlAdvertisesNothing() {
    String xml = FakeNvidiaSmi.fixture("h100-8x/query.xml");
    GpuDiscovery discovery = new GpuDiscovery(ScriptedNvidiaSmi.like("h100-8x")
        .answer(GpuDiscovery.QUERY, xml.substring(0, xml.length() - 200)), CATALOG);

    assertThat(discovery.discover().isEmpty()).isTrue();
    assertThat(discovery.lastProblems()).singleElement().asString()
        .contains("nvidia-smi -q -x printed unreadable output (malformed XML");
  }

  @Test
  void nonZeroExitAdvertisesNothing() {
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("h100-8x", temp).write("query.xml", "NVIDIA-SMI has failed because it "
        + "couldn't communicate with the NVIDIA driver.\n").write("query.xml.exit", "9");
    GpuDiscovery discovery = new GpuDiscovery(fake.smi(), CATALOG);

    assertThat(discovery.discover().isEmpty()).isTrue();
    assertThat(discovery.lastProblems()).singleElement().asString()
        .contains("nvidia-smi -q -x failed (exit code 9: NVIDIA-SMI has failed");
  }

  @Test
  void missingBinaryOrHangingToolAdvertisesNothing() {
    GpuDiscovery missing = new GpuDiscovery(new ProcessNvidiaSmi(List.of(temp.resolve("no-such-nvidia-smi")
        .toString()), Duration.ofSeconds(5)), CATALOG);
    assertThat(missing.discover().isEmpty()).isTrue();
    assertThat(missing.lastProblems()).singleElement().asString().contains("cannot start");

    GpuDiscovery hanging = new GpuDiscovery(
        new ProcessNvidiaSmi(List.of("sh", "-c", "sleep 5", "nvidia-smi"), Duration.ofMillis(200)), CATALOG);
    assertThat(hanging.discover().isEmpty()).isTrue();
    assertThat(hanging.lastProblems()).singleElement().asString().contains("timed out after 200 ms");
  }

  @Test
  void unknownProductLeavesThatGpuOut() {
    String xml = FakeNvidiaSmi.fixture("a100-mig/query.xml")
        .replaceFirst("NVIDIA A100-SXM4-40GB", "NVIDIA Quantum X9000");
    GpuDiscovery discovery = new GpuDiscovery(ScriptedNvidiaSmi.like("a100-mig").answer(GpuDiscovery.QUERY, xml),
        CATALOG);

    GpuInventory inventory = discovery.discover();

    assertThat(inventory.gpus()).extracting(DiscoveredGpu::index).containsExactly(1);
    assertThat(discovery.lastProblems()).singleElement().asString()
        .contains("GPU 0 (GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77): unknown product 'NVIDIA Quantum X9000'");
  }

  @Test
  void illegalReportedLayoutLeavesThatGpuOut() {
    // 2g.10gb moved to start 1: not a legal start, and it would overlap the 1g.5gb at 2.
    String lgi = FakeNvidiaSmi.fixture("a100-mig/lgi.txt").replace("   0:2 ", "   1:2 ");
    GpuDiscovery discovery = new GpuDiscovery(ScriptedNvidiaSmi.like("a100-mig")
        .answer(GpuDiscovery.GPU_INSTANCES, lgi), CATALOG);

    GpuInventory inventory = discovery.discover();

    assertThat(inventory.gpus()).extracting(DiscoveredGpu::index).containsExactly(1);
    assertThat(discovery.lastProblems()).singleElement().asString()
        .contains("GPU 0").contains("reported MIG layout is not usable").contains("2g.10gb may start only at");
  }

  @Test
  void profileThatDisagreesWithTheCatalogLeavesThatGpuOut() {
    String lgi = FakeNvidiaSmi.fixture("a100-mig/lgi.txt").replace("MIG 3g.20gb          9 ", "MIG 3g.20gb          7 ");
    GpuDiscovery discovery = new GpuDiscovery(ScriptedNvidiaSmi.like("a100-mig")
        .answer(GpuDiscovery.GPU_INSTANCES, lgi), CATALOG);

    assertThat(discovery.discover().migGpus()).isEmpty();
    assertThat(discovery.lastProblems()).singleElement().asString().contains("the catalog says ID 9");
  }

  @Test
  void unreadableTopologyMeansNoNvlinkNotNoGpus() {
    GpuDiscovery discovery = new GpuDiscovery(ScriptedNvidiaSmi.like("h100-8x")
        .answer(GpuDiscovery.TOPOLOGY, new NvidiaSmi.Result(3, "", "topology not supported")), CATALOG);

    GpuInventory inventory = discovery.discover();

    assertThat(inventory.gpus()).extracting(DiscoveredGpu::nvlinkIsland).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
    assertThat(discovery.lastProblems()).singleElement().asString()
        .contains("nvidia-smi topo -m failed (exit code 3: topology not supported)");
  }

  @Test
  void migGpuWithoutInstancesIsEmptyNotBroken() {
    GpuDiscovery discovery = new GpuDiscovery(ScriptedNvidiaSmi.like("a100-mig")
        .answer(GpuDiscovery.QUERY, FakeNvidiaSmi.fixture("a100-mig/query.xml")
            .replaceAll("(?s)<mig_devices>\\s*<mig_device>.*</mig_device>\\s*</mig_devices>", "<mig_devices/>"))
        .answer(GpuDiscovery.LIST, "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77)\n"
            + "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-9a2f1c3e-4b6d-7e8f-0a1b-2c3d4e5f6a7b)\n")
        .answer(GpuDiscovery.GPU_INSTANCES, new NvidiaSmi.Result(6, "No GPU instances found: Not Found\n", "")),
        CATALOG);

    GpuInventory inventory = discovery.discover();

    assertThat(inventory.gpu(0).orElseThrow().layout().isEmpty()).isTrue();
    assertThat(discovery.lastProblems()).isEmpty();
  }

  private GpuInventory discover(NvidiaSmi smi) {
    GpuDiscovery discovery = new GpuDiscovery(smi, CATALOG);
    GpuInventory inventory = discovery.discover();
    assertThat(discovery.lastProblems()).isEmpty();
    return inventory;
  }

  private static MigPlacement at(String profile, int start) {
    return new MigPlacement(A100.profile(profile).orElseThrow(), start);
  }
}
