package io.spindle.core.placement;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Plans new MIG layouts for idle GPUs when requests wait for a profile that no free instance can serve.
 *
 * <p>Only GPUs with no instance in use and no re-partition in flight are considered: running work is never
 * touched. Needs are served largest profile first (big instances are the hardest to fit), one instance at a time,
 * each where the {@link MigSlotPolicy} puts it among the layouts planned so far plus one fresh idle GPU, so several
 * small needs share a GPU instead of each taking one. Space left on a planned GPU is then filled with more
 * instances of the profiles asked for. What a planned GPU had before was idle, so nothing is lost.
 */
public final class MigRepartitionPlanner {

  /** {@code instances} more instances of the shape's profile are needed; the shape says what else the node needs. */
  public record Need(Resources shape, int instances) {}

  /** Re-partition this GPU to this layout. */
  public record Plan(String nodeId, int gpuIndex, MigLayout layout) {}

  private final MigSlotPolicy policy;

  public MigRepartitionPlanner(MigSlotPolicy policy) {
    this.policy = policy;
  }

  /**
   * @param maxGpus at most this many GPUs are re-partitioned in one call, so one burst of requests cannot take
   *     every idle GPU out of service at once
   */
  public List<Plan> plan(ClusterState cluster, List<Need> needs, int maxGpus) {
    List<Candidate> idle = idleGpus(cluster);
    List<GpuModel> models = new ArrayList<>();
    for (Candidate c : idle) {
      if (models.stream().noneMatch(m -> m.sameModel(c.gpu.gpu.model()))) {
        models.add(c.gpu.gpu.model());
      }
    }
    Map<String, Long> charge = new LinkedHashMap<>();
    for (Need n : needs) {
      String name = n.shape().migProfile();
      charge.put(name, models.stream().map(m -> m.profile(name)).filter(java.util.Optional::isPresent)
          .mapToLong(p -> p.get().gpuUnits()).max().orElse(0));
    }
    List<Need> ordered = new ArrayList<>(needs);
    ordered.sort(Comparator.comparingLong((Need n) -> -charge.get(n.shape().migProfile()))
        .thenComparing(n -> n.shape().migProfile()));
    Map<MigGpuState, Candidate> planned = new LinkedHashMap<>();
    int[] freshCursor = new int[models.size()];
    for (Need need : ordered) {
      for (int k = 0; k < need.instances(); k++) {
        if (!placeOne(need.shape(), models, planned, idle, freshCursor, maxGpus)) {
          break;
        }
      }
    }
    fillRemainingSpace(planned.values(), ordered);
    List<Plan> out = new ArrayList<>();
    for (Candidate c : planned.values()) {
      // Re-partitioning a GPU to what it already has takes it out of service for nothing; repeated every cycle it
      // is a livelock.
      if (!c.layout.equals(c.gpu.configured())) {
        out.add(new Plan(c.node.id(), c.gpu.gpu.index(), c.layout));
      }
    }
    return out;
  }

  private boolean placeOne(Resources shape, List<GpuModel> models, Map<MigGpuState, Candidate> planned,
      List<Candidate> idle, int[] freshCursor, int maxGpus) {
    for (int m = 0; m < models.size(); m++) {
      GpuModel model = models.get(m);
      if (shape.gpuModel() != null && !shape.gpuModel().equals(model.name())) {
        continue;
      }
      MigProfile profile = model.profile(shape.migProfile()).orElse(null);
      if (profile == null) {
        continue;
      }
      List<Candidate> options = new ArrayList<>();
      for (Candidate c : planned.values()) {
        if (c.gpu.gpu.model().sameModel(model) && c.node.fitsCpuAndMemory(shape)) {
          options.add(c);
        }
      }
      // Idle GPUs are taken in order and never handed back, so a cursor per model finds the next one.
      Candidate fresh = null;
      if (planned.size() < maxGpus) {
        for (int i = freshCursor[m]; i < idle.size(); i++) {
          Candidate c = idle.get(i);
          if (!planned.containsKey(c.gpu) && c.gpu.gpu.model().sameModel(model) && c.node.fitsCpuAndMemory(shape)) {
            fresh = c;
            break;
          }
        }
      }
      List<MigLayout> layouts = new ArrayList<>();
      options.forEach(c -> layouts.add(c.layout));
      if (fresh != null) {
        layouts.add(MigLayout.empty(model));
      }
      MigSlotPolicy.Choice choice = policy.choose(profile, layouts);
      if (choice == null) {
        continue;
      }
      MigPlacement placement = new MigPlacement(profile, choice.start());
      if (choice.option() < options.size()) {
        Candidate c = options.get(choice.option());
        c.layout = c.layout.with(placement);
      } else {
        fresh.layout = MigLayout.empty(model).with(placement);
        planned.put(fresh.gpu, fresh);
        freshCursor[m] = idle.indexOf(fresh) + 1;
      }
      return true;
    }
    return false;
  }

  /**
   * A re-partition takes a GPU out of service and, once containers run on it, it is not re-partitioned again
   * until they all end; so the space the needs left is filled now, with more instances of the profiles asked for
   * (largest first, where the slot policy puts them) — requests for the same profiles tend to keep coming.
   */
  private void fillRemainingSpace(Iterable<Candidate> planned, List<Need> needs) {
    for (Candidate c : planned) {
      boolean added = true;
      while (added) {
        added = false;
        for (Need need : needs) {
          MigProfile profile = c.gpu.gpu.model().profile(need.shape().migProfile()).orElse(null);
          if (profile == null || !c.node.fitsCpuAndMemory(need.shape())) {
            continue;
          }
          MigSlotPolicy.Choice choice = policy.choose(profile, List.of(c.layout));
          if (choice != null) {
            c.layout = c.layout.with(new MigPlacement(profile, choice.start()));
            added = true;
            break;
          }
        }
      }
    }
  }

  /**
   * Idle GPUs, those with no instance first: an idle GPU's free instances are ready for the next request of their
   * profile, and re-partitioning it destroys them, so such GPUs are taken last.
   */
  private static List<Candidate> idleGpus(ClusterState cluster) {
    List<Candidate> empty = new ArrayList<>();
    List<Candidate> partitioned = new ArrayList<>();
    for (NodeState node : cluster.migNodes()) {
      for (MigGpuState gpu : node.migGpus()) {
        if (gpu.idle()) {
          (gpu.configured().isEmpty() ? empty : partitioned).add(new Candidate(node, gpu));
        }
      }
    }
    empty.addAll(partitioned);
    return empty;
  }

  /** An idle GPU and the layout planned for it so far. */
  private static final class Candidate {
    final NodeState node;
    final MigGpuState gpu;
    MigLayout layout;

    Candidate(NodeState node, MigGpuState gpu) {
      this.node = node;
      this.gpu = gpu;
    }
  }
}
