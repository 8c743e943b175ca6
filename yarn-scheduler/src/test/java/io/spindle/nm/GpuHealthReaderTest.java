package io.spindle.nm;

import static io.spindle.nm.FakeNvidiaSmi.fixture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.GpuHealth.State;
import io.spindle.core.model.GpuHealthPolicy;
import io.spindle.core.model.HealthEvidence;
import io.spindle.core.model.HealthEvidence.Kind;
import io.spindle.nm.GpuHealthReader.GpuHealthReport;
import io.spindle.nm.GpuHealthReader.Sources;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Each GPU of the synthesized {@code h100-8x-faults} node judged from its recorded outputs. */
class GpuHealthReaderTest {

  private static final String FAULTS = "h100-8x-faults/";
  /** The node's eight GPUs, as discovery saw them before anything went wrong. */
  private static final Set<String> ALL_EIGHT = IntStream.rangeClosed(1, 8).mapToObj(GpuHealthReaderTest::uuid)
      .collect(Collectors.toSet());

  /** {@code GPU-0b1c2d3e-1111-...-4c01} is GPU 0, {@code -8888-...-4c08} GPU 7. */
  private static String uuid(int n) {
    return "GPU-0b1c2d3e-" + String.valueOf(n).repeat(4) + "-4a5b-8c9d-0e1f2a3b4c0" + n;
  }

  private static GpuHealthReport faults() throws NvidiaSmiFormatException {
    return GpuHealthReader.read(new Sources(fixture(FAULTS + "query.xml"), fixture(FAULTS + "list.txt"),
        fixture(FAULTS + "nvlink-s.txt"), fixture(FAULTS + "kern.log"), fixture(FAULTS + "dcgmi-health.txt")),
        ALL_EIGHT, GpuHealthPolicy.DEFAULT);
  }

  @Test
  void everyGpuOfTheFaultyNodeGetsItsState() throws Exception {
    GpuHealthReport report = faults();

    assertThat(report.gpus()).hasSize(8);
    assertThat(IntStream.rangeClosed(1, 8).mapToObj(n -> report.of(uuid(n)).state()))
        .containsExactly(State.DEGRADED, State.FAILED, State.DEGRADED, State.DEGRADED, State.DEGRADED,
            State.FAILED, State.HEALTHY, State.DEGRADED);
    assertThat(report.notes()).isEmpty();
  }

  @Test
  void anApplicationXidIsOneDegradingPieceOfEvidenceHoweverOftenLogged() throws Exception {
    GpuHealth gpu0 = faults().of(uuid(1));

    assertThat(gpu0.evidence()).extracting(HealthEvidence::kind, HealthEvidence::value)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(Kind.XID, 13L));
    assertThat(gpu0.evidence().get(0).detail())
        .isEqualTo("Xid 13: Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address (2 times)");
  }

  @Test
  void volatileUncorrectableEccFailsAGpuAndDcgmAgrees() throws Exception {
    GpuHealth gpu1 = faults().of(uuid(2));

    assertThat(gpu1.evidence()).extracting(HealthEvidence::kind).containsExactly(Kind.ECC_UNCORRECTABLE_VOLATILE,
        Kind.ECC_UNCORRECTABLE_AGGREGATE, Kind.DCGM);
    assertThat(gpu1.evidence(Kind.ECC_UNCORRECTABLE_VOLATILE).get(0).value()).isEqualTo(2);
    HealthEvidence dcgm = gpu1.evidence(Kind.DCGM).get(0);
    assertThat(dcgm.value()).isEqualTo(HealthEvidence.DCGM_FAILURE);
    assertThat(dcgm.detail()).startsWith("DCGM Failure: Memory system").contains("double-bit ECC error");
  }

  @Test
  void aPendingRowRemapDegradesAGpu() throws Exception {
    GpuHealth gpu2 = faults().of(uuid(3));

    assertThat(gpu2.evidence()).extracting(HealthEvidence::kind)
        .containsExactly(Kind.ECC_UNCORRECTABLE_AGGREGATE, Kind.ROW_REMAP_PENDING);
  }

  @Test
  void thermalSlowdownFromClockEventReasons() throws Exception {
    GpuHealth gpu3 = faults().of(uuid(4));

    assertThat(gpu3.evidence()).extracting(HealthEvidence::kind, HealthEvidence::detail).containsExactly(
        org.assertj.core.groups.Tuple.tuple(Kind.THERMAL_SLOWDOWN, "hardware thermal slowdown active"));
  }

  @Test
  void inactiveNvlinkLinksAreCounted() throws Exception {
    HealthEvidence down = faults().of(uuid(5)).evidence(Kind.NVLINK_DOWN).get(0);

    assertThat(down.value()).isEqualTo(3);
    assertThat(down.detail()).isEqualTo("3 of 18 NVLink links inactive");
  }

  @Test
  void aGpuThatFellOffTheBusIsMissingWithItsXidFoundByLowerCaseShortAddress() throws Exception {
    GpuHealth gpu5 = faults().of(uuid(6));

    assertThat(gpu5.state()).isEqualTo(State.FAILED);
    assertThat(gpu5.evidence()).extracting(HealthEvidence::kind).containsExactly(Kind.XID, Kind.MISSING);
    assertThat(gpu5.evidence(Kind.XID).get(0).detail()).isEqualTo("Xid 79: GPU has fallen off the bus.");
  }

  @Test
  void dcgmWarningDegradesTheGpuItNames() throws Exception {
    HealthEvidence dcgm = faults().of(uuid(8)).evidence(Kind.DCGM).get(0);

    assertThat(dcgm.value()).isEqualTo(HealthEvidence.DCGM_WARNING);
    assertThat(dcgm.detail()).isEqualTo(
        "DCGM Warning: PCIe system: Detected more than 8 PCIe replays per minute for GPU 7 : 13");
  }

  @Test
  void theHealthyNodeFixturesAreAllHealthy() throws Exception {
    for (String node : new String[] {"h100-8x", "h100-2x4-islands", "a100-mig", "a100-mig-partial"}) {
      GpuHealthReport report = GpuHealthReader.read(new Sources(fixture(node + "/query.xml"),
          fixture(node + "/list.txt"), null, null, null), Set.of(), GpuHealthPolicy.DEFAULT);

      assertThat(report.gpus()).as(node).isNotEmpty().allSatisfy((uuid, h) -> assertThat(h).isEqualTo(GpuHealth.HEALTHY));
      assertThat(report.notes()).as(node).isEmpty();
    }
  }

  @Test
  void withoutOptionalSourcesOnlyTheXmlAndListCount() throws Exception {
    GpuHealthReport report = GpuHealthReader.read(new Sources(fixture(FAULTS + "query.xml"),
        fixture(FAULTS + "list.txt"), null, null, null), Set.of(), GpuHealthPolicy.DEFAULT);

    // GPU 5 is not expected here, so its absence from -L is not evidence; GPU 0's Xid and GPU 4's links are unread.
    assertThat(report.of(uuid(6))).isEqualTo(GpuHealth.HEALTHY);
    assertThat(report.of(uuid(1))).isEqualTo(GpuHealth.HEALTHY);
    assertThat(report.of(uuid(2)).state()).isEqualTo(State.FAILED);
  }

  @Test
  void noDevicesAtAllMakesEveryExpectedGpuMissing() throws Exception {
    String none = "No devices were found\n";
    GpuHealthReport report = GpuHealthReader.read(new Sources(none, none, null, null, null),
        Set.of(uuid(1), uuid(2)), GpuHealthPolicy.DEFAULT);

    assertThat(report.gpus()).containsOnlyKeys(uuid(1), uuid(2))
        .allSatisfy((uuid, h) -> assertThat(h.evidence(Kind.MISSING)).hasSize(1));
  }

  @Test
  void xidsForAnAddressNoGpuHasAndGarbledXidLinesAreNotesNotEvidence() throws Exception {
    String log = "NVRM: Xid (PCI:0000:c1:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"
        + "NVRM: Xid (PCI:zzzz): 48, DBE\n";
    GpuHealthReport report = GpuHealthReader.read(new Sources(fixture("h100-8x/query.xml"),
        fixture("h100-8x/list.txt"), null, log, null), Set.of(), GpuHealthPolicy.DEFAULT);

    assertThat(report.gpus()).allSatisfy((uuid, h) -> assertThat(h.healthy()).isTrue());
    assertThat(report.notes()).containsExactly(
        "Xid 79 for PCI 0000:c1:00, which nvidia-smi does not list: GPU has fallen off the bus.",
        "unreadable Xid line: NVRM: Xid (PCI:zzzz): 48, DBE");
  }

  @Test
  void aRequiredSourceThatCannotBeReadFailsTheWholeRead() {
    assertThatThrownBy(() -> GpuHealthReader.read(new Sources("<nvidia_smi_log>", fixture(FAULTS + "list.txt"),
        null, null, null), Set.of(), GpuHealthPolicy.DEFAULT)).isInstanceOf(NvidiaSmiFormatException.class)
        .hasMessageContaining("malformed XML");
    assertThatThrownBy(() -> GpuHealthReader.read(new Sources(fixture(FAULTS + "query.xml"), "", null, null, null),
        Set.of(), GpuHealthPolicy.DEFAULT)).isInstanceOf(NvidiaSmiFormatException.class);
  }
}
