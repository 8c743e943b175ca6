package io.spindle.core.model;

import java.util.Locale;

/**
 * How a GPU that is not in MIG mode may be shared below a whole GPU. The admin sets it per node or per GPU; the
 * NodeManager reports it with the GPU, as it reports MIG mode.
 *
 * <ul>
 *   <li>{@link #EXCLUSIVE}: whole GPUs only; one container per GPU.
 *   <li>{@link #TIME_SLICE}: containers asking for a share of a GPU run on it together, time-sliced by the driver.
 *       Nothing enforces a share: a container may use more compute or memory than it asked for and slow or crash
 *       its neighbours. Spindle only keeps the shares it hands out within the GPU.
 *   <li>{@link #MPS}: shares run under NVIDIA's Multi-Process Service, which enforces the compute share
 *       ({@code CUDA_MPS_ACTIVE_THREAD_PERCENTAGE}) and the memory amount ({@code CUDA_MPS_PINNED_DEVICE_MEM_LIMIT}).
 * </ul>
 *
 * <p>A shared GPU with nothing on it still serves a whole-GPU container: whole GPUs are never stranded by the mode.
 */
public enum GpuSharing {
  EXCLUSIVE("exclusive"),
  TIME_SLICE("time-slice"),
  MPS("mps");

  private final String text;

  GpuSharing(String text) {
    this.text = text;
  }

  /** Whether containers may take a share of such a GPU. */
  public boolean shares() {
    return this != EXCLUSIVE;
  }

  /** The mode as admins write it in configuration and read it in reports. */
  public String text() {
    return text;
  }

  /** Parses the configuration text ({@code exclusive}, {@code time-slice}, {@code mps}), naming the field on error. */
  public static GpuSharing parse(String field, String value) {
    String v = value == null ? "" : value.strip().toLowerCase(Locale.ROOT);
    for (GpuSharing s : values()) {
      if (s.text.equals(v) || s.name().toLowerCase(Locale.ROOT).equals(v)) {
        return s;
      }
    }
    throw new InvalidInputException(field, value, "unknown GPU sharing mode; use exclusive, time-slice or mps");
  }

  @Override
  public String toString() {
    return text;
  }
}
