package io.spindle.nm;

import io.spindle.core.model.GpuSharing;
import java.util.Optional;

/**
 * The GPU the scheduler gave a container's share, as it published it for this node.
 *
 * @param milli the compute share the scheduler counts, in thousandths of the GPU
 * @param memoryMb the share's GPU memory in MB; 0 when the request named none
 * @param sharing the GPU's mode as the scheduler knows it
 */
public record ShareAssignment(String containerId, int gpuIndex, int milli, long memoryMb, GpuSharing sharing) {

  /** Looks a container's assignment up by its id; empty when the scheduler published none (or it cannot be read). */
  @FunctionalInterface
  public interface Lookup {

    Optional<ShareAssignment> find(String containerId);

    /** For nodes without ZooKeeper: no container has an assignment, the node chooses by the scheduler's rule. */
    static Lookup none() {
      return containerId -> Optional.empty();
    }
  }
}
