package io.spindle.core.model;

import io.spindle.core.model.GpuHealth.State;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What each piece of {@link HealthEvidence} makes a GPU. The rule is: {@link State#FAILED} where NVIDIA says the GPU
 * must be reset, rebooted or serviced before it can be trusted with work; {@link State#DEGRADED} where work still
 * runs correctly but slower, over fewer links, or with a repair waiting for the next reset; everything else
 * {@link State#HEALTHY}. The worst piece of evidence decides.
 *
 * <table>
 *   <caption>Classification</caption>
 *   <tr><th>evidence</th><th>state</th><th>why</th></tr>
 *   <tr><td>Xid in {@link #fatalXids} (default 48, 64, 74, 79, 94, 95)</td><td>FAILED</td><td>NVIDIA's Xid
 *       catalog: 48 double-bit ECC error, 94/95 contained/uncontained uncorrectable ECC error, 64 a page
 *       retirement or row remap that could not be recorded, 74 an NVLink error, 79 the GPU has fallen off the bus.
 *       Each needs a GPU reset or node reboot (79 often a reseat) before new work</td></tr>
 *   <tr><td>any other Xid (e.g. 13, 31, 43, 45, 63)</td><td>DEGRADED</td><td>the catalog's action for 13
 *       (graphics engine exception), 31 (MMU fault), 43 (GPU stopped processing) and 45 (preemptive cleanup) is to
 *       restart the application, and they are often the application's own fault; a log line cannot tell which, so
 *       the GPU is flagged, not removed. 63 is the log side of a pending page retirement / row remap, which is
 *       DEGRADED below</td></tr>
 *   <tr><td>{@link HealthEvidence.Kind#ECC_UNCORRECTABLE_VOLATILE} &gt; 0</td><td>FAILED</td><td>an uncorrectable
 *       memory error since the driver loaded: the data of whatever ran is suspect, and NVIDIA's memory error
 *       documents (dynamic page retirement; A100 memory error management) take the GPU through a reset to retire
 *       or remap the row</td></tr>
 *   <tr><td>{@link HealthEvidence.Kind#ECC_UNCORRECTABLE_AGGREGATE} &gt;
 *       {@link #aggregateUncorrectableLimit}</td><td>DEGRADED</td><td>lifetime count: the rows have been retired or
 *       remapped already, but a GPU that keeps collecting them is wearing out</td></tr>
 *   <tr><td>{@link HealthEvidence.Kind#RETIRED_PAGES_PENDING},
 *       {@link HealthEvidence.Kind#ROW_REMAP_PENDING}</td><td>DEGRADED</td><td>A100 memory error management:
 *       with remapping pending "unaffected applications can continue running ... and new workloads can be
 *       launched"; the repair takes effect at the next reset, which the scheduler can plan</td></tr>
 *   <tr><td>{@link HealthEvidence.Kind#ROW_REMAP_FAILURE}</td><td>FAILED</td><td>no spare row was left: NVIDIA's
 *       RMA policy for row remapping treats this as a GPU to return</td></tr>
 *   <tr><td>{@link HealthEvidence.Kind#NVLINK_DOWN}</td><td>DEGRADED</td><td>the GPU computes, but collective
 *       bandwidth and the NVLink island it advertises are smaller</td></tr>
 *   <tr><td>{@link HealthEvidence.Kind#MISSING}</td><td>FAILED</td><td>a GPU that was there and is not cannot run
 *       anything</td></tr>
 *   <tr><td>{@link HealthEvidence.Kind#THERMAL_SLOWDOWN}, {@link HealthEvidence.Kind#POWER_SLOWDOWN}</td>
 *       <td>DEGRADED</td><td>clocks are held down: correct but slow, and a gang waits for its slowest member.
 *       The ordinary software power cap is not evidence: it is how a busy GPU normally runs</td></tr>
 *   <tr><td>{@link HealthEvidence.Kind#DCGM}</td><td>DEGRADED for Warning, FAILED for Failure</td><td>DCGM's own
 *       verdict, taken as it is</td></tr>
 * </table>
 *
 * @param fatalXids Xid codes that make a GPU FAILED; any other Xid makes it DEGRADED
 * @param aggregateUncorrectableLimit lifetime uncorrectable ECC errors tolerated before a GPU is DEGRADED
 */
public record GpuHealthPolicy(Set<Integer> fatalXids, long aggregateUncorrectableLimit) {

  /** Xid codes that make a GPU FAILED by default; see the class comment for each. */
  public static final Set<Integer> DEFAULT_FATAL_XIDS = Set.of(48, 64, 74, 79, 94, 95);

  /** Lifetime uncorrectable errors tolerated by default: none, so that the first one is at least seen. */
  public static final long DEFAULT_AGGREGATE_UNCORRECTABLE_LIMIT = 0;

  public static final GpuHealthPolicy DEFAULT =
      new GpuHealthPolicy(DEFAULT_FATAL_XIDS, DEFAULT_AGGREGATE_UNCORRECTABLE_LIMIT);

  public GpuHealthPolicy {
    fatalXids = Set.copyOf(fatalXids);
    InvalidInputException.requireNonNegative("health.aggregateUncorrectableLimit", aggregateUncorrectableLimit);
  }

  /** What one piece of evidence alone makes a GPU. */
  public State classify(HealthEvidence e) {
    return switch (e.kind()) {
      case XID -> fatalXids.contains((int) Math.min(e.value(), Integer.MAX_VALUE)) ? State.FAILED : State.DEGRADED;
      case ECC_UNCORRECTABLE_VOLATILE -> e.value() > 0 ? State.FAILED : State.HEALTHY;
      case ECC_UNCORRECTABLE_AGGREGATE ->
          e.value() > aggregateUncorrectableLimit ? State.DEGRADED : State.HEALTHY;
      case RETIRED_PAGES_PENDING, ROW_REMAP_PENDING, NVLINK_DOWN, THERMAL_SLOWDOWN, POWER_SLOWDOWN -> State.DEGRADED;
      case ROW_REMAP_FAILURE, MISSING -> State.FAILED;
      case DCGM -> e.value() >= HealthEvidence.DCGM_FAILURE ? State.FAILED
          : e.value() >= HealthEvidence.DCGM_WARNING ? State.DEGRADED : State.HEALTHY;
    };
  }

  /** The GPU's health given all the evidence read for it: the worst any piece calls for, and all the pieces. */
  public GpuHealth assess(List<HealthEvidence> evidence) {
    State state = State.HEALTHY;
    for (HealthEvidence e : evidence) {
      state = state.worse(classify(e));
    }
    return evidence.isEmpty() ? GpuHealth.HEALTHY : new GpuHealth(state, new ArrayList<>(evidence));
  }
}
