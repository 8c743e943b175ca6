package io.spindle.core.queue;

import io.spindle.core.model.ResourceVector;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * A queue's node labels (partitions) as CapacityScheduler reads them: {@code accessible-node-labels} (a list, {@code *}
 * for every label, blank for none; unset: the parent's, and every label at root) and, per label, {@code
 * accessible-node-labels.<label>.capacity} (default 0) and {@code .maximum-capacity} (default 100), percentages of the
 * parent's in that label, weights among the siblings that use the label ({@code 2w}), or absolute amounts. A queue
 * without access to a label is guaranteed none of it and may not ask for it.
 *
 * @param accessible the labels this queue may use, {@code null} where it takes its parent's
 * @param capacity configured capacities by label
 * @param maximum configured maximum capacities by label
 */
public record QueueLabels(Set<String> accessible, Map<String, Capacity> capacity, Map<String, Capacity> maximum) {

  /** CapacityScheduler's "every label". */
  public static final String ANY = "*";
  /** No label keys: the parent's labels, no guarantee in any. */
  public static final QueueLabels INHERIT = new QueueLabels(null, Map.of(), Map.of());

  private static final String KEY = "accessible-node-labels";

  public QueueLabels {
    accessible = accessible == null ? null : Set.copyOf(accessible);
    capacity = Map.copyOf(capacity);
    maximum = Map.copyOf(maximum);
  }

  /** Whether a queue with {@code access} (see {@link #access}) may use {@code label}. */
  public static boolean mayUse(Set<String> access, String label) {
    return access.contains(ANY) || access.contains(label);
  }

  /** This queue's access: its own, else {@code parentAccess} ({@code null} at root: every label). */
  public Set<String> access(Set<String> parentAccess) {
    return accessible != null ? accessible : parentAccess == null ? Set.of(ANY) : parentAccess;
  }

  /**
   * Reads {@code path}'s label keys from the configuration {@code c}.
   *
   * @throws QueueConfigException naming the key, for a capacity that is no capacity or a maximum below the capacity
   */
  static QueueLabels read(NavigableMap<String, String> c, String path) {
    String listKey = QueueConfigParser.key(path, KEY);
    String list = c.get(listKey);
    Set<String> accessible = list == null ? null : Arrays.stream(list.split(",")).map(String::strip)
        .filter(s -> !s.isEmpty()).collect(Collectors.toSet());
    String prefix = listKey + ".";
    Map<String, Capacity> capacity = new TreeMap<>();
    Map<String, Capacity> maximum = new TreeMap<>();
    for (Map.Entry<String, String> e : c.subMap(prefix, prefix + Character.MAX_VALUE).entrySet()) {
      String rest = e.getKey().substring(prefix.length());
      int dot = rest.lastIndexOf('.');
      if (dot <= 0) {
        continue;
      }
      String label = rest.substring(0, dot);
      String what = rest.substring(dot + 1);
      if (what.equals("capacity")) {
        capacity.put(label, QueueConfigParser.parseCapacity(e.getKey(), e.getValue()));
      } else if (what.equals("maximum-capacity") && !e.getValue().strip().equals("-1")) {
        maximum.put(label, QueueConfigParser.parseCapacity(e.getKey(), e.getValue()));
      }
    }
    for (Map.Entry<String, Capacity> m : maximum.entrySet()) {
      Capacity g = capacity.get(m.getKey());
      if (g instanceof Capacity.Percent gp && m.getValue() instanceof Capacity.Percent mp
          && mp.percent() + 1e-9 < gp.percent()) {
        throw new QueueConfigException(prefix + m.getKey() + ".maximum-capacity", "maximum-capacity " + mp.percent()
            + " is below the capacity " + gp.percent() + " of label " + m.getKey());
      }
    }
    return accessible == null && capacity.isEmpty() && maximum.isEmpty() ? INHERIT
        : new QueueLabels(accessible, capacity, maximum);
  }

  /**
   * Every queue's guarantee and maximum in partition {@code label}, whose nodes hold {@code partition}, top down as
   * {@link FairShareCalculator#resolveLimits} does for the default partition.
   */
  public static Map<String, FairShareCalculator.Limits> resolve(QueueTree tree, ResourceVector partition,
      String label) {
    Map<String, FairShareCalculator.Limits> out = new LinkedHashMap<>();
    Map<String, Set<String>> access = new LinkedHashMap<>();
    Map<String, Double> weights = new HashMap<>();
    for (QueueConfig q : tree.all()) {
      Set<String> parentAccess = q.parentPath() == null ? null : access.get(q.parentPath());
      Set<String> mine = q.labels().access(parentAccess);
      access.put(q.path(), mine);
      if (q.parentPath() == null) {
        out.put(q.path(), new FairShareCalculator.Limits(partition, partition));
        continue;
      }
      FairShareCalculator.Limits parent = out.get(q.parentPath());
      // Without access a queue is guaranteed nothing of the label; its maximum there still bounds what it borrows of
      // a non-exclusive label's idle nodes (CapacityScheduler reads both whatever the access).
      Capacity c = mayUse(mine, label) ? q.labels().capacity().getOrDefault(label, NONE) : NONE;
      if (c instanceof Capacity.Weight w) {
        double sum = weights.computeIfAbsent(q.parentPath(), p -> siblingWeights(tree, p, label));
        c = new Capacity.Percent(sum == 0 ? 0 : w.weight() * 100 / sum);
      }
      ResourceVector g = c.resolveGuarantee(parent.guarantee());
      ResourceVector m = q.labels().maximum().getOrDefault(label, ALL).resolveMaximum(parent.maximum());
      out.put(q.path(), new FairShareCalculator.Limits(g.min(parent.guarantee()),
          FairShareCalculator.max(m, g).min(parent.maximum())));
    }
    return out;
  }

  /** The labels the configuration names anywhere: in an accessible-node-labels list or a label's key. */
  static Set<String> configured(Collection<QueueConfig> queues) {
    Set<String> out = new TreeSet<>();
    for (QueueConfig q : queues) {
      QueueLabels l = q.labels();
      if (l.accessible() != null) {
        l.accessible().stream().filter(x -> !x.equals(ANY)).forEach(out::add);
      }
      out.addAll(l.capacity().keySet());
      out.addAll(l.maximum().keySet());
    }
    return out;
  }

  /**
   * Refuses, as CapacityScheduler does, children whose percentages in one of the configured {@code labels} add up to
   * neither 100 nor 0, or to 0 under a parent that has some of the label (root has all of each) unless the parent
   * sets {@code allow-zero-capacity-sum}. A capacity counts whether or not the child may use the label; unset is 0.
   * Siblings giving a label weights or absolute amounts are not summed.
   */
  static void checkChildren(QueueConfig parent, List<QueueConfig> kids, Set<String> labels, boolean allowZeroSum) {
    for (String label : labels) {
      double sum = 0;
      boolean percents = true;
      for (QueueConfig k : kids) {
        Capacity c = k.labels().capacity().get(label);
        if (c instanceof Capacity.Percent p) {
          sum += p.percent();
        } else if (c != null) {
          percents = false;
        }
      }
      Capacity own = parent.parentPath() == null ? ALL : parent.labels().capacity().getOrDefault(label, NONE);
      boolean parentHasSome = !(own instanceof Capacity.Percent p && p.percent() == 0);
      boolean zeroRefused = Math.abs(sum) <= 1e-3 && parentHasSome && !allowZeroSum;
      if (percents && (zeroRefused || (Math.abs(sum) > 1e-3 && Math.abs(sum - 100) > 1e-3))) {
        String first = kids.stream().filter(k -> k.labels().capacity().containsKey(label)).findFirst()
            .orElse(kids.get(0)).path();
        throw new QueueConfigException(QueueConfigParser.key(first, KEY + "." + label + ".capacity"),
            "capacities of the children of " + parent.path() + " in label " + label + " sum to "
                + (sum == Math.rint(sum) ? Long.toString((long) sum) : Double.toString(sum)) + ", not 100"
                + (zeroRefused ? " (0 only where " + parent.path() + " has none of the label, or sets "
                + "allow-zero-capacity-sum)" : " (or 0)"));
      }
    }
  }

  /** The labels the queue at {@code path} may use, its parents' where it sets none. */
  public static Set<String> accessOf(QueueTree tree, String path) {
    Set<String> access = null;
    for (int dot = path.indexOf('.'); ; dot = path.indexOf('.', dot + 1)) {
      String prefix = dot < 0 ? path : path.substring(0, dot);
      access = tree.get(prefix).map(QueueConfig::labels).orElse(INHERIT).access(access);
      if (dot < 0) {
        return access;
      }
    }
  }

  /** The weights {@code parent}'s children give themselves in {@code label}. */
  private static double siblingWeights(QueueTree tree, String parent, String label) {
    double sum = 0;
    for (QueueConfig child : tree.children(tree.get(parent).orElseThrow())) {
      if (child.labels().capacity().get(label) instanceof Capacity.Weight w) {
        sum += w.weight();
      }
    }
    return sum;
  }

  private static final Capacity NONE = new Capacity.Percent(0);
  private static final Capacity ALL = new Capacity.Percent(100);
}
