package io.spindle.nm;

import io.spindle.core.model.HealthEvidence;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the table {@code dcgmi health -c -g <group>} prints: a {@code -> GPU n | Warning} row per GPU that is not
 * healthy, then the subsystems ({@code -> Memory system | Failure}) and the messages under them. DCGM is optional;
 * a node without it passes nothing. DCGM names GPUs by its own entity ids, which follow NVML's enumeration order on
 * a node DCGM was not told otherwise about, so they are taken to be {@code nvidia-smi -L} indices.
 */
final class DcgmHealthParser {

  /** One GPU DCGM did not call healthy: {@link HealthEvidence#DCGM_WARNING} or {@code _FAILURE}, and why. */
  record DcgmVerdict(int gpuIndex, long severity, String detail) {}

  private static final Pattern GPU_ROW = Pattern.compile("^->\\s*GPU\\s+(\\d{1,9})$");
  private static final Pattern SUBSYSTEM_ROW = Pattern.compile("^->\\s*(.+)$");
  private static final int MAX_DETAIL = 200;

  private DcgmHealthParser() {}

  /** GPU index to DCGM's verdict, for the GPUs it reported Warning or Failure for. */
  static Map<Integer, DcgmVerdict> parse(String output) throws NvidiaSmiFormatException {
    if (output == null) {
      return Map.of();
    }
    if (!output.contains("Health Monitor Report")) {
      throw new NvidiaSmiFormatException("dcgmi health: no 'Health Monitor Report' table");
    }
    Map<Integer, Long> severities = new LinkedHashMap<>();
    Map<Integer, StringBuilder> details = new LinkedHashMap<>();
    Integer gpu = null;
    for (String line : output.lines().toList()) {
      String[] cells = line.split("\\|", -1);
      if (cells.length < 4 || !line.strip().startsWith("|")) {
        continue; // borders, the title row, anything outside the table
      }
      String left = cells[1].strip();
      String right = cells[2].strip();
      Matcher gpuRow = GPU_ROW.matcher(left);
      Matcher subsystem = SUBSYSTEM_ROW.matcher(left);
      if (gpuRow.matches()) {
        gpu = Integer.parseInt(gpuRow.group(1));
        long severity = severity(right, line);
        if (severity > 0) {
          severities.merge(gpu, severity, Math::max);
          details.computeIfAbsent(gpu, g -> new StringBuilder("DCGM " + right));
        }
      } else if (gpu != null && details.containsKey(gpu) && !right.isEmpty()) {
        StringBuilder detail = details.get(gpu);
        if (subsystem.matches()) {
          // "-> Memory system | Failure": the subsystem that failed; its message follows on unlabelled rows.
          detail.append(detail.indexOf(": ") < 0 ? ": " : "; ").append(subsystem.group(1).strip()).append(':');
        } else if (left.isEmpty() && detail.length() < MAX_DETAIL) {
          detail.append(' ').append(right);
        }
      }
    }
    Map<Integer, DcgmVerdict> out = new LinkedHashMap<>();
    for (Map.Entry<Integer, Long> e : severities.entrySet()) {
      String detail = details.get(e.getKey()).toString();
      out.put(e.getKey(), new DcgmVerdict(e.getKey(), e.getValue(),
          detail.length() > MAX_DETAIL ? detail.substring(0, MAX_DETAIL) + "…" : detail));
    }
    return out;
  }

  private static long severity(String word, String line) throws NvidiaSmiFormatException {
    return switch (word.toLowerCase(Locale.ROOT)) {
      case "healthy" -> 0;
      case "warning" -> HealthEvidence.DCGM_WARNING;
      case "failure" -> HealthEvidence.DCGM_FAILURE;
      default -> throw new NvidiaSmiFormatException("dcgmi health: unknown health '" + SmiXml.excerpt(word)
          + "' in '" + SmiXml.excerpt(line.strip()) + "'");
    };
  }
}
