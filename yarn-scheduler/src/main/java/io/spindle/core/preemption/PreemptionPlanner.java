package io.spindle.core.preemption;

import io.spindle.core.model.ResourceVector;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Chooses victims for waiting requests, one cycle at a time. Built from one snapshot (queues with their fair shares
 * and projected usage, running work, the cluster's free capacity); a function of that snapshot, the needs asked for
 * in order, and the probe's answers.
 *
 * <p><b>Who may be taken.</b> A victim of another leaf queue only for a need whose queue has starved below its fair
 * share ({@link Need#crossQueue}); a victim of the need's own leaf only if its application has a lower priority, or
 * if it is members an elastic gang grew by ({@link Candidate#elastic}): those were lent capacity nobody waited for,
 * and any waiting request of their queue may have it back; or, in a queue that preempts by its ordering
 * ({@link Need#reorders}), if it has the need's priority and ranks strictly after it ({@link Candidate#rank}; for a
 * need that has waited its starvation bound, was submitted after it) and is {@link Candidate#reorderable} (it has
 * run its minimum run time and has not waited its starvation bound). A need is never growth (growth only takes idle capacity),
 * so no gang is shrunk to grow another, and no gang is shrunk below its minimum by these rules.
 * With every victim of a plan taken and the need placed, writing {@code u} for a queue's projected usage before,
 * {@code u'} after, {@code f} for its fair share and {@code ds} for dominant share:
 * <ul>
 *   <li>every queue on a victim's side below the lowest common ancestor with the need's queue is strictly above its
 *       fair share before ({@code ds(u) > ds(f)}) and at or above it after ({@code ds(u') >= ds(f)}): nothing is taken
 *       from a queue at or below its fair share, and no victim queue is pushed below it;
 *   <li>every queue on the need's side below that ancestor is at or below its fair share after
 *       ({@code ds(u') <= ds(f)}): nothing is given to a queue that would then be above its own;
 *   <li>no queue that has a sibling goes from at-or-above its fair share to below it — which covers the ancestors,
 *       whose usage falls when a victim frees more than the need takes, and preemption inside one queue;
 *   <li>no queue on the need's path goes over its maximum, nor the need's user over the user limit.
 * </ul>
 * These are what make preemption loop-free (docs/architecture.md, "Preemption").
 *
 * <p><b>Only what is needed.</b> Candidates are added in {@link VictimOrder} until the probe says the need fits;
 * then each chosen victim, the most expensive first, is put back if the need still fits without it. So every victim
 * of a plan is necessary, and a need that would not fit even with every eligible victim gone gets no plan at all.
 */
public final class PreemptionPlanner {

  private final ResourceVector capacity;
  private final Map<String, QueueView> queues = new LinkedHashMap<>();
  private final Map<String, ResourceVector> usage = new LinkedHashMap<>();
  private final List<Candidate> ordered;
  private final Set<Long> taken = new HashSet<>();
  private final ResourceVector free;

  /**
   * @param capacity the whole cluster, against which dominant shares are measured
   * @param free what no container holds now (the probe's starting point); only used to skip hopeless probes
   * @param candidates running work that is in no reclaim yet, in any order
   */
  public PreemptionPlanner(ResourceVector capacity, Collection<QueueView> queueViews, ResourceVector free,
      Collection<Candidate> candidates, long nowMillis) {
    this.capacity = capacity;
    this.free = free;
    for (QueueView q : queueViews) {
      queues.put(q.path(), q);
      usage.put(q.path(), q.usage());
    }
    List<Candidate> list = new ArrayList<>(candidates);
    list.sort(VictimOrder.at(nowMillis, this::distanceAboveFairShare));
    this.ordered = list;
  }

  /** Dominant share of projected usage minus that of fair share; positive above, negative below. */
  public double distanceAboveFairShare(String queue) {
    QueueView q = queues.get(queue);
    return q == null ? 0 : ds(usage.get(queue)) - ds(q.fairShare());
  }

  /** Strictly below its fair share, as the planner projects it (reclaims already planned counted in). */
  public boolean belowFairShare(String queue) {
    QueueView q = queues.get(queue);
    return q != null && ds(usage.get(queue)) < ds(q.fairShare());
  }

  /** The candidates in the order victims are tried. */
  public List<Candidate> order() {
    return List.copyOf(ordered);
  }

  /**
   * Victims for {@code need}, or empty when no allowed set makes it fit or the set would exceed {@code maxVictims}.
   * A plan found is taken into this planner's projection (its victims leave their queues, the need joins its queue),
   * so later needs of the same cycle are planned against it.
   */
  public Optional<Plan> plan(Need need, CapacityProbe probe, int maxVictims) {
    List<Candidate> chosen = new ArrayList<>();
    ResourceVector freed = ResourceVector.ZERO;
    boolean fits = false;
    try {
      for (Candidate c : need.reorders() ? reorderedFirst(need) : ordered) {
        if (taken.contains(c.unitId()) || !eligible(need, c) || !probe.mayHelp(c)) {
          continue;
        }
        chosen.add(c);
        // Only the rules that more victims can never repair decide whether a victim may be added; the others (the
        // need's side, maxima, the user limit) can only get easier with more victims and are checked on the set.
        if (!victimsAllowed(need, chosen)) {
          chosen.remove(chosen.size() - 1);
          continue;
        }
        probe.free(c);
        freed = freed.plus(c.charge());
        // A probe costs a placement search; skip it while the freed total cannot hold the need anyway.
        if (need.charge().fitsIn(free.plus(freed)) && allowed(need, chosen) && probe.fits(need)) {
          fits = true;
          break;
        }
      }
      if (fits) {
        for (int i = chosen.size() - 1; i >= 0; i--) {
          Candidate c = chosen.get(i);
          List<Candidate> without = new ArrayList<>(chosen);
          without.remove(i);
          if (!allowed(need, without)) {
            continue;
          }
          probe.restore(c);
          if (probe.fits(need)) {
            chosen = without;
          } else {
            probe.free(c);
          }
        }
      }
    } finally {
      for (Candidate c : chosen) {
        probe.restore(c);
      }
    }
    if (!fits || chosen.size() > maxVictims) {
      return Optional.empty();
    }
    Plan plan = new Plan(need, chosen);
    accept(plan);
    return Optional.of(plan);
  }

  /**
   * The candidates for a need of a queue that preempts by its ordering: those its ordering may take, the last in the
   * order first (the most attained service, the most run time left), as the ordering would have served them last;
   * then the rest in {@link VictimOrder}.
   */
  private List<Candidate> reorderedFirst(Need need) {
    List<Candidate> byOrder = new ArrayList<>();
    List<Candidate> rest = new ArrayList<>();
    for (Candidate c : ordered) {
      (c.queue().equals(need.queue()) && c.reorderable() && ranksAfter(c, need) ? byOrder : rest).add(c);
    }
    // Stable: equal ranks keep the victim order (the least work since a checkpoint first).
    byOrder.sort(java.util.Comparator.comparingLong(Candidate::rank).reversed());
    byOrder.addAll(rest);
    return byOrder;
  }

  private void accept(Plan plan) {
    for (Map.Entry<String, ResourceVector> d : delta(plan.need(), plan.victims()).entrySet()) {
      usage.merge(d.getKey(), d.getValue(), ResourceVector::plus);
    }
    for (Candidate c : plan.victims()) {
      taken.add(c.unitId());
    }
  }

  /** The quick filter: which kind of victim the need may have at all. */
  private boolean eligible(Need need, Candidate c) {
    if (c.queue().equals(need.queue())) {
      return !c.appId().equals(need.appId()) && (c.priority() < need.priority() || c.elastic()
          || takenByOrder(need, c));
    }
    return need.crossQueue() && queues.containsKey(c.queue()) && distanceAboveFairShare(c.queue()) > 0;
  }

  /** Whether taking all of {@code victims} and placing {@code need} keeps every rule of the class comment. */
  boolean allowed(Need need, List<Candidate> victims) {
    return victimsAllowed(need, victims) && needSideAllowed(need, victims);
  }

  /**
   * The rules about what is taken: victims' queues strictly above their fair share and not below it after, and no
   * queue with a sibling pushed from at-or-above its fair share to below it. Each victim added can only break them.
   */
  private boolean victimsAllowed(Need need, List<Candidate> victims) {
    Map<String, ResourceVector> delta = delta(need, victims);
    for (Candidate v : victims) {
      if (v.queue().equals(need.queue())) {
        continue;
      }
      String lca = lowestCommonAncestor(v.queue(), need.queue());
      for (String x = v.queue(); !x.equals(lca); x = queues.get(x).parent()) {
        double fair = ds(queues.get(x).fairShare());
        if (!(ds(usage.get(x)) > fair) || ds(usage.get(x).plus(delta.get(x))) < fair) {
          return false;
        }
      }
    }
    boolean reordering = reorderingOnly(need, victims);
    for (Map.Entry<String, ResourceVector> d : delta.entrySet()) {
      QueueView q = queues.get(d.getKey());
      if (q.parent() == null || !q.hasSibling()) {
        continue; // Capacity a queue without siblings gives up can only go back into its own subtree.
      }
      if (reordering) {
        // A swap inside one queue by its ordering may leave it below its fair share by what the victims free beyond
        // the need: that capacity is the queue's to use first (it is now the furthest below its share), and any
        // sibling that takes it meanwhile is reclaimed from under the fair-share rules above, which never loop.
        continue;
      }
      double fair = ds(q.fairShare());
      if (ds(usage.get(q.path())) >= fair && ds(usage.get(q.path()).plus(d.getValue())) < fair) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether the queue's ordering puts {@code c} after {@code need}: a strictly higher rank, or, for a need that has
   * waited its starvation bound, a later submission (it takes back what overtook it, never what came before).
   */
  private static boolean ranksAfter(Candidate c, Need need) {
    return need.rank() == Need.AGED ? c.submitMillis() > need.submitMillis() : c.rank() > need.rank();
  }

  /** Whether {@code c} is of the need's queue and priority and may be taken by that queue's ordering. */
  private static boolean takenByOrder(Need need, Candidate c) {
    return need.reorders() && c.queue().equals(need.queue()) && c.reorderable() && c.priority() == need.priority()
        && ranksAfter(c, need);
  }

  /** Whether every victim is taken by the ordering of the need's own queue (none for priority or growth). */
  private static boolean reorderingOnly(Need need, List<Candidate> victims) {
    for (Candidate v : victims) {
      if (!takenByOrder(need, v)) {
        return false;
      }
    }
    return !victims.isEmpty();
  }

  /** The rules about what is given: the need's side stays within its fair share, its maxima and its user limit. */
  private boolean needSideAllowed(Need need, List<Candidate> victims) {
    Map<String, ResourceVector> delta = delta(need, victims);
    for (Candidate v : victims) {
      if (v.queue().equals(need.queue())) {
        continue;
      }
      String lca = lowestCommonAncestor(v.queue(), need.queue());
      for (String x = need.queue(); !x.equals(lca); x = queues.get(x).parent()) {
        if (ds(usage.get(x).plus(delta.get(x))) > ds(queues.get(x).fairShare())) {
          return false;
        }
      }
    }
    for (String x = need.queue(); x != null; x = queues.get(x).parent()) {
      if (!withinWhereGrowing(usage.get(x).plus(delta.get(x)), queues.get(x).maximum(), delta.get(x))) {
        return false;
      }
    }
    if (need.userLimit() != null) {
      ResourceVector after = need.userUsage().plus(need.charge());
      for (Candidate v : victims) {
        if (v.queue().equals(need.queue()) && v.user().equals(need.user())) {
          after = after.minus(v.charge());
        }
      }
      if (!withinWhereGrowing(after, need.userLimit(), need.charge())) {
        return false;
      }
    }
    return true;
  }

  /** Net change of every queue's usage if the plan were carried out, by path (every ancestor included). */
  private Map<String, ResourceVector> delta(Need need, List<Candidate> victims) {
    Map<String, ResourceVector> delta = new LinkedHashMap<>();
    for (Candidate v : victims) {
      for (String x = v.queue(); x != null; x = queues.get(x).parent()) {
        delta.merge(x, v.charge().times(-1), ResourceVector::plus);
      }
    }
    for (String x = need.queue(); x != null; x = queues.get(x).parent()) {
      delta.merge(x, need.charge(), ResourceVector::plus);
    }
    return delta;
  }

  /**
   * A limit binds only the dimensions a change grows: a queue already over its maximum in one resource (after a
   * reconfiguration) may still give up some of it.
   */
  private static boolean withinWhereGrowing(ResourceVector after, ResourceVector limit, ResourceVector change) {
    for (int i = 0; i < ResourceVector.DIMENSIONS; i++) {
      if (change.get(i) > 0 && after.get(i) > limit.get(i)) {
        return false;
      }
    }
    return true;
  }

  private String lowestCommonAncestor(String a, String b) {
    Set<String> ancestorsOfA = new HashSet<>();
    for (String x = a; x != null; x = queues.get(x).parent()) {
      ancestorsOfA.add(x);
    }
    String x = b;
    while (!ancestorsOfA.contains(x)) {
      x = queues.get(x).parent();
    }
    return x;
  }

  private double ds(ResourceVector v) {
    return v.dominantShare(capacity);
  }
}
