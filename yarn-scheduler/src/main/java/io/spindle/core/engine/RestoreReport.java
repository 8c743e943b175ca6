package io.spindle.core.engine;

import java.util.List;

/**
 * What {@link Engine#restore} took over, and what it dropped and why (for the log: each line names the entry).
 *
 * @param units units regrouped from recovered containers (gangs whole again, with their start times)
 * @param notices checkpoint notices in force again, with their deadlines
 * @param reservations reservations held for their gangs until the asks of the next cycle confirm them
 * @param dropped entries naming applications, containers, nodes or queues that did not come back, and why
 */
public record RestoreReport(int units, int notices, int reservations, List<String> dropped) {

  public RestoreReport {
    dropped = List.copyOf(dropped);
  }

  @Override
  public String toString() {
    return "restored " + units + " units, " + notices + " checkpoint notices, " + reservations + " reservations"
        + (dropped.isEmpty() ? "" : "; dropped " + dropped.size() + ": " + String.join("; ", dropped));
  }
}
