package io.spindle.sim;

import java.util.List;

/** Everything one invocation produced: the inputs as run, and one result per policy, in the order asked. */
public record Report(Trace trace, ClusterSpec cluster, SimOptions options, List<RunResult> runs) {

  public Report {
    runs = List.copyOf(runs);
  }
}
