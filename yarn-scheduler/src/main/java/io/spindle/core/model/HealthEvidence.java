package io.spindle.core.model;

import java.util.Objects;

/**
 * One observation about a GPU's health, as the NodeManager read it: what kind of fault, one number, and a line a
 * person can read. Evidence does not judge; {@link GpuHealthPolicy} decides what it makes the GPU.
 *
 * @param kind what was observed
 * @param value the number that goes with the kind: the Xid code ({@link Kind#XID}), an error count
 *     ({@code ECC_*}), the number of links down ({@link Kind#NVLINK_DOWN}), {@link #DCGM_WARNING} or
 *     {@link #DCGM_FAILURE} ({@link Kind#DCGM}), 1 for a condition that is simply present
 * @param detail a short line for an admin, e.g. "Xid 79: GPU has fallen off the bus"
 */
public record HealthEvidence(Kind kind, long value, String detail) {

  /** {@link Kind#DCGM} value: {@code dcgmi health} said Warning. */
  public static final long DCGM_WARNING = 1;
  /** {@link Kind#DCGM} value: {@code dcgmi health} said Failure. */
  public static final long DCGM_FAILURE = 2;

  /** What was observed; the sources are named so that an admin knows where to look. */
  public enum Kind {
    /** An NVRM Xid line in the kernel log for this GPU's PCI address; value is the Xid code. */
    XID,
    /** Uncorrectable ECC errors since the driver last loaded ({@code ecc_errors/volatile}). */
    ECC_UNCORRECTABLE_VOLATILE,
    /** Uncorrectable ECC errors over the GPU's lifetime ({@code ecc_errors/aggregate}). */
    ECC_UNCORRECTABLE_AGGREGATE,
    /** Pages waiting to be retired at the next driver load ({@code retired_pages/pending_*}; pre-Ampere). */
    RETIRED_PAGES_PENDING,
    /** A row marked for remapping that a GPU reset will activate ({@code remapped_rows/remapped_row_pending}). */
    ROW_REMAP_PENDING,
    /** The GPU ran out of spare rows to remap ({@code remapped_rows/remapped_row_failure}). */
    ROW_REMAP_FAILURE,
    /** NVLink links reported {@code <inactive>} by {@code nvidia-smi nvlink -s}; value is how many. */
    NVLINK_DOWN,
    /** A GPU seen before is no longer in {@code nvidia-smi -L}. */
    MISSING,
    /** Clocks held down by a hardware or software thermal slowdown ({@code clocks_event_reasons}). */
    THERMAL_SLOWDOWN,
    /** Clocks held down by the power brake, an external signal from the chassis ({@code clocks_event_reasons}). */
    POWER_SLOWDOWN,
    /** {@code dcgmi health -c} reported a problem; value is {@link #DCGM_WARNING} or {@link #DCGM_FAILURE}. */
    DCGM
  }

  public HealthEvidence {
    Objects.requireNonNull(kind, "kind");
    detail = detail == null ? "" : detail;
    if (value < 0) {
      throw new InvalidInputException("evidence.value", value, "must not be negative");
    }
  }

  @Override
  public String toString() {
    return kind + "(" + value + "): " + detail;
  }
}
