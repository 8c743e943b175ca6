package io.spindle.sim;

import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.core.queue.QueueConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The policies the simulator knows, by name. */
public final class Policies {

  private Policies() {}

  /** {@code preempt-compare}: Spindle without preemption, with YARN's kill after 15 s, and with checkpoints. */
  static final String PREEMPT_COMPARE = "spindle,spindle+" + PreemptionMode.KILL_AFTER_15_S.suffix() + ",spindle+"
      + PreemptionMode.CHECKPOINT.suffix();

  /** {@code elastic-compare}: rigid gangs against elastic ones, with preemption by checkpoint under both. */
  static final String ELASTIC_COMPARE = "spindle+" + PreemptionMode.CHECKPOINT.suffix() + ",spindle+"
      + PreemptionMode.CHECKPOINT.suffix() + "+" + ElasticPolicy.SUFFIX;

  /** The policies named, elastic ones with the default model. */
  public static List<SimPolicy> parse(String names) {
    return parse(names, SimOptions.defaults());
  }

  /**
   * {@code all}: the baselines and both Spindle modes; {@code ablation}: Spindle's features added one at a time;
   * {@code preempt-compare}: the two preemption handshakes against none; {@code elastic-compare}: rigid against
   * elastic gangs. A Spindle policy ending in {@code +elastic} makes gangs elastic as {@code options} say.
   */
  public static List<SimPolicy> parse(String names, SimOptions options) {
    List<SimPolicy> out = new ArrayList<>();
    for (String raw : names.split(",")) {
      String n = raw.strip();
      switch (n) {
        case "all" -> out.addAll(parse("fifo,yarn,spindle-helios,spindle", options));
        case "ablation" -> out.addAll(parse(String.join(",", SpindlePolicy.ABLATION), options));
        case "preempt-compare" -> out.addAll(parse(PREEMPT_COMPARE, options));
        case "elastic-compare" -> out.addAll(parse(ELASTIC_COMPARE, options));
        case "fifo" -> out.add(new FifoPolicy());
        case "yarn" -> out.add(new StockYarnPolicy());
        default -> out.add(n.endsWith("+" + ElasticPolicy.SUFFIX)
            ? new ElasticPolicy(spindle(n.substring(0, n.length() - ElasticPolicy.SUFFIX.length() - 1)),
                options.elastic(), options.seed())
            : spindle(n));
      }
    }
    // "all,ablation" names spindle-helios and spindle twice: run each once, in first-named order.
    Map<String, SimPolicy> unique = new LinkedHashMap<>();
    for (SimPolicy p : out) {
      unique.putIfAbsent(p.name(), p);
    }
    return new ArrayList<>(unique.values());
  }

  /** A Spindle policy, with {@code +preempt-...} at the end for preemption. */
  private static SimPolicy spindle(String name) {
    int plus = name.lastIndexOf('+');
    PreemptionMode mode = plus < 0 ? null : PreemptionMode.bySuffix(name.substring(plus + 1));
    if (mode == null) {
      return SpindlePolicy.parse(name);
    }
    return new PreemptingPolicy(SpindlePolicy.parse(name.substring(0, plus)), mode);
  }

  /** The cluster's queue keys with every queue's maximum-capacity set to its capacity: no queue may borrow. */
  static Map<String, String> withoutBorrowing(ClusterSpec cluster) {
    Map<String, String> conf = new LinkedHashMap<>(cluster.queueConf());
    for (QueueConfig q : cluster.queueTree().all()) {
      if (q.parentPath() == null) {
        continue;
      }
      String cap = conf.get(ClusterSpecs.key(q.path() + ".capacity"));
      conf.put(ClusterSpecs.key(q.path() + ".maximum-capacity"), cap == null ? "0" : cap);
    }
    return conf;
  }

  /** Multi-GPU jobs are gangs; one that fits on a node must stay on one node. */
  static PlacementSpec gangSpec(SimJob job, Members m, int gpusPerNode, long declaredRuntimeMillis) {
    PlacementSpec spec;
    if (job.gpus() <= 1 && m.count() == 1) {
      spec = PlacementSpec.SINGLE;
    } else if (m.count() > 1 && job.gpus() <= gpusPerNode) {
      spec = PlacementSpec.gang("node", true);
    } else {
      spec = PlacementSpec.gang(null, false);
    }
    return spec.withMaxRuntimeMillis(declaredRuntimeMillis);
  }
}
