package io.spindle.nm;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the NVIDIA driver's Xid lines out of kernel-log text ({@code dmesg}, {@code journalctl -k}, a syslog file):
 * {@code NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.} Every other line is
 * ignored, since a kernel log is mostly about other things. The same Xid on the same GPU counts once, with how
 * often it was seen, so that a flood of one message stays one piece of evidence.
 *
 * <p>Which part of the log to pass is the caller's choice: the kernel ring buffer holds lines since boot, and an Xid
 * stays evidence for as long as its line is passed.
 */
final class XidLogParser {

  /** One Xid code seen on one GPU: the first message and how many lines carried it. */
  record XidEvent(PciAddress address, int xid, String message, int count) {}

  /** The Xid events read, and the Xid lines that could not be read (named, so that they can be logged). */
  record XidLog(List<XidEvent> events, List<String> unreadable) {

    XidLog {
      events = List.copyOf(events);
      unreadable = List.copyOf(unreadable);
    }
  }

  private static final Pattern XID_LINE = Pattern.compile("NVRM: Xid \\(([^)]{1,40})\\): (\\d{1,10}),\\s?(.*)$");
  /** The pid and process name the driver prefixes to some messages; the message is what an admin needs. */
  private static final Pattern PREFIX = Pattern.compile("^(?:pid=[^,]*,\\s*|name=[^,]*,\\s*)+");
  private static final int MAX_MESSAGE = 160;

  private XidLogParser() {}

  static XidLog parse(String log) {
    Map<List<Object>, XidEvent> events = new LinkedHashMap<>();
    List<String> unreadable = new ArrayList<>();
    if (log == null) {
      return new XidLog(List.of(), List.of());
    }
    for (String line : log.lines().toList()) {
      if (!line.contains("NVRM: Xid")) {
        continue;
      }
      Matcher m = XID_LINE.matcher(line);
      Optional<PciAddress> address = m.find() ? PciAddress.parse(m.group(1)) : Optional.empty();
      long code = address.isPresent() ? Long.parseLong(m.group(2)) : -1;
      if (address.isEmpty() || code > Integer.MAX_VALUE) {
        unreadable.add(SmiXml.excerpt(line.strip()));
        continue;
      }
      String message = PREFIX.matcher(m.group(3).strip()).replaceFirst("");
      XidEvent event = new XidEvent(address.get(), (int) code,
          message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE) + "…" : message, 1);
      events.merge(List.of(event.address(), event.xid()), event,
          (first, again) -> new XidEvent(first.address(), first.xid(), first.message(), first.count() + 1));
    }
    return new XidLog(new ArrayList<>(events.values()), unreadable);
  }
}
