package io.spindle.sim;

import io.spindle.core.queue.QueueConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An urgent workload injected into a trace, for preemption studies: a leaf queue {@value #QUEUE} guaranteed a share
 * of the cluster (taken from the other top-level queues in proportion), and short multi-GPU jobs submitted to it at
 * random over the trace's submission span — a Poisson stream conditioned on its count: the arrival times are
 * {@code jobs} uniform draws, sorted. The other queues keep borrowing up to their maximum, so the urgent queue's
 * guarantee is often lent out when its jobs arrive, and only preemption gives it back quickly.
 *
 * <p>The engine has no queue priorities: what lets an urgent job take GPUs from other queues is its queue's
 * guarantee (the engine reclaims for a queue below its fair share, from queues above theirs).
 */
public final class UrgentJobs {

  public static final String QUEUE = "urgent";

  /**
   * @param jobs how many urgent jobs (0: none, and no urgent queue)
   * @param share the urgent queue's guarantee as a fraction of the cluster
   * @param gpus GPUs of a job, drawn uniformly from this list
   * @param minMillis shortest run time (run times are uniform between the two, whole seconds)
   * @param maxMillis longest run time
   */
  public record Spec(int jobs, double share, List<Integer> gpus, long minMillis, long maxMillis) {

    public Spec {
      gpus = List.copyOf(gpus);
      if (jobs < 0 || !(share > 0 && share < 1) || gpus.isEmpty() || gpus.stream().anyMatch(g -> g < 1)
          || minMillis < 1000 || maxMillis < minMillis) {
        throw new IllegalArgumentException("urgent jobs: need --urgent-jobs >= 0, 0 < --urgent-share < 1, "
            + "--urgent-gpus of positive counts, and 1 s <= shortest <= longest run time; got " + jobs + ", " + share
            + ", " + gpus + ", " + minMillis + ".." + maxMillis + " ms");
      }
    }

    /** 20% of the cluster, 8-, 16- or 32-GPU jobs of 10 to 60 minutes. */
    public static Spec of(int jobs) {
      return new Spec(jobs, 0.2, List.of(8, 16, 32), 600_000, 3_600_000);
    }
  }

  private static final Pattern ABSOLUTE_ENTRY = Pattern.compile("([a-zA-Z.\\-/]+)=([0-9.]+)");

  private UrgentJobs() {}

  /**
   * The cluster with the urgent queue: every top-level queue's guarantee scaled by {@code 1 - share}, and the urgent
   * queue guaranteed {@code share} (in the same form as the first of them, percent or absolute GPUs), maximum 100%,
   * no user limit. Nodes are unchanged and the urgent queue owns no partition.
   */
  public static ClusterSpec addQueue(ClusterSpec cluster, double share) {
    if (cluster.leafNames().contains(QUEUE)) {
      throw new IllegalArgumentException("the cluster already has a queue named " + QUEUE);
    }
    Map<String, String> conf = new LinkedHashMap<>(cluster.queueConf());
    List<String> top = new ArrayList<>();
    for (QueueConfig q : cluster.queueTree().all()) {
      if ("root".equals(q.parentPath())) {
        top.add(q.name());
      }
    }
    boolean absolute = false;
    for (int i = 0; i < top.size(); i++) {
      String key = ClusterSpecs.key("root." + top.get(i) + ".capacity");
      String value = conf.getOrDefault(key, "0").strip();
      if (i == 0) {
        absolute = value.startsWith("[");
      }
      if (value.startsWith("[")) {
        conf.put(key, scaleAbsolute(value, 1 - share));
      } else {
        conf.put(key, number(Double.parseDouble(value) * (1 - share)));
      }
    }
    conf.put(ClusterSpecs.key("root.queues"), String.join(",", top) + "," + QUEUE);
    conf.put(ClusterSpecs.key("root." + QUEUE + ".capacity"), absolute
        ? "[yarn.io/gpu=" + (long) Math.floor(cluster.totalGpus() * share + 1e-9) + "]" : number(share * 100));
    conf.put(ClusterSpecs.key("root." + QUEUE + ".maximum-capacity"), "100");
    conf.put(ClusterSpecs.key("root." + QUEUE + ".user-limit-factor"), "-1");
    return new ClusterSpec(cluster.name() + " + " + QUEUE + " " + number(share * 100) + "%", cluster.catalog(),
        cluster.topology(), cluster.nodes(), conf, cluster.partitions());
  }

  /** Each amount of an absolute capacity times {@code factor}, rounded down to a whole number. */
  private static String scaleAbsolute(String value, double factor) {
    Matcher m = ABSOLUTE_ENTRY.matcher(value);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      long scaled = (long) Math.floor(Double.parseDouble(m.group(2)) * factor + 1e-9);
      m.appendReplacement(out, m.group(1) + "=" + scaled);
    }
    m.appendTail(out);
    return out.toString();
  }

  private static String number(double v) {
    return String.format(Locale.ROOT, "%.4f", v).replaceAll("0+$", "").replaceAll("\\.$", "");
  }

  /**
   * The trace with the urgent jobs merged in submit order (a trace job and an urgent job submitted in the same
   * millisecond: the trace job first). Drawn from {@code seed} alone, so every policy of a run replays the same ones.
   */
  public static Trace inject(Trace trace, Spec spec, long seed) {
    if (spec.jobs() == 0 || trace.jobs().isEmpty()) {
      return trace;
    }
    List<SimJob> jobs = trace.jobs();
    long from = jobs.get(0).submitMillis();
    long span = jobs.get(jobs.size() - 1).submitMillis() - from;
    // Not the stream DeclaredRuntimes draws from with the same seed.
    Random rnd = new Random(seed * 0x9E3779B97F4A7C15L + 0x75726765L);
    long[] at = new long[spec.jobs()];
    for (int i = 0; i < at.length; i++) {
      at[i] = from + (long) Math.floor(rnd.nextDouble() * span);
    }
    java.util.Arrays.sort(at);
    List<SimJob> urgent = new ArrayList<>();
    for (int i = 0; i < at.length; i++) {
      int gpus = spec.gpus().get(rnd.nextInt(spec.gpus().size()));
      long seconds = spec.minMillis() / 1000
          + (long) Math.floor(rnd.nextDouble() * ((spec.maxMillis() - spec.minMillis()) / 1000 + 1));
      urgent.add(SimJob.gpuJob(String.format(Locale.ROOT, "urgent-%04d", i + 1), at[i], seconds * 1000, QUEUE, gpus));
    }
    List<SimJob> merged = new ArrayList<>(jobs.size() + urgent.size());
    int u = 0;
    for (SimJob j : jobs) {
      while (u < urgent.size() && urgent.get(u).submitMillis() < j.submitMillis()) {
        merged.add(urgent.get(u++));
      }
      merged.add(j);
    }
    merged.addAll(urgent.subList(u, urgent.size()));
    return new Trace(trace.source(), trace.mapping(), merged, trace.dropped());
  }
}
