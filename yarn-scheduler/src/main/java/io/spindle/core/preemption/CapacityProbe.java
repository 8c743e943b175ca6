package io.spindle.core.preemption;

/**
 * The planner's only view of the nodes: "would the need be placed if these victims were gone?". Implementations
 * free and restore victims' containers tentatively; the planner restores every victim it freed before it returns,
 * so the cluster is left exactly as it was.
 */
public interface CapacityProbe {

  /** Tentatively frees the victim's containers. */
  void free(Candidate victim);

  /** Undoes {@link #free}. */
  void restore(Candidate victim);

  /** Whether the need would be placed on the cluster as it is now (with the victims freed so far). */
  boolean fits(Need need);

  /**
   * Whether freeing {@code victim} can help the need at all. A gang holding a reservation is served on its reserved
   * nodes only, so a victim elsewhere would be killed for nothing — and, taken first because it loses least, would
   * crowd out the victim on the reserved nodes that does help.
   */
  default boolean mayHelp(Candidate victim) {
    return true;
  }
}
