package io.spindle.nm;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads {@code nvidia-smi nvlink -s}: a {@code GPU n: name (UUID: ...)} line per GPU, then one
 * {@code Link n: 26.562 GB/s} (up) or {@code Link n: <inactive>} (down) line per link. Empty output is a node
 * without NVLink. A link state that is neither is refused rather than guessed.
 */
final class NvlinkStatusParser {

  /** How many of a GPU's links are up and how many down. */
  record LinkCounts(int up, int down) {}

  private static final Pattern GPU = Pattern.compile("^GPU (\\d{1,9}): .*\\(UUID: ([^)\\s]+)\\)\\s*$");
  private static final Pattern LINK = Pattern.compile("^\\s+Link (\\d{1,9}): (.*)$");
  private static final Pattern SPEED = Pattern.compile("\\d{1,9}(\\.\\d{1,9})? GB/s");

  private NvlinkStatusParser() {}

  /** GPU UUID to its link counts, in the order printed. */
  static Map<String, LinkCounts> parse(String output) throws NvidiaSmiFormatException {
    Map<String, LinkCounts> out = new LinkedHashMap<>();
    if (output == null) {
      return out;
    }
    String current = null;
    for (String line : output.lines().toList()) {
      Matcher gpu = GPU.matcher(line);
      Matcher link = LINK.matcher(line);
      if (gpu.matches()) {
        current = gpu.group(2);
        out.putIfAbsent(current, new LinkCounts(0, 0));
      } else if (link.matches()) {
        if (current == null) {
          throw new NvidiaSmiFormatException("nvlink -s: link line before any GPU line: '"
              + SmiXml.excerpt(line.strip()) + "'");
        }
        String state = link.group(2).strip().toLowerCase(Locale.ROOT);
        LinkCounts c = out.get(current);
        if (state.contains("inactive")) {
          out.put(current, new LinkCounts(c.up(), c.down() + 1));
        } else if (SPEED.matcher(state.replace("gb/s", "GB/s")).matches()) {
          out.put(current, new LinkCounts(c.up() + 1, c.down()));
        } else {
          throw new NvidiaSmiFormatException("nvlink -s: unreadable link state in '" + SmiXml.excerpt(line.strip())
              + "'");
        }
      } else if (line.startsWith("GPU ") || line.strip().startsWith("Link ")) {
        throw new NvidiaSmiFormatException("nvlink -s: unreadable line '" + SmiXml.excerpt(line.strip()) + "'");
      }
    }
    return out;
  }
}
