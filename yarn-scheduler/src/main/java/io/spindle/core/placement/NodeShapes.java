package io.spindle.core.placement;

import io.spindle.core.model.GpuIsolation;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Node;
import io.spindle.core.model.Resources;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The distinct capacities of the registered nodes, counted: what tells at once, without looking at any node,
 * whether a container could ever fit in the cluster.
 */
final class NodeShapes {

  /**
   * Distinct node capacities, to tell at once whether a container could ever fit.
   *
   * @param sharedGpus GPUs in a sharing mode; {@code mpsGpus} of them in MPS mode
   */
  private record NodeShape(long memoryMb, int vcores, GpuModel model, int wholeGpus, int migGpus, String partition,
      int sharedGpus, int mpsGpus) {}

  private final Map<NodeShape, Integer> shapes = new LinkedHashMap<>();

  void add(Node node) {
    shapes.merge(shapeOf(node), 1, Integer::sum);
  }

  void remove(Node node) {
    shapes.computeIfPresent(shapeOf(node), (k, v) -> v == 1 ? null : v - 1);
  }

  /**
   * Why no registered node could hold this container even when empty, or {@code null} if one could. Used to
   * reject impossible requests at once rather than leave them pending forever.
   */
  String whyNever(Resources shape) {
    if (shapes.isEmpty()) {
      return null; // Nodes are still registering; nothing is impossible yet.
    }
    int mostGpus = 0;
    long mostMemory = 0;
    int mostVcores = 0;
    boolean partitionSeen = false;
    boolean shareIsolationSeen = false;
    long shareMemory = 0;
    Set<String> migModels = new LinkedHashSet<>();
    for (NodeShape n : shapes.keySet()) {
      if (!n.partition().equals(shape.partition())) {
        continue;
      }
      partitionSeen = true;
      mostMemory = Math.max(mostMemory, n.memoryMb());
      mostVcores = Math.max(mostVcores, n.vcores());
      boolean modelOk = shape.models().isAny() || shape.models().accepts(n.model());
      if (modelOk) {
        mostGpus = Math.max(mostGpus, n.wholeGpus());
      }
      if (shape.memoryMb() > n.memoryMb() || shape.vcores() > n.vcores() || !modelOk) {
        continue;
      }
      if (shape.wantsShare()) {
        int offering = shape.isolation() == GpuIsolation.MPS ? n.mpsGpus() : n.sharedGpus();
        if (offering > 0 && shape.gpuMemoryMb() <= n.model().memoryMb()) {
          return null;
        }
        if (offering > 0) {
          shareMemory = Math.max(shareMemory, n.model().memoryMb());
        }
        shareIsolationSeen |= offering > 0;
      } else if (shape.wantsMig()) {
        MigProfile profile = n.model() == null || n.migGpus() == 0
            ? null : n.model().profile(shape.migProfile()).orElse(null);
        if (profile != null) {
          migModels.add(n.model().name());
          if (shape.migInstances() <= (long) n.migGpus() * MigLayout.empty(n.model()).placeable(profile)) {
            return null;
          }
        }
      } else if (shape.gpus() <= n.wholeGpus()) {
        return null;
      }
    }
    if (!partitionSeen) {
      return null; // No node carries the label yet: the request waits for one, as in CapacityScheduler.
    }
    if (shape.memoryMb() > mostMemory || shape.vcores() > mostVcores) {
      return "no node in the cluster is that large: the largest offers " + mostMemory + " MB and " + mostVcores
          + " vcores, the container asks " + shape;
    }
    if (shape.wantsShare()) {
      return shareIsolationSeen
          ? "no GPU that can be shared has " + shape.gpuMemoryMb() + " MB of memory; the largest has " + shareMemory
          : "no node in the cluster has a GPU in "
              + (shape.isolation() == GpuIsolation.MPS ? "MPS mode" : "a sharing mode (time-slice or mps)")
              + (shape.models().isAny() ? "" : " of model " + shape.models())
              + (shape.isolation() == GpuIsolation.MPS ? ", which isolation=mps needs" : "")
              + "; shares of a GPU need one (see the admin guide, shared GPUs)";
    }
    if (shape.wantsMig()) {
      return migModels.isEmpty()
          ? "no node in the cluster has a MIG-mode GPU offering profile " + shape.migProfile()
              + (shape.models().isAny() ? "" : " on " + shape.models())
          : "no node can hold " + shape.migInstances() + " instances of " + shape.migProfile() + " in one container";
    }
    return "no node in the cluster has " + shape.gpus() + " whole GPU(s)"
        + (shape.models().isAny() ? "" : " of model " + shape.models()) + "; the most on one node is " + mostGpus;
  }

  private static NodeShape shapeOf(Node node) {
    int mig = (int) node.gpus().stream().filter(g -> g.migEnabled()).count();
    int shared = (int) node.gpus().stream().filter(g -> g.sharesBelowWhole()).count();
    int mps = (int) node.gpus().stream().filter(g -> g.sharesBelowWhole() && g.sharing() == GpuSharing.MPS).count();
    return new NodeShape(node.memoryMb(), node.vcores(), node.gpuModel(), node.gpus().size() - mig, mig,
        node.partition(), shared, mps);
  }
}
