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
 * @param shortest every queue orders its jobs shortest run time left first ({@code spindle.ordering=
 *     shortest-first}): declared with {@code runtimes}, else learned from the finished jobs of the same queue (the
 *     trace's user) and GPU count
 * @param attained every queue orders its jobs least attained GPU service first ({@code spindle.ordering=
 *     least-attained}, two levels split at 18,000 GPU-seconds)
 * @param reorder with {@code shortest} or {@code attained}: a waiting job may take a running one of its queue that
 *     the ordering puts after it ({@code spindle.ordering.preemption=true}); needs a {@code +preempt-...} mode
 * @param learned with {@code reserve}: where a job declares no run time, reservations plan its drain with the run
 *     time learned from finished jobs of its queue and GPU count
 *     ({@code yarn.scheduler.spindle.gang.reservation-learned-runtimes})
 * @param maxWaitHours with {@code shortest} or {@code attained}: the starvation bound
 *     ({@code spindle.ordering.max-wait-seconds}) in hours, feature {@code maxwait<H>h}; {@code unguarded} is 0 (no
 *     bound); {@code -1}: the default
 */
public record SpindlePolicy(boolean backfill, boolean pool, boolean borrow, boolean reserve, boolean runtimes,
    boolean shortest, boolean attained, boolean reorder, boolean learned, int maxWaitHours) implements SimPolicy {

  static final List<String> FEATURES = List.of("backfill", "pool", "borrow", "reserve", "runtimes", "shortest",
      "attained", "reorder", "learned");
  private static final java.util.regex.Pattern MAX_WAIT = java.util.regex.Pattern.compile("maxwait(\\d+)h");
  /** Spindle's own features: {@code spindle} has them all, and the ordering features may be added to it. */
  private static final int BASE_FEATURES = 5;
  /** The order in which {@code --policy ablation} adds features. */
  static final List<String> ABLATION = List.of("spindle-helios", "spindle-helios+backfill",
      "spindle-helios+backfill+pool", "spindle-helios+backfill+pool+borrow",
      "spindle-helios+backfill+pool+borrow+reserve", "spindle");

  static SpindlePolicy parse(String name) {
    boolean full = name.equals("spindle") || name.startsWith("spindle+");
    if (!full && !name.startsWith("spindle-helios")) {
      throw new IllegalArgumentException("unknown policy '" + name + "'; policies are fifo, yarn, spindle-helios, "
          + "spindle, spindle-helios+<feature>... (features " + FEATURES + "), all, ablation, preempt-compare; "
          + "a spindle policy may end in +preempt-checkpoint or +preempt-kill-15s");
    }
    boolean[] f = new boolean[FEATURES.size()];
    int maxWaitHours = -1;
    if (full) {
      java.util.Arrays.fill(f, 0, BASE_FEATURES, true);
    }
    String rest = name.substring(full ? "spindle".length() : "spindle-helios".length());
    if (!rest.isEmpty()) {
      if (!rest.startsWith("+")) {
        throw new IllegalArgumentException("unknown policy '" + name + "'");
      }
      for (String feature : rest.substring(1).split("\\+")) {
        java.util.regex.Matcher wait = MAX_WAIT.matcher(feature);
        if (feature.equals("unguarded") || wait.matches()) {
          maxWaitHours = wait.matches() ? Integer.parseInt(wait.group(1)) : 0;
          continue;
        }
        int i = FEATURES.indexOf(feature);
        if (i < 0 || (full && i < BASE_FEATURES)) {
          throw new IllegalArgumentException("unknown feature '" + feature + "' in '" + name + "'; features are "
              + FEATURES);
        }
        f[i] = true;
      }
    }
    if ((f[7] || maxWaitHours >= 0) && !f[5] && !f[6]) {
      throw new IllegalArgumentException("'" + name + "': reorder, unguarded and maxwait<H>h need shortest or "
          + "attained");
    }
    if (f[8] && !f[3]) {
      throw new IllegalArgumentException("'" + name + "': learned needs reserve");
    }
    return new SpindlePolicy(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], maxWaitHours);
  }

  @Override
  public String name() {
    boolean[] f = {backfill, pool, borrow, reserve, runtimes, shortest, attained, reorder, learned};
    boolean full = backfill && pool && borrow && reserve && runtimes;
    StringBuilder s = new StringBuilder(full ? "spindle" : "spindle-helios");
    for (int i = full ? BASE_FEATURES : 0; i < f.length; i++) {
      if (f[i]) {
        s.append('+').append(FEATURES.get(i));
      }
    }
    if (maxWaitHours >= 0) {
      s.append(maxWaitHours == 0 ? "+unguarded" : "+maxwait" + maxWaitHours + "h");
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
      parts.add("each queue serves the shortest run time left first (spindle.ordering=shortest-first), "
          + (runtimes ? "declared" : "learned per queue and GPU count"));
    }
    if (attained) {
      parts.add("each queue serves the least attained GPU service first (spindle.ordering=least-attained)");
    }
    if (reorder) {
      parts.add("a job may preempt one of its queue that the ordering puts after it (spindle.ordering.preemption)");
    }
    if ((shortest || attained) && maxWaitHours != 0) {
      parts.add("a job that waited " + (maxWaitHours < 0
          ? io.spindle.core.queue.OrderingRules.DEFAULT_MAX_WAIT_SECONDS / 3600 : maxWaitHours)
          + " h goes first and takes back what overtook it (spindle.ordering.max-wait-seconds)");
    }
    return "engine, " + String.join(", ", parts) + "; multi-GPU jobs are gangs";
  }

  /** What the reservations do under these settings, in words: where their lifetime comes from. */
  private String reservations(EngineSettings s) {
    return "gangs reserve nodes (" + s.maxReservations() + " at most, on the nodes expected to drain soonest; held "
        + (runtimes ? "until the declared run times of what runs there end, " + s.reservationTimeoutMillis() / 1000
            + " s to " + s.reservationMaxDrainMillis() / 1000 + " s"
            : s.reservationLearnedRuntimes() ? "until the run times learned per queue and GPU count of what runs there "
                + "end, " + s.reservationTimeoutMillis() / 1000 + " s to " + s.reservationMaxDrainMillis() / 1000 + " s"
            : s.reservationTimeoutMillis() / 1000 + " s, the drain being unknown") + ")";
  }

  @Override
  public EngineSettings engineSettings() {
    EngineSettings d = EngineSettings.defaults();
    return d.withStrictQueueOrder(!backfill)
        .withReservations(d.reservationTimeoutMillis(), reserve ? d.maxReservations() : 0)
        .withReservationLearnedRuntimes(learned);
  }

  @Override
  public Map<String, String> queueConf(ClusterSpec cluster) {
    Map<String, String> conf = borrow ? cluster.queueConf() : Policies.withoutBorrowing(cluster);
    if (!shortest && !attained) {
      return conf;
    }
    Map<String, String> ordered = new java.util.LinkedHashMap<>(conf);
    ordered.put(ClusterSpecs.key("root." + io.spindle.core.queue.AppOrdering.SPINDLE_KEY),
        shortest ? "shortest-first" : "least-attained");
    if (reorder) {
      ordered.put(ClusterSpecs.key("root." + io.spindle.core.queue.OrderingRules.PREEMPT_KEY), "true");
    }
    if (maxWaitHours >= 0) {
      ordered.put(ClusterSpecs.key("root." + io.spindle.core.queue.OrderingRules.MAX_WAIT_KEY),
          Long.toString(maxWaitHours * 3600L));
    }
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
