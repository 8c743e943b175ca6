package io.spindle.sim;

import io.spindle.core.model.Gpu;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import java.util.HashMap;
import java.util.Map;

/**
 * Every MIG-mode GPU's memory slices as the decisions leave them: which instances exist and which are held. Counts
 * the slices that are not held on busy GPUs (a GPU with at least one held instance): the engine re-partitions only
 * idle GPUs, so those slices serve only a request for an instance that exists there — they are what a waiting MIG
 * request finds stranded. Idle GPUs are not counted: they can be re-partitioned.
 */
final class MigMirror {

  private static final class GpuSlices {
    final int slices;
    int heldMask;

    GpuSlices(int slices) {
      this.slices = slices;
    }
  }

  private final Map<String, GpuSlices> gpus = new HashMap<>();
  private long totalSlices;
  private long heldSlices;
  private long unheldOnBusy;

  MigMirror(Iterable<Node> nodes) {
    for (Node n : nodes) {
      for (Gpu g : n.gpus()) {
        if (g.migEnabled()) {
          gpus.put(key(n.id(), g.index()), new GpuSlices(g.model().memorySlices()));
          totalSlices += g.model().memorySlices();
        }
      }
    }
  }

  private static String key(NodeId node, int gpu) {
    return node + "#" + gpu;
  }

  boolean any() {
    return totalSlices > 0;
  }

  void hold(NodeId node, int gpu, MigPlacement instance) {
    change(node, gpu, instance.sliceMask(), true);
  }

  void release(NodeId node, int gpu, MigPlacement instance) {
    change(node, gpu, instance.sliceMask(), false);
  }

  private void change(NodeId node, int gpu, int mask, boolean hold) {
    GpuSlices g = gpus.get(key(node, gpu));
    if (g == null) {
      throw new IllegalStateException("MIG instance on " + node + " GPU " + gpu + ", which is not in MIG mode");
    }
    if (g.heldMask != 0) {
      unheldOnBusy -= g.slices - Integer.bitCount(g.heldMask);
    }
    heldSlices -= Integer.bitCount(g.heldMask);
    if (hold) {
      if ((g.heldMask & mask) != 0) {
        throw new IllegalStateException("MIG slices held twice on " + node + " GPU " + gpu);
      }
      g.heldMask |= mask;
    } else {
      g.heldMask &= ~mask;
    }
    heldSlices += Integer.bitCount(g.heldMask);
    if (g.heldMask != 0) {
      unheldOnBusy += g.slices - Integer.bitCount(g.heldMask);
    }
  }

  /** A re-partition only happens on an idle GPU; anything else is an engine defect the run must not hide. */
  void reconfigure(NodeId node, int gpu, MigLayout layout) {
    GpuSlices g = gpus.get(key(node, gpu));
    if (g == null || g.heldMask != 0) {
      throw new IllegalStateException("re-partition of " + node + " GPU " + gpu + " while it is busy or not MIG");
    }
  }

  long totalSlices() {
    return totalSlices;
  }

  long heldSlices() {
    return heldSlices;
  }

  /** Slices not held on GPUs that hold at least one instance. */
  long unheldOnBusyGpus() {
    return unheldOnBusy;
  }
}
