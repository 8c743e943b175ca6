package io.spindle.bench;

import io.spindle.bench.soak.SoakOptions;
import io.spindle.bench.soak.SoakResult;
import io.spindle.bench.soak.SoakRun;

/**
 * Bounded load and soak (issue #11): thousands of applications — gangs, MIG jobs, single GPU and CPU containers, in
 * four queues from five users — submitted through the real YARN client in bursts against a local YARN cluster with
 * Spindle, each driven by an unmanaged ApplicationMaster in this JVM, until drained. Prints the correctness figures
 * (lost, stuck, failed, double-allocated, unaccounted containers; exit status 1 unless all are 0) and the measured
 * ones (submissions/s, allocations/s, scheduling latency, Spindle's cycle latency, heap after GC). With
 * {@code --failovers=N} the cluster is a ResourceManager HA pair whose active one fails over N times under the load,
 * each failover timed (take-over, first allocation after it).
 *
 * <p>Run: {@code scripts/soak [--apps=10000] [--nodes=32] ...} (see {@link SoakOptions}); docs/reliability.md,
 * "Load and soak", has the figures of the full profile.
 */
public final class SoakBenchmark {

  private SoakBenchmark() {}

  public static void main(String[] args) throws Exception {
    if (java.util.List.of(args).contains("--help")) {
      System.out.println(SoakOptions.USAGE);
      return;
    }
    SoakOptions options;
    try {
      options = SoakOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("soak: " + e.getMessage());
      System.err.println(SoakOptions.USAGE);
      System.exit(2);
      return;
    }
    SoakResult result = SoakRun.run(options, System.out);
    result.print(System.out);
    System.out.flush();
    // Hadoop's and ZooKeeper's non-daemon threads may outlive the cluster's stop.
    System.exit(result.correct() ? 0 : 1);
  }
}
