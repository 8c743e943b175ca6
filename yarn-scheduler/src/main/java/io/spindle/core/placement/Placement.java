package io.spindle.core.placement;

import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import java.util.List;

/**
 * Where one container goes: the node, the exact GPUs or MIG instances, and what it costs its queue.
 *
 * @param charge memory, vcores and GPU-equivalents the container is charged (a MIG instance by its slice size on
 *     this node's GPU model)
 */
public record Placement(NodeId nodeId, List<GpuSlot> gpus, ResourceVector charge) {

  public Placement {
    gpus = List.copyOf(gpus);
  }

  /** How many whole GPUs it holds (not MIG instances or shares): what its end frees for whole-GPU work. */
  public long wholeGpus() {
    long n = 0;
    for (GpuSlot s : gpus) {
      if (s.wholeGpu()) {
        n++;
      }
    }
    return n;
  }
}
