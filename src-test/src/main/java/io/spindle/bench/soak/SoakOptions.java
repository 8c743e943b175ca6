package io.spindle.bench.soak;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one soak run does. Every option is {@code --name=value}; the defaults are the full profile (docs/reliability.md,
 * "Load and soak").
 *
 * @param apps applications submitted in all
 * @param nodes fake GPU NodeManagers (half with 8 whole GPUs, half with 4 whole and 4 MIG-mode GPUs)
 * @param burst applications submitted back to back at the start of each burst
 * @param burstIntervalMs from the start of one burst to the start of the next
 * @param maxInFlight applications submitted and not yet ended at most; a burst waits for room (the load is bounded)
 * @param heartbeatMs AM heartbeat interval (allocate calls) while an application waits for or drains containers
 * @param holdMs longest time an application holds its containers before releasing them (each holds 1/4 to all of it)
 * @param launchEvery every n-th application starts {@code true} in its first container through the NodeManager
 *     instead of releasing it (0: none), so real launches and NodeManager-reported completions are in the mix
 * @param threads threads driving the unmanaged ApplicationMasters (each step is a blocking RPC)
 * @param drainTimeoutSeconds after the last submission, how long applications may take to end before the ones left
 *     are reported stuck (and killed)
 * @param heapSamples heap measurements (after a full GC) spread over the run, beside the ones at start and end
 * @param histograms also write a class histogram of the heap at each sample to {@code <workdir>/heap-<sample>.txt}
 *     (1) or not (0): what grew, when the heap does
 * @param failovers 0: one ResourceManager; more: a ResourceManager HA pair whose active one fails over this many
 *     times during the load, the k-th once k/(failovers+1) of the applications have been submitted
 * @param failoverMode how each failover is made (see {@link FailoverMode})
 */
public record SoakOptions(int apps, int nodes, int burst, long burstIntervalMs, int maxInFlight, long heartbeatMs,
    long holdMs, int launchEvery, long seed, int threads, long drainTimeoutSeconds, int heapSamples, boolean histograms,
    Path workdir, int failovers, FailoverMode failoverMode) {

  /** How the active ResourceManager is made to fail over. */
  public enum FailoverMode {
    /** An admin's failover: the active one goes to standby, then the standby becomes active. */
    STANDBY,
    /**
     * The active one stops outright (RPC servers, scheduler, state store) without handing over, and the standby
     * becomes active; the stopped one is started again as the new standby.
     */
    STOP,
    /** STANDBY for odd-numbered failovers, STOP for even-numbered ones. */
    ALTERNATE;

    /** The way the {@code k}-th failover (from 1) is made. */
    public FailoverMode of(int k) {
      return this != ALTERNATE ? this : k % 2 == 1 ? STANDBY : STOP;
    }
  }

  public static final String USAGE = String.join("\n",
      "Usage: scripts/soak [--apps=10000] [--nodes=64] [--burst=100] [--burst-interval-ms=1000]",
      "                    [--max-in-flight=300] [--heartbeat-ms=250] [--hold-ms=1000] [--launch-every=50]",
      "                    [--seed=42] [--threads=24] [--drain-timeout-s=300] [--heap-samples=8]",
      "                    [--histograms=0] [--workdir=target/soak]",
      "                    [--failovers=0] [--failover-mode=alternate|standby|stop]");

  public SoakOptions {
    positive("apps", apps);
    positive("nodes", nodes);
    if (nodes > 250) {
      throw new IllegalArgumentException("--nodes: at most 250 (one loopback address each), not " + nodes);
    }
    positive("burst", burst);
    positive("burst-interval-ms", burstIntervalMs);
    positive("max-in-flight", maxInFlight);
    positive("heartbeat-ms", heartbeatMs);
    positive("hold-ms", holdMs);
    if (launchEvery < 0) {
      throw new IllegalArgumentException("--launch-every: 0 (none) or more, not " + launchEvery);
    }
    positive("threads", threads);
    positive("drain-timeout-s", drainTimeoutSeconds);
    if (heapSamples < 0) {
      throw new IllegalArgumentException("--heap-samples: 0 or more, not " + heapSamples);
    }
    if (failovers < 0) {
      throw new IllegalArgumentException("--failovers: 0 (one ResourceManager) or more, not " + failovers);
    }
    java.util.Objects.requireNonNull(failoverMode, "failoverMode");
  }

  /** The full profile. */
  public static SoakOptions defaults() {
    return new SoakOptions(10_000, 64, 100, 1_000, 300, 250, 1_000, 50, 42, 24, 300, 8, false,
        Path.of("target", "soak"), 0, FailoverMode.ALTERNATE);
  }

  /** Parses {@code --name=value} arguments over the defaults; an unknown name or a bad value is an error. */
  public static SoakOptions parse(String... args) {
    Map<String, String> v = new LinkedHashMap<>();
    for (String a : args) {
      int eq = a.indexOf('=');
      if (!a.startsWith("--") || eq < 0) {
        throw new IllegalArgumentException("arguments are --name=value, not '" + a + "'");
      }
      v.put(a.substring(2, eq), a.substring(eq + 1));
    }
    SoakOptions d = defaults();
    SoakOptions o = new SoakOptions(
        integer(v, "apps", d.apps()), integer(v, "nodes", d.nodes()), integer(v, "burst", d.burst()),
        number(v, "burst-interval-ms", d.burstIntervalMs()), integer(v, "max-in-flight", d.maxInFlight()),
        number(v, "heartbeat-ms", d.heartbeatMs()), number(v, "hold-ms", d.holdMs()),
        integer(v, "launch-every", d.launchEvery()), number(v, "seed", d.seed()), integer(v, "threads", d.threads()),
        number(v, "drain-timeout-s", d.drainTimeoutSeconds()), integer(v, "heap-samples", d.heapSamples()),
        flag(v, "histograms", d.histograms()), v.containsKey("workdir") ? Path.of(v.remove("workdir")) : d.workdir(),
        integer(v, "failovers", d.failovers()), mode(v, d.failoverMode()));
    if (!v.isEmpty()) {
      throw new IllegalArgumentException("unknown option(s): --" + String.join(", --", v.keySet()));
    }
    return o;
  }

  private static FailoverMode mode(Map<String, String> v, FailoverMode dflt) {
    String s = v.remove("failover-mode");
    if (s == null) {
      return dflt;
    }
    for (FailoverMode m : FailoverMode.values()) {
      if (m.name().equalsIgnoreCase(s)) {
        return m;
      }
    }
    throw new IllegalArgumentException("--failover-mode is alternate, standby or stop, not '" + s + "'");
  }

  private static boolean flag(Map<String, String> v, String name, boolean dflt) {
    long n = number(v, name, dflt ? 1 : 0);
    if (n != 0 && n != 1) {
      throw new IllegalArgumentException("--" + name + " is 0 or 1, not " + n);
    }
    return n == 1;
  }

  private static int integer(Map<String, String> v, String name, int dflt) {
    long n = number(v, name, dflt);
    if (n > Integer.MAX_VALUE || n < Integer.MIN_VALUE) {
      throw new IllegalArgumentException("--" + name + ": too large: " + n);
    }
    return (int) n;
  }

  private static long number(Map<String, String> v, String name, long dflt) {
    String s = v.remove(name);
    if (s == null) {
      return dflt;
    }
    try {
      return Long.parseLong(s.replace("_", ""));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + name + " needs a whole number, not '" + s + "'");
    }
  }

  private static void positive(String name, long n) {
    if (n <= 0) {
      throw new IllegalArgumentException("--" + name + " must be at least 1, not " + n);
    }
  }
}
