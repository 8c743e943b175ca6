package io.spindle.core.placement;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Places containers on clusters with GPUs in a sharing mode, fragmentation first.
 *
 * <p>Shares are found through an index of shared GPUs ordered by free compute: a ceiling lookup at the share's size
 * lands on the GPUs it fits most tightly, and the first {@code candidates} distinct nodes from there (with the
 * CPU, memory, partition and isolation the share needs) are the candidates — never a scan of the cluster. Whole-GPU
 * and CPU-only containers get their candidates from {@link ClusterState}'s best-fit index. Among the candidates the
 * container goes where {@link FragmentationScore} grows least for the recent demand mix; ties go to the earlier
 * candidate, i.e. the tighter fit.
 */
final class SharePlacer {

  private static final Comparator<SharedGpu> BY_FREE_COMPUTE = (a, b) -> {
    int fa = a.node == null ? a.position : a.freeMilli();
    int fb = b.node == null ? b.position : b.freeMilli();
    if (fa != fb) {
      return Integer.compare(fa, fb);
    }
    int sa = a.node == null ? Integer.MIN_VALUE : a.node.seq;
    int sb = b.node == null ? Integer.MIN_VALUE : b.node.seq;
    if (sa != sb) {
      return Integer.compare(sa, sb);
    }
    return Integer.compare(a.node == null ? -1 : a.position, b.node == null ? -1 : b.position);
  };

  private final TreeSet<SharedGpu> all = new TreeSet<>(BY_FREE_COMPUTE);
  private final Map<String, TreeSet<SharedGpu>> byModel = new HashMap<>();
  private final GpuDemandMix mix;
  private final FragmentationScore scratch = new FragmentationScore();
  private final int candidates;
  private int sharedGpus;

  SharePlacer(GpuDemandMix mix, int candidates) {
    if (candidates <= 0) {
      throw new IllegalArgumentException("share placement candidates must be positive: " + candidates);
    }
    this.mix = mix;
    this.candidates = candidates;
  }

  int candidates() {
    return candidates;
  }

  /** Whether any GPU of the cluster is in a sharing mode: only then does fragmentation steer placement. */
  boolean active() {
    return sharedGpus > 0;
  }

  void asked(Resources shape, long containers) {
    mix.record(shape, containers);
  }

  void nodeAdded(NodeState n) {
    sharedGpus += n.sharedGpus().size();
  }

  void nodeRemoved(NodeState n) {
    sharedGpus -= n.sharedGpus().size();
  }

  void index(NodeState n) {
    for (SharedGpu g : n.sharedGpus()) {
      if (g.freeMilli() > 0) {
        all.add(g);
        byModel.computeIfAbsent(g.gpu.model().name(), k -> new TreeSet<>(BY_FREE_COMPUTE)).add(g);
      }
    }
  }

  void unindex(NodeState n) {
    for (SharedGpu g : n.sharedGpus()) {
      if (all.remove(g)) {
        byModel.get(g.gpu.model().name()).remove(g);
      }
    }
  }

  /**
   * The best place for one share, or {@code null} when no shared GPU has room for it now. Candidates are GPUs: the
   * tightest fits from the index of shared GPUs, and an idle shared GPU on each of {@code idleNodes} (the best-fit
   * nodes with an idle GPU), since opening a fresh GPU can fragment less than filling a partly used one.
   */
  Placement findShare(Resources shape, List<NodeState> idleNodes) {
    List<SharedGpu> options = new ArrayList<>();
    Set<SharedGpu> seen = new java.util.HashSet<>();
    SharedGpu probe = probe(Math.max(1, shape.gpuMilli()));
    if (shape.models().isAny()) {
      collect(all, probe, shape, options, seen);
    } else {
      for (String model : shape.models().names()) {
        TreeSet<SharedGpu> set = byModel.get(model);
        if (set != null) {
          collect(set, probe, shape, options, seen);
        }
      }
    }
    for (NodeState n : idleNodes) {
      for (SharedGpu g : n.sharedGpus()) {
        if (g.idle() && g.fits(shape)) {
          if (seen.add(g)) {
            options.add(g);
          }
          break;
        }
      }
    }
    SharedGpu best = bestGpu(options, shape);
    if (best == null) {
      return null;
    }
    return new Placement(best.node.id(), List.of(GpuSlot.shareOf(best.gpu.index())),
        charge(shape, best.gpu.model()));
  }

  private void collect(TreeSet<SharedGpu> set, SharedGpu probe, Resources shape, List<SharedGpu> out,
      Set<SharedGpu> seen) {
    int taken = 0;
    for (SharedGpu g : set.tailSet(probe, true)) {
      if (taken >= candidates) {
        return;
      }
      if (g.fits(shape) && g.node.fitsCpuAndMemory(shape) && seen.add(g)) {
        out.add(g);
        taken++;
      }
    }
  }

  private SharedGpu bestGpu(List<SharedGpu> options, Resources shape) {
    if (options.isEmpty()) {
      return null;
    }
    List<GpuDemandMix.Weighted> types = mix.types();
    if (options.size() == 1 || types.isEmpty()) {
      return options.get(0);
    }
    SharedGpu best = null;
    double bestDelta = Double.POSITIVE_INFINITY;
    for (SharedGpu g : options) {
      scratch.load(g.node);
      double before = scratch.score(types);
      scratch.takeCpu(shape.vcores(), shape.memoryMb());
      scratch.takeShare(FragmentationScore.loadedIndex(g.node, g.position), shape.shareMilli(g.gpu.model()),
          shape.gpuMemoryMb());
      double delta = coarse(scratch.score(types) - before);
      if (delta < bestDelta - 1e-9) {
        best = g;
        bestDelta = delta;
      }
    }
    return best;
  }

  /**
   * The candidate where placing one container of the shape adds the least fragmentation; the earlier one on ties.
   * {@code null} when there is none.
   */
  NodeState best(List<NodeState> options, Resources shape) {
    if (options.isEmpty()) {
      return null;
    }
    List<GpuDemandMix.Weighted> types = mix.types();
    if (options.size() == 1 || types.isEmpty()) {
      return options.get(0);
    }
    NodeState best = null;
    double bestDelta = Double.POSITIVE_INFINITY;
    for (NodeState n : options) {
      double delta = coarse(delta(n, shape, types));
      if (delta < bestDelta - 1e-9) {
        best = n;
        bestDelta = delta;
      }
    }
    return best;
  }

  private double delta(NodeState n, Resources shape, List<GpuDemandMix.Weighted> types) {
    scratch.load(n);
    double before = scratch.score(types);
    scratch.takeCpu(shape.vcores(), shape.memoryMb());
    if (shape.gpus() > 0) {
      List<GpuSlot> slots = n.chooseWholeGpus(shape.gpus());
      for (GpuSlot s : slots) {
        scratch.takeWhole(FragmentationScore.loadedIndex(n, n.positionOf(s.gpuIndex())));
      }
    }
    return scratch.score(types) - before;
  }

  private static final double GRAIN = Double.parseDouble(System.getProperty("spindle.grain", "0"));

  private static double coarse(double d) {
    return GRAIN <= 0 ? d : Math.floor(d / GRAIN);
  }

  /** What one share costs on a GPU of the model: the container's CPU and memory and the share's GPU-equivalents. */
  static ResourceVector charge(Resources shape, GpuModel model) {
    return shape.baseVector().plus(new ResourceVector(0, 0, shape.shareUnits(model)));
  }

  private static SharedGpu probe(int freeMilli) {
    return SharedGpu.probe(freeMilli);
  }
}
