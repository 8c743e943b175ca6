package io.spindle.nm;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * When each GPU last had an instance handed to a container. A container's first process starts some seconds after
 * its devices are chosen; until then nvidia-smi shows the GPU idle, so a GPU counts as reserved for a grace period
 * after every allocation and re-partitioning waits it out. After that, running processes are the evidence.
 */
public final class RecentAllocations {

  private final long graceMillis;
  private final Map<Integer, Long> lastAllocation = new ConcurrentHashMap<>();

  public RecentAllocations(long graceMillis) {
    this.graceMillis = graceMillis;
  }

  public void allocated(int gpuIndex, long nowMillis) {
    lastAllocation.put(gpuIndex, nowMillis);
  }

  /** The container runtime says the devices are free again (Hadoop calls this for Docker containers only). */
  public void released(int gpuIndex) {
    lastAllocation.remove(gpuIndex);
  }

  public boolean reserved(int gpuIndex, long nowMillis) {
    Long at = lastAllocation.get(gpuIndex);
    return at != null && nowMillis - at < graceMillis;
  }
}
