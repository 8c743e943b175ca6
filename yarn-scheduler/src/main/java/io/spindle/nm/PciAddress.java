package io.spindle.nm;

import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A GPU's PCI domain, bus and device, the part that the tools agree on. nvidia-smi prints
 * {@code 00000000:3B:00.0} (eight-digit domain, upper case, with the function); the kernel's NVRM Xid lines print
 * {@code 0000:3b:00} (four digits, lower case, no function). Comparing numbers, not strings, makes them the same GPU.
 */
record PciAddress(long domain, int bus, int device) {

  private static final Pattern FORM =
      Pattern.compile("(?i)^(?:PCI:)?([0-9a-f]{1,8}):([0-9a-f]{1,2}):([0-9a-f]{1,2})(?:\\.[0-7])?$");

  /** The address in {@code text}, or empty when it is not one of the forms above. */
  static Optional<PciAddress> parse(String text) {
    if (text == null) {
      return Optional.empty();
    }
    Matcher m = FORM.matcher(text.strip());
    if (!m.matches()) {
      return Optional.empty();
    }
    // At most eight and two hex digits: these always fit, whatever the tool printed.
    return Optional.of(new PciAddress(Long.parseLong(m.group(1), 16), Integer.parseInt(m.group(2), 16),
        Integer.parseInt(m.group(3), 16)));
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "%04x:%02x:%02x", domain, bus, device);
  }
}
