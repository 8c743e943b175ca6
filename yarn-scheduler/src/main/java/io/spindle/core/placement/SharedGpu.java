package io.spindle.core.placement;

import io.spindle.core.model.Gpu;
import io.spindle.core.model.Resources;

/**
 * What is taken of one GPU in a sharing mode (time-slice or MPS): the compute and memory its shares hold. Mutable,
 * owned by its {@link NodeState}; {@link FreeComputeIndex} orders these by the free compute they were indexed with.
 */
final class SharedGpu {

  final Gpu gpu;
  final NodeState node;
  /** Position of the GPU in its node's GPU list. */
  final int position;
  final long memoryMb;
  int usedMilli;
  long usedMemoryMb;
  int shares;
  /** Whether {@link SharePlacer}'s index holds it, and under which free compute (its key there). */
  boolean indexed;
  int indexedFree;
  /** Its place in {@link FreeComputeIndex}'s bitmaps, given by {@link SharePlacer} when the node registers. */
  int slot = -1;
  /** Taken whole by a container that asked for whole GPUs: no share fits beside it. */
  boolean takenWhole;
  /** Out of service (failed, quarantined or cordoned): it takes nothing new, shares or whole. */
  boolean out;

  SharedGpu(Gpu gpu, NodeState node, int position) {
    this.gpu = gpu;
    this.node = node;
    this.position = position;
    this.memoryMb = gpu == null ? 0 : gpu.model().memoryMb();
  }

  int freeMilli() {
    return blocked() ? 0 : Resources.MILLI_PER_GPU - usedMilli;
  }

  long freeMemoryMb() {
    return blocked() ? 0 : memoryMb - usedMemoryMb;
  }

  /** Whether a share can go nowhere on it: a whole-GPU container holds it, or it is out of service. */
  boolean blocked() {
    return takenWhole || out;
  }

  /** Whether nothing is on it: then it serves a whole-GPU container too. */
  boolean idle() {
    return !blocked() && shares == 0;
  }

  /** Whether one more share of the shape fits here now. */
  boolean fits(Resources shape) {
    return !blocked() && shape.isolation().offeredBy(gpu.sharing())
        && shape.shareMilli(gpu.model()) <= freeMilli() && shape.gpuMemoryMb() <= freeMemoryMb();
  }

  /** How many shares of the shape would fit if it were empty. */
  int emptyCapacity(Resources shape) {
    if (!shape.isolation().offeredBy(gpu.sharing())) {
      return 0;
    }
    int milli = shape.shareMilli(gpu.model());
    long byCompute = milli == 0 ? Integer.MAX_VALUE : Resources.MILLI_PER_GPU / milli;
    long byMemory = shape.gpuMemoryMb() == 0 ? Integer.MAX_VALUE : memoryMb / shape.gpuMemoryMb();
    return (int) Math.min(byCompute, byMemory);
  }

  /** How many shares of the shape fit here now. */
  int capacity(Resources shape) {
    if (blocked() || !shape.isolation().offeredBy(gpu.sharing())) {
      return 0;
    }
    int milli = shape.shareMilli(gpu.model());
    long byCompute = milli == 0 ? Integer.MAX_VALUE : freeMilli() / milli;
    long byMemory = shape.gpuMemoryMb() == 0 ? Integer.MAX_VALUE : freeMemoryMb() / shape.gpuMemoryMb();
    return (int) Math.min(byCompute, byMemory);
  }
}
