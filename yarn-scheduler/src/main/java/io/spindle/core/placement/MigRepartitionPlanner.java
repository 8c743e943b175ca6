package io.spindle.core.placement;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Plans MIG layout changes for containers that wait for instances no node can give them now.
 *
 * <p>Containers are planned one at a time, in the order the needs come (the engine passes them in scheduling
 * order), each on one node that has its CPU and memory: see {@link MigPlanningPass}. A GPU with work on it may get
 * new instances beside the running ones, or lose unused ones in their way; a re-partition never destroys an instance
 * in use. Space left on a planned GPU is then filled by the recent demand mix (see
 * {@link #fillRemainingSpace}).
 */
public final class MigRepartitionPlanner {

  /** {@code containers} more containers of {@code shape} wait for MIG instances. */
  public record Need(Resources shape, int containers) {}

  /** Re-partition this GPU to this layout. */
  public record Plan(NodeId nodeId, int gpuIndex, MigLayout layout) {}

  /** How the waiting containers of one shape stand after planning. */
  public enum Status {
    /** Every one has instances free, on their way, or planned now. */
    COVERED,
    /** Some have none, and this cycle's re-partition budget is spent. */
    OUT_OF_BUDGET,
    /** Some have none, and no GPU on a node with room for the container can make them without destroying one in use. */
    NO_ROOM
  }

  /** The re-partitions to make, and how each shape among the needs stands. */
  public record Result(List<Plan> plans, Map<Resources, Status> status) {}

  private final MigSlotPolicy policy;

  public MigRepartitionPlanner(MigSlotPolicy policy) {
    this.policy = policy;
  }

  /**
   * @param maxGpus at most this many GPUs are re-partitioned in one call, so one burst of requests cannot take
   *     every GPU's free instances out of service at once
   * @param recent what the rest of a planned GPU is filled with
   */
  public Result plan(ClusterState cluster, List<Need> needs, int maxGpus, MigDemandMix recent) {
    MigPlanningPass pass = new MigPlanningPass(cluster, policy, maxGpus);
    Map<Resources, Status> status = new LinkedHashMap<>();
    for (Need need : needs) {
      Status before = status.get(need.shape());
      if (before != null && before != Status.COVERED) {
        continue; // Capacity only shrinks within a pass: a shape that found none finds none later.
      }
      int served = 0;
      while (served < need.containers() && pass.serve(need.shape())) {
        served++;
      }
      status.put(need.shape(), served == need.containers() ? Status.COVERED
          : pass.budgetLeft() ? Status.NO_ROOM : Status.OUT_OF_BUDGET);
    }
    List<Plan> out = new ArrayList<>();
    for (MigPlanningPass.Target t : pass.planned()) {
      fillRemainingSpace(t, recent);
      // Re-partitioning a GPU to what it already has takes it out of service for nothing; repeated every cycle it
      // is a livelock.
      if (!t.layout.equals(t.gpu.configured())) {
        out.add(new Plan(t.node.id(), t.gpu.gpu.index(), t.layout));
      }
    }
    return new Result(out, status);
  }

  /**
   * Fills the space a planned GPU has left with instances for the profiles asked for recently, so that the next
   * requests find instances ready instead of waiting for another re-partition. The space is apportioned in proportion
   * to the memory slices recently asked for each profile (D'Hondt: each next instance goes to the profile with the
   * most recent slices per slice it already got in this fill, among those the slot policy can still place), so a GPU
   * planned for one 4g.40gb gets the small and mid-size instances the queue has been asking for beside it. Profiles
   * with no recent demand get nothing: space no recent profile fits stays unpartitioned, for whatever comes.
   */
  private void fillRemainingSpace(MigPlanningPass.Target t, MigDemandMix recent) {
    GpuModel model = t.gpu.gpu.model();
    List<MigProfile> profiles = new ArrayList<>();
    Map<MigProfile, Long> weight = new LinkedHashMap<>();
    for (MigProfile p : model.profiles()) {
      long asked = recent.instancesByProfile().getOrDefault(p.name(), 0L);
      if (asked > 0) {
        profiles.add(p);
        weight.put(p, asked * p.memorySlices());
      }
    }
    Map<MigProfile, Long> given = new LinkedHashMap<>();
    for (MigProfile p : profiles) {
      given.put(p, 0L);
    }
    // w_a / (g_a + s_a) > w_b / (g_b + s_b), compared without division.
    Comparator<MigProfile> byQuotient = (a, b) -> Long.compare(
        weight.get(b) * (given.get(a) + a.memorySlices()), weight.get(a) * (given.get(b) + b.memorySlices()));
    boolean added = true;
    while (added) {
      added = false;
      profiles.sort(byQuotient.thenComparing(MigProfile::name));
      for (MigProfile profile : profiles) {
        MigSlotPolicy.Choice choice = policy.choose(profile, List.of(t.layout));
        if (choice != null) {
          t.layout = t.layout.with(new MigPlacement(profile, choice.start()));
          given.merge(profile, (long) profile.memorySlices(), Long::sum);
          added = true;
          break;
        }
      }
    }
  }
}
