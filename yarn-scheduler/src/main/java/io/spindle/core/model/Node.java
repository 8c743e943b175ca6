package io.spindle.core.model;

import static io.spindle.core.model.InvalidInputException.requireNonBlank;
import static io.spindle.core.model.InvalidInputException.requireNonNegative;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A worker node: where it sits in the topology, its memory and vcores, and its GPUs. All GPUs of a node are one
 * model (servers are built that way), which lets placement index nodes by model.
 *
 * @param location the node's parent in the topology, Hadoop-style ({@code /spine1/rack3})
 */
public record Node(NodeId id, String location, long memoryMb, int vcores, List<Gpu> gpus) {

  public Node {
    if (id == null) {
      throw new InvalidInputException("node.id", null, "must not be empty");
    }
    requireNonBlank("node.location", location);
    requireNonNegative("node.memoryMb", memoryMb);
    requireNonNegative("node.vcores", vcores);
    gpus = List.copyOf(gpus);
    Set<Integer> indices = new HashSet<>();
    for (Gpu g : gpus) {
      if (!indices.add(g.index())) {
        throw new InvalidInputException("node.gpus", id + "/gpu" + g.index(), "duplicate GPU index on node");
      }
      if (!g.model().equals(gpus.get(0).model())) {
        throw new InvalidInputException("node.gpus", id,
            "mixes GPU models " + gpus.get(0).model().name() + " and " + g.model().name()
                + "; Spindle models one GPU model per node");
      }
    }
  }

  /** The node's GPU model, or {@code null} for a CPU-only node. */
  public GpuModel gpuModel() {
    return gpus.isEmpty() ? null : gpus.get(0).model();
  }

  /** Capacity as an accounting vector: every GPU counts as one GPU-equivalent, MIG-mode or not. */
  public ResourceVector capacity() {
    return ResourceVector.of(memoryMb, vcores, gpus.size());
  }
}
