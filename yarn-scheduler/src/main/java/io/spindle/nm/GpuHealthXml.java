package io.spindle.nm;

import static io.spindle.nm.SmiXml.child;
import static io.spindle.nm.SmiXml.children;
import static io.spindle.nm.SmiXml.excerpt;
import static io.spindle.nm.SmiXml.requiredText;
import static io.spindle.nm.SmiXml.text;

import io.spindle.core.model.HealthEvidence;
import io.spindle.core.model.HealthEvidence.Kind;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The health parts of {@code nvidia-smi -q -x}: ECC counters, retired pages, remapped rows and clock slowdowns, per
 * GPU. An element that is absent or {@code N/A} is no evidence (a GPU without ECC or row remapping simply has none);
 * a value that is present but not one the DTD allows is a {@link NvidiaSmiFormatException}, because guessing
 * "healthy" about a counter that says something unknown is not safe.
 */
final class GpuHealthXml {

  /** The health evidence of one {@code <gpu>}, with the address the kernel log will name it by. */
  record GpuEvidence(String uuid, String busId, List<HealthEvidence> evidence) {

    GpuEvidence {
      evidence = List.copyOf(evidence);
    }
  }

  private static final Pattern COUNT = Pattern.compile("\\d{1,30}");
  /** Driver R535+ names the block {@code clocks_event_reasons}; older drivers {@code clocks_throttle_reasons}. */
  private static final List<String> CLOCK_BLOCKS = List.of("clocks_event_reasons", "clocks_throttle_reasons");
  private static final List<String> CLOCK_PREFIXES = List.of("clocks_event_reason_", "clocks_throttle_reason_");

  private GpuHealthXml() {}

  static List<GpuEvidence> read(String xml) throws NvidiaSmiFormatException {
    Element root = SmiXml.root(xml);
    List<GpuEvidence> out = new ArrayList<>();
    for (Element gpu : children(root, "gpu")) {
      String uuid = requiredText(gpu, "uuid", "<gpu> #" + out.size());
      String where = "<gpu> " + excerpt(uuid);
      List<HealthEvidence> evidence = new ArrayList<>();
      ecc(gpu, where, evidence);
      retiredPages(gpu, where, evidence);
      remappedRows(gpu, where, evidence);
      clocks(gpu, where, evidence);
      Element pci = child(gpu, "pci");
      String busId = pci != null && text(pci, "pci_bus_id") != null ? text(pci, "pci_bus_id") : gpu.getAttribute("id");
      out.add(new GpuEvidence(uuid, busId, evidence));
    }
    return out;
  }

  private static void ecc(Element gpu, String where, List<HealthEvidence> out) throws NvidiaSmiFormatException {
    Element ecc = child(gpu, "ecc_errors");
    if (ecc == null) {
      return;
    }
    long volatileCount = uncorrectable(child(ecc, "volatile"), where + " <ecc_errors><volatile>");
    if (volatileCount > 0) {
      out.add(new HealthEvidence(Kind.ECC_UNCORRECTABLE_VOLATILE, volatileCount,
          volatileCount + " uncorrectable ECC error(s) since the driver loaded"));
    }
    long aggregateCount = uncorrectable(child(ecc, "aggregate"), where + " <ecc_errors><aggregate>");
    if (aggregateCount > 0) {
      out.add(new HealthEvidence(Kind.ECC_UNCORRECTABLE_AGGREGATE, aggregateCount,
          aggregateCount + " uncorrectable ECC error(s) over the GPU's lifetime"));
    }
  }

  /**
   * Uncorrectable errors in one {@code <volatile>} or {@code <aggregate>} block: DTD v12 splits them into
   * {@code dram_uncorrectable}, {@code sram_uncorrectable} (or {@code sram_uncorrectable_parity} and
   * {@code _secded}); older drivers print {@code <double_bit><total>}. All that are printed are added up.
   */
  private static long uncorrectable(Element block, String where) throws NvidiaSmiFormatException {
    if (block == null) {
      return 0;
    }
    long sum = 0;
    NodeList nodes = block.getChildNodes();
    for (int i = 0; i < nodes.getLength(); i++) {
      Node n = nodes.item(i);
      if (n instanceof Element e && e.getTagName().contains("_uncorrectable")) {
        sum = saturatingAdd(sum, count(e.getTextContent(), where + " <" + e.getTagName() + ">"));
      }
    }
    Element doubleBit = child(block, "double_bit");
    if (doubleBit != null) {
      sum = saturatingAdd(sum, count(text(doubleBit, "total"), where + " <double_bit><total>"));
    }
    return sum;
  }

  private static void retiredPages(Element gpu, String where, List<HealthEvidence> out)
      throws NvidiaSmiFormatException {
    Element pages = child(gpu, "retired_pages");
    if (pages == null) {
      return;
    }
    for (String tag : List.of("pending_blacklist", "pending_retirement")) {
      if (yes(text(pages, tag), where + " <retired_pages><" + tag + ">")) {
        out.add(new HealthEvidence(Kind.RETIRED_PAGES_PENDING, 1,
            "retired pages pending: they take effect when the driver reloads"));
        return;
      }
    }
  }

  private static void remappedRows(Element gpu, String where, List<HealthEvidence> out)
      throws NvidiaSmiFormatException {
    Element rows = child(gpu, "remapped_rows");
    if (rows == null) {
      return;
    }
    if (yes(text(rows, "remapped_row_pending"), where + " <remapped_rows><remapped_row_pending>")) {
      out.add(new HealthEvidence(Kind.ROW_REMAP_PENDING, 1, "row remapping pending: takes effect at the next reset"));
    }
    if (yes(text(rows, "remapped_row_failure"), where + " <remapped_rows><remapped_row_failure>")) {
      out.add(new HealthEvidence(Kind.ROW_REMAP_FAILURE, 1, "row remapping failed: no spare row left"));
    }
  }

  private static void clocks(Element gpu, String where, List<HealthEvidence> out) throws NvidiaSmiFormatException {
    for (int i = 0; i < CLOCK_BLOCKS.size(); i++) {
      Element block = child(gpu, CLOCK_BLOCKS.get(i));
      if (block == null) {
        continue;
      }
      String prefix = CLOCK_PREFIXES.get(i);
      String at = where + " <" + CLOCK_BLOCKS.get(i) + ">";
      boolean hwThermal = active(text(block, prefix + "hw_thermal_slowdown"), at);
      boolean swThermal = active(text(block, prefix + "sw_thermal_slowdown"), at);
      if (hwThermal || swThermal) {
        out.add(new HealthEvidence(Kind.THERMAL_SLOWDOWN, 1, (hwThermal && swThermal ? "hardware and software"
            : hwThermal ? "hardware" : "software") + " thermal slowdown active"));
      }
      if (active(text(block, prefix + "hw_power_brake_slowdown"), at)) {
        out.add(new HealthEvidence(Kind.POWER_SLOWDOWN, 1, "hardware power brake slowdown active"));
      }
      return;
    }
  }

  /** A counter: digits (a count beyond a long is still a count, held at the largest long), or N/A / absent as 0. */
  private static long count(String value, String where) throws NvidiaSmiFormatException {
    if (value == null || value.isBlank() || "N/A".equalsIgnoreCase(value.strip())) {
      return 0;
    }
    String v = value.strip();
    if (!COUNT.matcher(v).matches()) {
      throw new NvidiaSmiFormatException(where + " is '" + excerpt(v) + "', not a count or N/A");
    }
    return v.length() > 18 ? Long.MAX_VALUE : Long.parseLong(v);
  }

  private static boolean yes(String value, String where) throws NvidiaSmiFormatException {
    String v = value == null ? "" : value.strip().toLowerCase(Locale.ROOT);
    return switch (v) {
      case "yes" -> true;
      case "no", "n/a", "" -> false;
      default -> throw new NvidiaSmiFormatException(where + " is '" + excerpt(value.strip()) + "', not Yes, No or N/A");
    };
  }

  private static boolean active(String value, String where) throws NvidiaSmiFormatException {
    String v = value == null ? "" : value.strip().toLowerCase(Locale.ROOT);
    return switch (v) {
      case "active" -> true;
      case "not active", "n/a", "" -> false;
      default -> throw new NvidiaSmiFormatException(where + " has '" + excerpt(value.strip())
          + "', not Active, Not Active or N/A");
    };
  }

  private static long saturatingAdd(long a, long b) {
    long sum = a + b;
    return sum < 0 ? Long.MAX_VALUE : sum;
  }
}
