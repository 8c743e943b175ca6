package io.spindle.sim;

import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.PlacementSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Spindle's engine with a chosen set of its features, so that each gain can be put down to one feature.
 * {@code spindle-helios} has none of them and follows the HeliosArtifact simulator's rules (each queue on its own
 * nodes, no borrowing, strict FIFO inside a queue, gangs whole); {@code spindle} has all of them; names such as
 * {@code spindle-helios+backfill+pool} add features one by one.
 *
 * @param backfill a job that does not fit is skipped and later ones may start (off: strict queue order)
 * @param pool every queue may use every node (off: a queue runs only on its partition's nodes)
 * @param borrow a queue may use capacity other queues leave idle, up to its maximum-capacity (off: its maximum is
 *     its guarantee)
 * @param reserve a gang that does not fit gets nodes reserved, which then only drain
 * @param runtimes jobs declare their run time, so that short jobs may run on nodes reserved for a gang when they
 *     end before the gang is due
 * @param shortest every queue orders its jobs shortest declared run time first ({@code spindle.ordering=
 *     shortest-first}; with {@code runtimes}, else every job declares none and the order is FIFO)
 */
public record SpindlePolicy(boolean backfill, boolean pool, boolean borrow, boolean reserve, boolean runtimes,
    boolean shortest) implements SimPolicy {

  static final List<String> FEATURES = List.of("backfill", "pool", "borrow", "reserve", "runtimes", "shortest");
  /** The order in which {@code --policy ablation} adds features. */
  static final List<String> ABLATION = List.of("spindle-helios", "spindle-helios+backfill",
      "spindle-helios+backfill+pool", "spindle-helios+backfill+pool+borrow",
      "spindle-helios+backfill+pool+borrow+reserve", "spindle");

  static SpindlePolicy parse(String name) {
    if (name.equals("spindle+shortest")) {
      return new SpindlePolicy(true, true, true, true, true, true);
    }
    if (name.equals("spindle")) {
      return new SpindlePolicy(true, true, true, true, true, false);
    }
    if (!name.startsWith("spindle-helios")) {
      throw new IllegalArgumentException("unknown policy '" + name + "'; policies are fifo, yarn, spindle-helios, "
          + "spindle, spindle-helios+<feature>... (features " + FEATURES + "), all, ablation, preempt-compare; "
          + "a spindle policy may end in +preempt-checkpoint or +preempt-kill-15s");
    }
    boolean[] f = new boolean[FEATURES.size()];
    String rest = name.substring("spindle-helios".length());
    if (!rest.isEmpty()) {
      if (!rest.startsWith("+")) {
        throw new IllegalArgumentException("unknown policy '" + name + "'");
      }
      for (String feature : rest.substring(1).split("\\+")) {
        int i = FEATURES.indexOf(feature);
        if (i < 0) {
          throw new IllegalArgumentException("unknown feature '" + feature + "' in '" + name + "'; features are "
              + FEATURES);
        }
        f[i] = true;
      }
    }
    return new SpindlePolicy(f[0], f[1], f[2], f[3], f[4], f[5]);
  }

  @Override
  public String name() {
    if (backfill && pool && borrow && reserve && runtimes) {
      return shortest ? "spindle+shortest" : "spindle";
    }
    StringBuilder s = new StringBuilder("spindle-helios");
    boolean[] f = {backfill, pool, borrow, reserve, runtimes, shortest};
    for (int i = 0; i < f.length; i++) {
      if (f[i]) {
        s.append('+').append(FEATURES.get(i));
      }
    }
    return s.toString();
  }

  @Override
  public String implementation() {
    List<String> parts = new ArrayList<>();
    parts.add(backfill ? "jobs that do not fit are skipped (backfill)" : "strict queue order (no backfill)");
    parts.add(pool ? "all nodes shared" : "each queue on its own partition's nodes");
    parts.add(borrow ? "borrowing up to maximum-capacity" : "maximum-capacity = guarantee (no borrowing)");
    parts.add(reserve ? reservations(engineSettings()) : "no reservations");
    parts.add(runtimes ? "jobs declare run times (backfill onto reserved nodes)" : "no declared run times");
    if (shortest) {
      parts.add("each queue serves the shortest declared run time first (spindle.ordering=shortest-first)");
    }
    return "engine, " + String.join(", ", parts) + "; multi-GPU jobs are gangs";
  }

  /** What the reservations do under these settings, in words: where their lifetime comes from. */
  private String reservations(EngineSettings s) {
    return "gangs reserve nodes (" + s.maxReservations() + " at most, on the nodes expected to drain soonest; held "
        + (runtimes ? "until the declared run times of what runs there end, " + s.reservationTimeoutMillis() / 1000
            + " s to " + s.reservationMaxDrainMillis() / 1000 + " s"
            : s.reservationTimeoutMillis() / 1000 + " s, the drain being unknown") + ")";
  }

  @Override
  public EngineSettings engineSettings() {
    EngineSettings d = EngineSettings.defaults();
    return d.withStrictQueueOrder(!backfill)
        .withReservations(d.reservationTimeoutMillis(), reserve ? d.maxReservations() : 0);
  }

  @Override
  public Map<String, String> queueConf(ClusterSpec cluster) {
    Map<String, String> conf = borrow ? cluster.queueConf() : Policies.withoutBorrowing(cluster);
    if (!shortest) {
      return conf;
    }
    Map<String, String> ordered = new java.util.LinkedHashMap<>(conf);
    ordered.put(ClusterSpecs.key("root." + io.spindle.core.queue.AppOrdering.SPINDLE_KEY), "shortest-first");
    return ordered;
  }

  @Override
  public String engineQueue(SimJob job) {
    return job.queue();
  }

  @Override
  public boolean isolatesPartitions() {
    return !pool;
  }

  @Override
  public PlacementSpec placement(SimJob job, Members members, int gpusPerNode, long declaredRuntimeMillis) {
    return Policies.gangSpec(job, members, gpusPerNode, runtimes ? declaredRuntimeMillis : 0);
  }
}
