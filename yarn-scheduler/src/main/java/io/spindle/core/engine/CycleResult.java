package io.spindle.core.engine;

import java.util.List;

/** The decisions of one scheduling cycle, in the order they were made. */
public record CycleResult(long cycle, long timeMillis, List<Decision> decisions) {

  public CycleResult {
    decisions = List.copyOf(decisions);
  }

  public List<Decision.Allocate> allocations() {
    return decisions.stream().filter(Decision.Allocate.class::isInstance).map(Decision.Allocate.class::cast).toList();
  }
}
