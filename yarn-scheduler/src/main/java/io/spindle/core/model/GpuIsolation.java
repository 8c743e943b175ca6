package io.spindle.core.model;

import java.util.Locale;

/**
 * The isolation a request for a share of a GPU requires ({@code spindle.gpu.isolation}). {@link #ANY} takes a
 * time-sliced or an MPS GPU; {@link #MPS} only an MPS GPU, whose limits the driver enforces. A request that needs
 * MIG's hardware isolation asks for a MIG profile instead (the YARN adapter turns {@code isolation=mig} into the
 * smallest profile that covers the share).
 */
public enum GpuIsolation {
  ANY("any"),
  MPS("mps");

  private final String text;

  GpuIsolation(String text) {
    this.text = text;
  }

  /** Whether a GPU in the given mode gives a share this isolation. */
  public boolean offeredBy(GpuSharing sharing) {
    return this == ANY ? sharing.shares() : sharing == GpuSharing.MPS;
  }

  public String text() {
    return text;
  }

  public static GpuIsolation parse(String field, String value) {
    String v = value == null ? "" : value.strip().toLowerCase(Locale.ROOT);
    for (GpuIsolation i : values()) {
      if (i.text.equals(v)) {
        return i;
      }
    }
    throw new InvalidInputException(field, value, "unknown isolation; use any, mps or mig");
  }

  @Override
  public String toString() {
    return text;
  }
}
