package io.spindle.bench.soak;

import java.util.Set;
import org.apache.hadoop.yarn.api.records.Resource;

/**
 * One soak application: who submits it where, the containers it asks for (all at once, one request), how long it
 * holds them, and whether it launches a process in its first one.
 *
 * @param resource the GPU resource type of each container ({@code yarn.io/gpu}, {@code nvidia.com/mig-<profile>}),
 *     or null for a CPU-only container
 * @param amount how many of {@code resource} each container takes
 */
public record SoakJob(int index, Kind kind, String queue, String user, int containers, long memoryMb, int vcores,
    String resource, int amount, Set<String> tags, long holdMs, boolean launch) {

  /** The application shapes of the mix. */
  public enum Kind {
    /** A gang (tag {@code spindle.gang.size=N}) of 2 to 4 containers of 1 or 2 whole GPUs. */
    GANG,
    /** 1 or 2 containers of one MIG instance each. */
    MIG,
    /** One container of 1 or 2 whole GPUs. */
    GPU,
    /** One container without GPUs. */
    CPU
  }

  public SoakJob {
    tags = Set.copyOf(tags);
  }

  /** Each container's resources, as the AM asks for them. */
  public Resource capability() {
    Resource r = Resource.newInstance(memoryMb, vcores);
    if (resource != null) {
      r.setResourceValue(resource, amount);
    }
    return r;
  }
}
