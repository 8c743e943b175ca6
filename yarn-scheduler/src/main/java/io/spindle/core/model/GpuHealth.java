package io.spindle.core.model;

import java.util.List;
import java.util.Objects;

/**
 * A GPU's health as the NodeManager judged it, with the evidence behind the judgement. Built by
 * {@link GpuHealthPolicy#assess}; a GPU with no evidence is {@link State#HEALTHY}.
 *
 * @param state the worst state any piece of evidence calls for
 * @param evidence everything observed, in the order it was read; kept even when it changes nothing, so that an admin
 *     sees what was seen
 */
public record GpuHealth(State state, List<HealthEvidence> evidence) {

  /** A GPU with nothing against it. */
  public static final GpuHealth HEALTHY = new GpuHealth(State.HEALTHY, List.of());

  /** Ordered from best to worst, so that the worst of several is the greatest. */
  public enum State {
    /** Nothing observed that calls for action. */
    HEALTHY,
    /** Usable, but impaired or needing a reset at the next convenient drain. */
    DEGRADED,
    /** Not to be given new work until it is reset or serviced. */
    FAILED;

    /** The worse of this and {@code other}. */
    public State worse(State other) {
      return compareTo(other) >= 0 ? this : other;
    }
  }

  public GpuHealth {
    Objects.requireNonNull(state, "state");
    evidence = List.copyOf(evidence);
  }

  public boolean healthy() {
    return state == State.HEALTHY;
  }

  /** The evidence of one kind, for log lines and tests. */
  public List<HealthEvidence> evidence(HealthEvidence.Kind kind) {
    return evidence.stream().filter(e -> e.kind() == kind).toList();
  }
}
