package io.spindle.core.preemption;

import java.util.List;

/** The victims to reclaim so that {@code need} can be placed: a minimal set, none of which may be left out. */
public record Plan(Need need, List<Candidate> victims) {

  public Plan {
    victims = List.copyOf(victims);
  }
}
