package io.spindle.nm;

import static io.spindle.nm.FakeNvidiaSmi.fixture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.nm.NvidiaSmiParser.GpuInstance;
import io.spindle.nm.NvidiaSmiParser.ListedGpu;
import io.spindle.nm.NvidiaSmiParser.SmiGpu;
import io.spindle.nm.NvidiaSmiParser.SmiMigDevice;
import io.spindle.nm.NvidiaSmiParser.SmiProcess;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NvidiaSmiParserTest {

  @Test
  void queryXmlOfMixedMigNode() throws Exception {
    List<SmiGpu> gpus = NvidiaSmiParser.parseQuery(fixture("a100-mig/query.xml"));

    assertThat(gpus).hasSize(2);
    SmiGpu mig = gpus.get(0);
    assertThat(mig.productName()).isEqualTo("NVIDIA A100-SXM4-40GB");
    assertThat(mig.uuid()).isEqualTo("GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77");
    assertThat(mig.minorNumber()).isZero();
    assertThat(mig.busId()).isEqualTo("00000000:07:00.0");
    assertThat(mig.migEnabled()).isTrue();
    assertThat(mig.migPending()).isTrue();
    assertThat(mig.migDevices()).containsExactly(new SmiMigDevice(0, 2, 0), new SmiMigDevice(1, 3, 0),
        new SmiMigDevice(2, 9, 0), new SmiMigDevice(3, 10, 0));
    assertThat(mig.processes()).isEmpty();
    SmiGpu whole = gpus.get(1);
    assertThat(whole.migEnabled()).isFalse();
    assertThat(whole.migDevices()).isEmpty();
    assertThat(whole.minorNumber()).isEqualTo(1);
  }

  @Test
  void processesNameTheirGpuInstance() throws Exception {
    List<SmiGpu> gpus = NvidiaSmiParser.parseQuery(fixture("a100-mig/query-busy.xml"));

    assertThat(gpus.get(0).processes()).containsExactly(new SmiProcess(2, 48213));
    assertThat(gpus.get(1).processes()).isEmpty();
  }

  @Test
  void listNamesIndicesAndMigUuids() throws Exception {
    List<ListedGpu> gpus = NvidiaSmiParser.parseList(fixture("a100-mig/list.txt"));

    assertThat(gpus).extracting(ListedGpu::index).containsExactly(0, 1);
    assertThat(gpus.get(0).migDevices()).hasSize(4);
    assertThat(gpus.get(0).migDevices().get(2).profileName()).isEqualTo("1g.5gb");
    assertThat(gpus.get(0).migDevices().get(2).deviceIndex()).isEqualTo(2);
    assertThat(gpus.get(0).migDevices().get(2).uuid()).isEqualTo("MIG-c2d3e4f5-a6b7-5c8d-9e0f-1a2b3c4d5e62");
    assertThat(gpus.get(1).migDevices()).isEmpty();
  }

  @Test
  void gpuInstancesCarryProfileAndPlacement() throws Exception {
    List<GpuInstance> instances = NvidiaSmiParser.parseGpuInstances(fixture("a100-mig/lgi.txt"));

    assertThat(instances).containsExactly(
        new GpuInstance(0, "1g.5gb", 19, 9, 2, 1),
        new GpuInstance(0, "1g.5gb", 19, 10, 3, 1),
        new GpuInstance(0, "2g.10gb", 14, 3, 0, 2),
        new GpuInstance(0, "3g.20gb", 9, 2, 4, 4));
    assertThat(NvidiaSmiParser.parseGpuInstances("No GPU instances found: Not Found\n")).isEmpty();
  }

  @Test
  void nvSwitchNodeIsOneIsland() throws Exception {
    Map<Integer, Integer> islands = NvidiaSmiParser.parseTopology(fixture("h100-8x/topo.txt"));

    assertThat(islands).hasSize(8).allSatisfy((gpu, island) -> assertThat(island).isZero());
  }

  @Test
  void nvlinkQuadsAreTwoIslandsAndPcieLinksJoinNothing() throws Exception {
    Map<Integer, Integer> islands = NvidiaSmiParser.parseTopology(fixture("h100-2x4-islands/topo.txt"));

    assertThat(islands).isEqualTo(Map.of(0, 0, 1, 0, 2, 0, 3, 0, 4, 1, 5, 1, 6, 1, 7, 1));
    String pcieOnly = "\tGPU0\tGPU1\tGPU2\tCPU Affinity\n"
        + "GPU0\t X \tPIX\tSYS\t0-7\nGPU1\tPIX\t X \tNODE\t0-7\nGPU2\tSYS\tNODE\t X \t0-7\n";
    assertThat(NvidiaSmiParser.parseTopology(pcieOnly)).isEqualTo(Map.of(0, 0, 1, 1, 2, 2));
  }

  @Test
  void badOutputsAreErrorsThatSayWhy() {
    assertThatThrownBy(() -> NvidiaSmiParser.parseQuery("")).hasMessage("empty output");
    String xml = fixture("a100-mig/query.xml");
    assertThatThrownBy(() -> NvidiaSmiParser.parseQuery(xml.substring(0, xml.length() / 2)))
        .isInstanceOf(NvidiaSmiFormatException.class).hasMessageContaining("malformed XML at line");
    assertThatThrownBy(() -> NvidiaSmiParser.parseQuery("<log/>")).hasMessageContaining("expected <nvidia_smi_log>");
    assertThatThrownBy(() -> NvidiaSmiParser.parseQuery(xml.replace("<minor_number>0</minor_number>",
        "<minor_number>zero</minor_number>"))).hasMessageContaining("<minor_number> is 'zero'");
    assertThatThrownBy(() -> NvidiaSmiParser.parseList("Failed to initialize NVML\n"))
        .hasMessage("no 'GPU n: ...' line");
    assertThatThrownBy(() -> NvidiaSmiParser.parseGpuInstances("garbage"))
        .hasMessage("no 'GPU instances:' table");
    assertThatThrownBy(() -> NvidiaSmiParser.parseTopology("Legend:\n  X = Self\n"))
        .hasMessageContaining("no header row");
  }
}
