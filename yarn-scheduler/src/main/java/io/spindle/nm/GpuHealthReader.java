package io.spindle.nm;

import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.GpuHealthPolicy;
import io.spindle.core.model.HealthEvidence;
import io.spindle.core.model.HealthEvidence.Kind;
import io.spindle.nm.DcgmHealthParser.DcgmVerdict;
import io.spindle.nm.GpuHealthXml.GpuEvidence;
import io.spindle.nm.NvidiaSmiParser.ListedGpu;
import io.spindle.nm.NvlinkStatusParser.LinkCounts;
import io.spindle.nm.XidLogParser.XidEvent;
import io.spindle.nm.XidLogParser.XidLog;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Judges each GPU of a node from recorded tool output: {@code nvidia-smi -q -x}, {@code nvidia-smi -L},
 * {@code nvidia-smi nvlink -s}, kernel-log Xid lines and, where DCGM runs, {@code dcgmi health -c}. GPUs are matched
 * across the outputs by UUID (XML, {@code -L}, {@code nvlink -s}), PCI address (kernel log) and index (DCGM).
 *
 * <p>Refusals: the two {@code nvidia-smi} outputs that say what GPUs exist must be readable, or
 * {@link NvidiaSmiFormatException} says why, and the caller should treat every GPU's health as unknown, not healthy.
 * An optional source that is unreadable fails the same way. Lines that are readable but name no GPU here (an Xid for
 * an address nvidia-smi does not list, a garbled Xid line) do not fail the read: they are in
 * {@link GpuHealthReport#notes()} for the log.
 */
public final class GpuHealthReader {

  /**
   * The outputs to judge. {@code queryXml} and {@code gpuList} are required; the others may be {@code null} where
   * the node has no NVLink, the kernel log is not readable, or DCGM is not installed.
   */
  public record Sources(String queryXml, String gpuList, String nvlinkStatus, String kernelLog, String dcgmHealth) {}

  /**
   * Health per GPU UUID, every GPU that the outputs list or that was expected, in UUID order; and what was read but
   * could not be tied to a GPU, one line each.
   */
  public record GpuHealthReport(Map<String, GpuHealth> gpus, List<String> notes) {

    public GpuHealthReport {
      gpus = Collections.unmodifiableMap(new TreeMap<>(gpus));
      notes = List.copyOf(notes);
    }

    /** The health of {@code uuid}; {@code null} for a GPU this report does not know. */
    public GpuHealth of(String uuid) {
      return gpus.get(uuid);
    }
  }

  /** What {@code nvidia-smi -L} prints (exit code 6) when the driver sees no GPU at all. */
  private static final String NO_DEVICES = "No devices were found";

  private GpuHealthReader() {}

  /**
   * Reads {@code sources} and judges each GPU under {@code policy}.
   *
   * @param expectedUuids GPUs seen before on this node (e.g. by discovery); one of them absent from
   *     {@code nvidia-smi -L} is {@link Kind#MISSING}
   */
  public static GpuHealthReport read(Sources sources, Set<String> expectedUuids, GpuHealthPolicy policy)
      throws NvidiaSmiFormatException {
    List<ListedGpu> listed = sources.gpuList() != null && sources.gpuList().contains(NO_DEVICES) ? List.of()
        : NvidiaSmiParser.parseList(sources.gpuList());
    // With no GPU at all, -q -x prints the same complaint as -L, not XML: every expected GPU is missing, nothing more.
    List<GpuEvidence> fromXml = listed.isEmpty() ? List.of() : GpuHealthXml.read(sources.queryXml());
    Map<String, LinkCounts> links = NvlinkStatusParser.parse(sources.nvlinkStatus());
    XidLog xids = XidLogParser.parse(sources.kernelLog());
    Map<Integer, DcgmVerdict> dcgm = DcgmHealthParser.parse(sources.dcgmHealth());

    Map<String, List<HealthEvidence>> evidence = new LinkedHashMap<>();
    List<String> notes = new ArrayList<>();
    Map<PciAddress, String> byAddress = new HashMap<>();
    for (GpuEvidence gpu : fromXml) {
      evidence.computeIfAbsent(gpu.uuid(), u -> new ArrayList<>()).addAll(gpu.evidence());
      PciAddress.parse(gpu.busId()).ifPresent(a -> byAddress.put(a, gpu.uuid()));
    }
    for (ListedGpu gpu : listed) {
      evidence.computeIfAbsent(gpu.uuid(), u -> new ArrayList<>());
    }
    addXids(xids, byAddress, evidence, notes);
    addNvlink(links, evidence, notes);
    addDcgm(dcgm, listed, evidence, notes);
    addMissing(expectedUuids, listed, evidence);

    Map<String, GpuHealth> health = new LinkedHashMap<>();
    evidence.forEach((uuid, list) -> health.put(uuid, policy.assess(list)));
    return new GpuHealthReport(health, notes);
  }

  private static void addXids(XidLog xids, Map<PciAddress, String> byAddress,
      Map<String, List<HealthEvidence>> evidence, List<String> notes) {
    for (XidEvent x : xids.events()) {
      String uuid = byAddress.get(x.address());
      if (uuid == null) {
        notes.add("Xid " + x.xid() + " for PCI " + x.address() + ", which nvidia-smi does not list: " + x.message());
        continue;
      }
      evidence.get(uuid).add(new HealthEvidence(Kind.XID, x.xid(), "Xid " + x.xid() + ": " + x.message()
          + (x.count() > 1 ? " (" + x.count() + " times)" : "")));
    }
    xids.unreadable().forEach(line -> notes.add("unreadable Xid line: " + line));
  }

  /**
   * Links down on a GPU. A node whose every link is inactive has no NVLink in use (PCIe cards without a bridge), so
   * that is no evidence; once any GPU has a link up, an inactive link anywhere is one that should be up.
   */
  private static void addNvlink(Map<String, LinkCounts> links, Map<String, List<HealthEvidence>> evidence,
      List<String> notes) {
    if (links.values().stream().allMatch(c -> c.up() == 0)) {
      return;
    }
    links.forEach((uuid, c) -> {
      if (c.down() == 0) {
        return;
      }
      List<HealthEvidence> list = evidence.get(uuid);
      if (list == null) {
        notes.add("nvlink -s lists " + uuid + ", which nvidia-smi -L does not");
      } else {
        list.add(new HealthEvidence(Kind.NVLINK_DOWN, c.down(),
            c.down() + " of " + (c.up() + c.down()) + " NVLink links inactive"));
      }
    });
  }

  private static void addDcgm(Map<Integer, DcgmVerdict> dcgm, List<ListedGpu> listed,
      Map<String, List<HealthEvidence>> evidence, List<String> notes) {
    for (DcgmVerdict v : dcgm.values()) {
      Optional<ListedGpu> gpu = listed.stream().filter(g -> g.index() == v.gpuIndex()).findFirst();
      if (gpu.isEmpty()) {
        notes.add("dcgmi health reports GPU " + v.gpuIndex() + ", which nvidia-smi -L does not list: " + v.detail());
      } else {
        evidence.get(gpu.get().uuid()).add(new HealthEvidence(Kind.DCGM, v.severity(), v.detail()));
      }
    }
  }

  private static void addMissing(Collection<String> expected, List<ListedGpu> listed,
      Map<String, List<HealthEvidence>> evidence) {
    Set<String> present = new java.util.HashSet<>();
    listed.forEach(g -> present.add(g.uuid()));
    for (String uuid : new java.util.TreeSet<>(expected)) {
      if (!present.contains(uuid)) {
        evidence.computeIfAbsent(uuid, u -> new ArrayList<>())
            .add(new HealthEvidence(Kind.MISSING, 1, "not listed by nvidia-smi -L"));
      }
    }
  }
}
