package io.spindle.launcher;

import java.util.List;

/**
 * Where Spindle placed one worker: its container, node (YARN's node id, {@code host:port}: two NodeManagers may share
 * a host, as in a test cluster), the node's host name (what other workers connect to), rack path and the GPUs it
 * holds there, with each GPU's NVLink island (same order as {@code gpus}; empty when the node reports none).
 */
public record WorkerSlot(String containerId, String node, String host, String rack, List<Integer> gpus,
    List<Integer> islands) {

  public WorkerSlot {
    gpus = List.copyOf(gpus);
    islands = List.copyOf(islands);
    if (!islands.isEmpty() && islands.size() != gpus.size()) {
      throw new IllegalArgumentException("one NVLink island per GPU: " + gpus + " vs " + islands);
    }
  }

  /** The lowest NVLink island of the worker's GPUs, or -1 without GPUs or islands. */
  int firstIsland() {
    return islands.stream().mapToInt(Integer::intValue).min().orElse(-1);
  }

  int firstGpu() {
    return gpus.stream().mapToInt(Integer::intValue).min().orElse(-1);
  }
}
