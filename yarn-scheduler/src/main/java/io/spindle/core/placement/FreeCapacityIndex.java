package io.spindle.core.placement;

import io.spindle.core.model.GpuModel;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * The nodes ordered by free capacity, where whole-GPU and CPU-only containers find their best fit: one ordered set of
 * all nodes and, once a second GPU model registers, one per model. With one model the per-model set would hold what
 * the set of all holds (less CPU-only nodes, which a GPU request never reaches) at the price of a second ordered-set
 * update on every start and end, so until then a model's lookups use the set of all.
 */
final class FreeCapacityIndex {

  // Hand-written rather than Comparator.comparing chains: these run on every placement, in every TreeSet step.
  // Free MIG slices come second so that a container without GPUs goes where no GPU capacity is left to strand (a
  // CPU-only node, or GPUs all in use) even when every GPU is in MIG mode, where free whole GPUs are 0 everywhere.
  static final Comparator<NodeState> BY_FREE_CAPACITY = (a, b) -> {
    if (a.freeWholeGpus != b.freeWholeGpus) {
      return Integer.compare(a.freeWholeGpus, b.freeWholeGpus);
    }
    if (a.freeMigSlices != b.freeMigSlices) {
      return Integer.compare(a.freeMigSlices, b.freeMigSlices);
    }
    if (a.freeMemoryMb != b.freeMemoryMb) {
      return Long.compare(a.freeMemoryMb, b.freeMemoryMb);
    }
    if (a.freeVcores != b.freeVcores) {
      return Integer.compare(a.freeVcores, b.freeVcores);
    }
    return Integer.compare(a.seq, b.seq);
  };

  private final TreeSet<NodeState> all = new TreeSet<>(BY_FREE_CAPACITY);
  private final Map<String, TreeSet<NodeState>> byModel = new HashMap<>();
  /** GPU nodes per model name, registered and still here. */
  private final Map<String, Integer> gpuNodesByModel = new HashMap<>();
  private boolean perModel;

  /** A node registered (before it is first added). */
  void registered(NodeState node) {
    GpuModel model = node.node.gpuModel();
    if (model == null || gpuNodesByModel.merge(model.name(), 1, Integer::sum) > 1 || gpuNodesByModel.size() < 2
        || perModel) {
      return;
    }
    perModel = true;
    for (NodeState indexed : all) {
      if (indexed.node.gpuModel() != null) {
        byModel.computeIfAbsent(indexed.node.gpuModel().name(), k -> new TreeSet<>(BY_FREE_CAPACITY)).add(indexed);
      }
    }
  }

  /** A node left (after it was removed). */
  void unregistered(NodeState node) {
    if (node.node.gpuModel() != null) {
      gpuNodesByModel.computeIfPresent(node.node.gpuModel().name(), (k, v) -> v == 1 ? null : v - 1);
    }
  }

  void add(NodeState node) {
    all.add(node);
    if (perModel && node.node.gpuModel() != null) {
      byModel.computeIfAbsent(node.node.gpuModel().name(), k -> new TreeSet<>(BY_FREE_CAPACITY)).add(node);
    }
  }

  void remove(NodeState node) {
    all.remove(node);
    if (perModel && node.node.gpuModel() != null) {
      byModel.get(node.node.gpuModel().name()).remove(node);
    }
  }

  TreeSet<NodeState> all() {
    return all;
  }

  /**
   * Where to search for nodes of one GPU model, {@code null} if none registered: the set of all while the cluster has
   * one model (the caller skips CPU-only nodes when a shape names models).
   */
  TreeSet<NodeState> ofModel(String model) {
    if (perModel) {
      return byModel.get(model);
    }
    return gpuNodesByModel.containsKey(model) ? all : null;
  }
}
