package io.spindle.nm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.model.HealthEvidence;
import io.spindle.core.model.HealthEvidence.Kind;
import io.spindle.nm.GpuHealthXml.GpuEvidence;
import io.spindle.nm.NvlinkStatusParser.LinkCounts;
import io.spindle.nm.XidLogParser.XidEvent;
import io.spindle.nm.XidLogParser.XidLog;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The readers behind {@link GpuHealthReader}, one output format at a time, including older drivers' forms. */
class GpuHealthSourcesTest {

  private static String gpu(String body) {
    return "<?xml version=\"1.0\" ?>\n<nvidia_smi_log><gpu id=\"00000000:3B:00.0\"><uuid>GPU-a</uuid>"
        + "<pci><pci_bus_id>00000000:3B:00.0</pci_bus_id></pci>" + body + "</gpu></nvidia_smi_log>";
  }

  private static List<Kind> kinds(String xml) throws NvidiaSmiFormatException {
    return GpuHealthXml.read(xml).get(0).evidence().stream().map(HealthEvidence::kind).toList();
  }

  @Test
  void olderDriversThrottleReasonsReadLikeNewerEventReasons() throws Exception {
    String older = gpu("<clocks_throttle_reasons>"
        + "<clocks_throttle_reason_hw_thermal_slowdown>Not Active</clocks_throttle_reason_hw_thermal_slowdown>"
        + "<clocks_throttle_reason_sw_thermal_slowdown>Active</clocks_throttle_reason_sw_thermal_slowdown>"
        + "<clocks_throttle_reason_hw_power_brake_slowdown>Active</clocks_throttle_reason_hw_power_brake_slowdown>"
        + "</clocks_throttle_reasons>");
    String newer = older.replace("throttle", "event");

    assertThat(kinds(older)).containsExactly(Kind.THERMAL_SLOWDOWN, Kind.POWER_SLOWDOWN);
    assertThat(kinds(newer)).containsExactly(Kind.THERMAL_SLOWDOWN, Kind.POWER_SLOWDOWN);
    assertThat(GpuHealthXml.read(older).get(0).evidence().get(0).detail()).isEqualTo("software thermal slowdown active");
  }

  @Test
  void theSoftwarePowerCapIsNotEvidence() throws Exception {
    assertThat(kinds(gpu("<clocks_event_reasons><clocks_event_reason_sw_power_cap>Active</clocks_event_reason_sw_power_cap>"
        + "</clocks_event_reasons>"))).isEmpty();
  }

  @Test
  void olderDriversDoubleBitTotalsCountAsUncorrectable() throws Exception {
    String xml = gpu("<ecc_errors><volatile><single_bit><total>7</total></single_bit><double_bit><device_memory>1"
        + "</device_memory><total>1</total></double_bit></volatile><aggregate><single_bit><total>9</total></single_bit>"
        + "<double_bit><total>4</total></double_bit></aggregate></ecc_errors>"
        + "<retired_pages><pending_blacklist>Yes</pending_blacklist><pending_retirement>No</pending_retirement>"
        + "</retired_pages>");

    List<HealthEvidence> evidence = GpuHealthXml.read(xml).get(0).evidence();

    assertThat(evidence).extracting(HealthEvidence::kind, HealthEvidence::value).containsExactly(
        org.assertj.core.groups.Tuple.tuple(Kind.ECC_UNCORRECTABLE_VOLATILE, 1L),
        org.assertj.core.groups.Tuple.tuple(Kind.ECC_UNCORRECTABLE_AGGREGATE, 4L),
        org.assertj.core.groups.Tuple.tuple(Kind.RETIRED_PAGES_PENDING, 1L));
  }

  @Test
  void sramAndDramUncorrectableAreAddedAndNotApplicableIsNothing() throws Exception {
    String xml = gpu("<ecc_errors><volatile><sram_uncorrectable_parity>1</sram_uncorrectable_parity>"
        + "<sram_uncorrectable_secded>2</sram_uncorrectable_secded><dram_uncorrectable>N/A</dram_uncorrectable>"
        + "<dram_correctable>50</dram_correctable></volatile><aggregate>N/A</aggregate></ecc_errors>"
        + "<remapped_rows>N/A</remapped_rows><retired_pages><pending_blacklist>N/A</pending_blacklist></retired_pages>");

    List<HealthEvidence> evidence = GpuHealthXml.read(xml).get(0).evidence();

    assertThat(evidence).extracting(HealthEvidence::kind, HealthEvidence::value)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(Kind.ECC_UNCORRECTABLE_VOLATILE, 3L));
  }

  @Test
  void aRowRemapFailureIsRead() throws Exception {
    assertThat(kinds(gpu("<remapped_rows><remapped_row_pending>No</remapped_row_pending>"
        + "<remapped_row_failure>Yes</remapped_row_failure></remapped_rows>"))).containsExactly(Kind.ROW_REMAP_FAILURE);
  }

  @Test
  void aCountBeyondALongIsStillACount() throws Exception {
    GpuEvidence gpu = GpuHealthXml.read(gpu("<ecc_errors><volatile><dram_uncorrectable>99999999999999999999999"
        + "</dram_uncorrectable><sram_uncorrectable>9223372036854775807</sram_uncorrectable></volatile></ecc_errors>"))
        .get(0);

    assertThat(gpu.evidence().get(0).value()).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void valuesTheFormatDoesNotAllowAreRefusedWithWhereTheyAre() {
    assertThatThrownBy(() -> GpuHealthXml.read(gpu("<ecc_errors><volatile><dram_uncorrectable>-1</dram_uncorrectable>"
        + "</volatile></ecc_errors>"))).isInstanceOf(NvidiaSmiFormatException.class)
        .hasMessage("<gpu> GPU-a <ecc_errors><volatile> <dram_uncorrectable> is '-1', not a count or N/A");
    assertThatThrownBy(() -> GpuHealthXml.read(gpu("<remapped_rows><remapped_row_failure>Maybe</remapped_row_failure>"
        + "</remapped_rows>"))).isInstanceOf(NvidiaSmiFormatException.class).hasMessageContaining("'Maybe'");
    assertThatThrownBy(() -> GpuHealthXml.read(gpu("<clocks_event_reasons><clocks_event_reason_hw_thermal_slowdown>"
        + "Hot</clocks_event_reason_hw_thermal_slowdown></clocks_event_reasons>")))
        .isInstanceOf(NvidiaSmiFormatException.class).hasMessageContaining("'Hot'");
  }

  @Test
  void pciAddressesMatchAcrossCaseDomainWidthAndFunction() {
    Optional<PciAddress> smi = PciAddress.parse("00000000:3B:00.0");

    assertThat(smi).isPresent();
    assertThat(PciAddress.parse("0000:3b:00")).isEqualTo(smi);
    assertThat(PciAddress.parse("PCI:0000:3B:00")).isEqualTo(smi);
    assertThat(PciAddress.parse("pci:0:3b:0.0")).isEqualTo(smi);
    assertThat(PciAddress.parse("0000:3c:00")).isNotEqualTo(smi);
    assertThat(PciAddress.parse("0001:3b:00")).isNotEqualTo(smi);
    assertThat(PciAddress.parse("000000000:3b:00")).isEmpty();
    assertThat(PciAddress.parse("3b:00.0")).isEmpty();
    assertThat(PciAddress.parse(null)).isEmpty();
    assertThat(smi.get()).hasToString("0000:3b:00");
  }

  @Test
  void xidLinesAreReadFromAnyKernelLogFormat() {
    XidLog log = XidLogParser.parse("""
        Mar  4 10:07:19 node7 kernel: [ 4512.123] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
        2025-03-04T10:07:20+0000 node7 kernel: NVRM: Xid (0000:3B:00): 48, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.
        [Tue Mar  4 10:07:21 2025] NVRM: Xid (PCI:0000:3b:00): 79, pid=12, name=python, GPU has fallen off the bus.
        [Tue Mar  4 10:07:22 2025] NVRM: Xid (PCI:0000:3b:00): 99999999999, too big
        [Tue Mar  4 10:07:22 2025] NVRM: GPU at PCI:0000:3b:00: GPU-a
        """);
    PciAddress at = PciAddress.parse("0000:3b:00").orElseThrow();

    assertThat(log.events()).containsExactly(new XidEvent(at, 79, "GPU has fallen off the bus.", 2),
        new XidEvent(at, 48, "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at "
            + "partition 6, subpartition 0.", 1));
    assertThat(log.unreadable()).containsExactly(
        "[Tue Mar  4 10:07:22 2025] NVRM: Xid (PCI:0000:3b:00): 99999999999, too big");
    assertThat(XidLogParser.parse(null).events()).isEmpty();
  }

  @Test
  void nvlinkStatusCountsLinksUpAndDown() throws Exception {
    Map<String, LinkCounts> links = NvlinkStatusParser.parse("""
        GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-a)
        \t Link 0: 25 GB/s
        \t Link 1: <inactive>
        GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-b)
        \t Link 0: 25 GB/s
        """);

    assertThat(links).containsExactly(Map.entry("GPU-a", new LinkCounts(1, 1)), Map.entry("GPU-b", new LinkCounts(1, 0)));
    assertThat(NvlinkStatusParser.parse("")).isEmpty();
    assertThatThrownBy(() -> NvlinkStatusParser.parse("GPU 0: X (UUID: GPU-a)\n\t Link 0: sideways\n"))
        .isInstanceOf(NvidiaSmiFormatException.class).hasMessageContaining("unreadable link state");
    assertThatThrownBy(() -> NvlinkStatusParser.parse("\t Link 0: 25 GB/s\n"))
        .isInstanceOf(NvidiaSmiFormatException.class).hasMessageContaining("before any GPU line");
  }

  @Test
  void aNodeWhoseLinksAreAllInactiveHasNoNvlinkRatherThanAllLinksDown() throws Exception {
    String smiXml = FakeNvidiaSmi.fixture("h100-2x4-islands/query.xml");
    String list = FakeNvidiaSmi.fixture("h100-2x4-islands/list.txt");
    StringBuilder nvlink = new StringBuilder();
    list.lines().forEach(l -> nvlink.append(l).append("\n\t Link 0: <inactive>\n"));

    var report = GpuHealthReader.read(new GpuHealthReader.Sources(smiXml, list, nvlink.toString(), null, null),
        java.util.Set.of(), io.spindle.core.model.GpuHealthPolicy.DEFAULT);

    assertThat(report.gpus()).allSatisfy((uuid, h) -> assertThat(h.healthy()).isTrue());
  }

  @Test
  void dcgmHealthyNodeAndUnknownVerdicts() throws Exception {
    String healthy = """
        +---------------------------+----------------------------------------------------------+
        | Health Monitor Report                                                                |
        +===========================+==========================================================+
        | Overall Health: Healthy                                                              |
        +---------------------------+----------------------------------------------------------+
        """;

    assertThat(DcgmHealthParser.parse(healthy)).isEmpty();
    assertThat(DcgmHealthParser.parse(null)).isEmpty();
    assertThatThrownBy(() -> DcgmHealthParser.parse("Error: unable to connect to host engine"))
        .isInstanceOf(NvidiaSmiFormatException.class).hasMessageContaining("Health Monitor Report");
    assertThatThrownBy(() -> DcgmHealthParser.parse(healthy + "| -> GPU 0 | Meh |\n"))
        .isInstanceOf(NvidiaSmiFormatException.class).hasMessageContaining("unknown health 'Meh'");
  }
}
