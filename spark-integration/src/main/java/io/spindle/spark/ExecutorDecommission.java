package io.spindle.spark;

import java.util.Set;

/** Asks Spark to decommission executors: they take no new tasks, move their blocks elsewhere, then exit. */
@FunctionalInterface
interface ExecutorDecommission {

  /**
   * Starts decommissioning {@code executors}; returns without waiting for them to leave.
   *
   * @return the executors Spark accepted (those still alive and not already decommissioning)
   */
  Set<String> decommission(Set<String> executors, String why);
}
