package io.spindle.core.preemption;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.AppId;
import io.spindle.core.model.ResourceVector;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The planner against a toy cluster (a pool of GPUs; a need fits when enough are free) and hand-made queues on a
 * 16-GPU cluster. Memory and vcores are kept tiny, so dominant shares are GPU shares.
 */
class PreemptionPlannerTest {

  private static final ResourceVector CLUSTER = ResourceVector.of(1_000_000, 1_000, 16);
  private static final long NOW = 1_000_000;

  /** A pool of free GPUs; counts frees and restores so a test can check it was left as found. */
  private static final class Pool implements CapacityProbe {
    long free;
    int probes;

    Pool(long freeGpus) {
      this.free = freeGpus;
    }

    @Override
    public void free(Candidate victim) {
      free += victim.charge().gpuUnits() / ResourceVector.GPU_UNITS;
    }

    @Override
    public void restore(Candidate victim) {
      free -= victim.charge().gpuUnits() / ResourceVector.GPU_UNITS;
    }

    @Override
    public boolean fits(Need need) {
      probes++;
      return free * ResourceVector.GPU_UNITS >= need.charge().gpuUnits();
    }
  }

  private static ResourceVector gpus(int n) {
    return ResourceVector.of(n, n, n);
  }

  private static QueueView queue(String path, String parent, boolean sibling, int fair, int used) {
    return new QueueView(path, parent, sibling, gpus(fair), gpus(16), gpus(used));
  }

  /** root (16) -> a, b: a holds {@code a}, b holds {@code b}; fair shares as given. */
  private static List<QueueView> flat(int fairA, int usedA, int fairB, int usedB) {
    return List.of(queue("root", null, false, 16, usedA + usedB), queue("root.a", "root", true, fairA, usedA),
        queue("root.b", "root", true, fairB, usedB));
  }

  private static Candidate unit(long id, String queue, int priority, int gpus, long start) {
    return new Candidate(id, AppId.of("app" + id), "r", queue, "u", priority, gpus(gpus), start, Long.MIN_VALUE, List.of(id));
  }

  private static Need need(String queue, int priority, int gpus, boolean cross) {
    return new Need(AppId.of("needy"), "r", queue, "u", priority, gpus(gpus), 1, false, cross, ResourceVector.ZERO, null);
  }

  private static PreemptionPlanner planner(List<QueueView> queues, long freeGpus, Candidate... candidates) {
    return new PreemptionPlanner(CLUSTER, queues, gpus((int) freeGpus), List.of(candidates), NOW);
  }

  @Test
  void takesTheCheapestVictimsThatMakeItFitAndPutsBackThoseNotNeeded() {
    // b borrows 12 of 16 (fair 6); a holds 4 of its fair 8 and needs 4 more. Cheapest first: two 1-GPU units of
    // about 10 GPU-s, a 4-GPU unit of 48 GPU-s, a 6-GPU unit of 6,000 GPU-s.
    Candidate small1 = unit(1, "root.b", 0, 1, NOW - 10_000);
    Candidate small2 = unit(2, "root.b", 0, 1, NOW - 11_000);
    Candidate big = unit(3, "root.b", 0, 4, NOW - 12_000);
    Candidate old = unit(4, "root.b", 0, 6, 0);
    Pool pool = new Pool(0);
    Optional<Plan> plan = planner(flat(8, 4, 6, 12), 0, small1, small2, big, old)
        .plan(need("root.a", 0, 4, true), pool, 16);
    // Greedy: small1 (1), small2 (2), big (6 free: fits). Then from the most expensive back: without big, 2 free:
    // no; without small2, 5: fits, dropped; without small1, 4: fits, dropped. Only what is needed.
    assertThat(plan).hasValueSatisfying(p -> assertThat(p.victims()).containsExactly(big));
    assertThat(pool.free).as("the probe is left as found").isZero();
  }

  @Test
  void nothingWhenTheNeedCannotFitEvenWithEveryEligibleVictimGone() {
    Pool pool = new Pool(0);
    // b may give at most 12 - 8 = 4 GPUs; a needs 5 (and its fair share allows it: 3 + 5 = 8).
    Optional<Plan> plan = planner(flat(8, 3, 8, 12), 0, unit(1, "root.b", 0, 2, 0), unit(2, "root.b", 0, 2, 0),
        unit(3, "root.b", 0, 2, 0)).plan(need("root.a", 0, 5, true), pool, 16);
    assertThat(plan).isEmpty();
    assertThat(pool.free).isZero();
  }

  @Test
  void neverFromAQueueAtOrBelowItsFairShareNorToOneThatWouldEndAboveItsOwn() {
    // b is exactly at its fair share: nothing may be taken from it.
    assertThat(planner(flat(8, 4, 12, 12), 0, unit(1, "root.b", 0, 1, 0))
        .plan(need("root.a", 0, 1, true), new Pool(0), 16)).isEmpty();
    // b is above, but a would end above its own fair share (7 + 2 > 8).
    assertThat(planner(flat(8, 7, 8, 9), 0, unit(1, "root.b", 0, 1, 0), unit(2, "root.b", 0, 1, 0))
        .plan(need("root.a", 0, 2, true), new Pool(0), 16)).isEmpty();
    // b above by 1: one GPU may go, two may not (b would fall below its fair share).
    assertThat(planner(flat(8, 6, 8, 9), 0, unit(1, "root.b", 0, 2, 0))
        .plan(need("root.a", 0, 2, true), new Pool(0), 16)).isEmpty();
    assertThat(planner(flat(8, 6, 8, 9), 0, unit(1, "root.b", 0, 1, 0))
        .plan(need("root.a", 0, 1, true), new Pool(0), 16)).isPresent();
  }

  @Test
  void otherQueuesOnlyForAStarvedQueueAndItsOwnQueueOnlyBelowItsPriority() {
    List<QueueView> queues = flat(8, 4, 8, 12);
    assertThat(planner(queues, 0, unit(1, "root.b", 0, 1, 0))
        .plan(need("root.a", 0, 1, false), new Pool(0), 16)).as("not starved long enough").isEmpty();
    // Inside a: equal priority is no reason; lower is.
    Candidate same = unit(2, "root.a", 3, 1, 0);
    Candidate lower = unit(3, "root.a", 2, 1, 0);
    assertThat(planner(queues, 0, same).plan(need("root.a", 3, 1, false), new Pool(0), 16)).isEmpty();
    assertThat(planner(queues, 0, same, lower).plan(need("root.a", 3, 1, false), new Pool(0), 16))
        .hasValueSatisfying(p -> assertThat(p.victims()).containsExactly(lower));
  }

  @Test
  void insideAQueueWithSiblingsAPriorityReclaimMayNotDropTheQueueBelowItsFairShare() {
    // a is at its fair share (8); a 1-GPU high-priority need. Taking a 4-GPU low-priority gang would leave a at 5:
    // the 3 GPUs it frees beyond the need would go to b, and a would then have to reclaim them. A 1-GPU victim is fine.
    List<QueueView> queues = flat(8, 8, 8, 8);
    assertThat(planner(queues, 0, unit(1, "root.a", 0, 4, 0)).plan(need("root.a", 5, 1, false), new Pool(0), 16))
        .isEmpty();
    assertThat(planner(queues, 0, unit(1, "root.a", 0, 4, 0), unit(2, "root.a", 0, 1, NOW - 1))
        .plan(need("root.a", 5, 1, false), new Pool(0), 16))
        .hasValueSatisfying(p -> assertThat(p.victims()).extracting(Candidate::unitId).containsExactly(2L));
    // Without siblings nobody else could take the surplus: allowed.
    List<QueueView> alone = List.of(queue("root", null, false, 16, 16), queue("root.q", "root", false, 16, 16));
    assertThat(planner(alone, 0, unit(1, "root.q", 0, 4, 0)).plan(need("root.q", 5, 1, false), new Pool(0), 16))
        .isPresent();
  }

  @Test
  void aParentThatWouldFallBelowItsFairShareProtectsItsChildren() {
    // root -> p (fair 8, holds 8) -> x (fair 2, holds 6), y (fair 6, holds 2); root -> c (fair 8, holds 8).
    // y is starved and may take from x (x stays at or above 2), and p's usage does not change: allowed. But c may
    // not be served from x: p would fall from 8 to 7, below its fair share.
    List<QueueView> queues = List.of(queue("root", null, false, 16, 16), queue("root.p", "root", true, 8, 8),
        queue("root.p.x", "root.p", true, 2, 6), queue("root.p.y", "root.p", true, 6, 2),
        queue("root.c", "root", true, 9, 8));
    assertThat(planner(queues, 0, unit(1, "root.p.x", 0, 1, 0)).plan(need("root.p.y", 0, 1, true), new Pool(0), 16))
        .isPresent();
    assertThat(planner(queues, 0, unit(1, "root.p.x", 0, 1, 0)).plan(need("root.c", 0, 1, true), new Pool(0), 16))
        .isEmpty();
  }

  @Test
  void plansOfOneCycleSeeEachOther() {
    // a may grow by 2 (6 -> 8), b may give 4 (12 -> 8): two 1-GPU needs get a victim each, the third none.
    PreemptionPlanner p = planner(flat(8, 6, 8, 12), 0, unit(1, "root.b", 0, 1, 0), unit(2, "root.b", 0, 1, 0),
        unit(3, "root.b", 0, 1, 0));
    List<Long> taken = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      p.plan(need("root.a", 0, 1, true), new Pool(0), 16).ifPresent(plan -> taken.add(plan.victims().get(0).unitId()));
    }
    assertThat(taken).hasSize(2).doesNotHaveDuplicates();
    assertThat(p.belowFairShare("root.a")).isFalse();
  }

  @Test
  void aPlanLargerThanTheCapIsNotMade() {
    Candidate[] ones = {unit(1, "root.b", 0, 1, 0), unit(2, "root.b", 0, 1, 0), unit(3, "root.b", 0, 1, 0)};
    assertThat(planner(flat(8, 4, 8, 12), 0, ones).plan(need("root.a", 0, 3, true), new Pool(0), 2)).isEmpty();
    assertThat(planner(flat(8, 4, 8, 12), 0, ones).plan(need("root.a", 0, 3, true), new Pool(0), 3)).isPresent();
  }

  @Test
  void freeCapacityCountsAndProbesAreSkippedWhileTheFreedTotalCannotHoldTheNeed() {
    Pool pool = new Pool(2);
    Optional<Plan> plan = planner(flat(8, 4, 8, 10), 2, unit(1, "root.b", 0, 1, 0), unit(2, "root.b", 0, 1, 0),
        unit(3, "root.b", 0, 1, 0)).plan(need("root.a", 0, 4, true), pool, 16);
    assertThat(plan).hasValueSatisfying(p -> assertThat(p.victims()).hasSize(2));
    // No probe until the second victim makes the 4 GPUs; none while trying victims back, since without either
    // the cluster would have to hold 17 of 16 GPUs.
    assertThat(pool.probes).isEqualTo(1);
  }
}
