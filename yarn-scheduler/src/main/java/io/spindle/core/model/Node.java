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
 * @param partition the node's partition (YARN node label), {@link #DEFAULT_PARTITION} for none: only requests of the
 *     same partition are placed on it
 * @param sharesIdle its label is non-exclusive (YARN's {@code exclusive=false}): what the label's own requests leave
 *     idle may also run requests of the default partition
 */
public record Node(NodeId id, String location, long memoryMb, int vcores, List<Gpu> gpus, String partition,
    boolean sharesIdle) {

  /** The partition of nodes without a label, and of requests that name none. */
  public static final String DEFAULT_PARTITION = "";

  /** A node of the default partition. */
  public Node(NodeId id, String location, long memoryMb, int vcores, List<Gpu> gpus) {
    this(id, location, memoryMb, vcores, gpus, DEFAULT_PARTITION, false);
  }

  /** A node of an exclusive partition. */
  public Node(NodeId id, String location, long memoryMb, int vcores, List<Gpu> gpus, String partition) {
    this(id, location, memoryMb, vcores, gpus, partition, false);
  }

  public Node {
    partition = partition == null ? DEFAULT_PARTITION : partition.strip();
    sharesIdle = sharesIdle && !partition.isEmpty();
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

  /** This node in the exclusive partition {@code p} (its label changed). */
  public Node withPartition(String p) {
    return withPartition(p, false);
  }

  /** This node in partition {@code p}, which lends its idle capacity to the default partition if {@code shares}. */
  public Node withPartition(String p, boolean shares) {
    return new Node(id, location, memoryMb, vcores, gpus, p, shares);
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
