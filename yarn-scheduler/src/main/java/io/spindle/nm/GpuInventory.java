package io.spindle.nm;

import java.util.List;
import java.util.Optional;

/** The GPUs of this node that Spindle can hand out, as one discovery found them. Empty when discovery failed. */
public record GpuInventory(List<DiscoveredGpu> gpus) {

  private static final GpuInventory EMPTY = new GpuInventory(List.of());

  public GpuInventory {
    gpus = List.copyOf(gpus);
  }

  public static GpuInventory empty() {
    return EMPTY;
  }

  public boolean isEmpty() {
    return gpus.isEmpty();
  }

  public Optional<DiscoveredGpu> gpu(int index) {
    return gpus.stream().filter(g -> g.index() == index).findFirst();
  }

  /** GPUs without MIG mode: the ones whole-GPU containers get. */
  public List<DiscoveredGpu> wholeGpus() {
    return gpus.stream().filter(g -> !g.migEnabled()).toList();
  }

  /** GPUs in MIG mode. */
  public List<DiscoveredGpu> migGpus() {
    return gpus.stream().filter(DiscoveredGpu::migEnabled).toList();
  }
}
