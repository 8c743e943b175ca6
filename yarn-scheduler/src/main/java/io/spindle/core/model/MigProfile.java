package io.spindle.core.model;

import java.util.List;

/**
 * A MIG profile of one GPU model: its name in NVIDIA's naming ({@code 3g.40gb}), its NVML profile id, how many
 * compute and memory slices it takes, and the memory-slice positions it may start at.
 */
public record MigProfile(
    String name,
    int nvmlProfileId,
    int computeSlices,
    int memorySlices,
    List<Integer> legalStarts,
    int maxInstances,
    long gpuUnits) {

  public MigProfile {
    legalStarts = List.copyOf(legalStarts);
  }

  /** YARN resource-type name of this profile ({@code nvidia.com/mig-3g.40gb}). */
  public String resourceName() {
    return "nvidia.com/mig-" + name;
  }

  /** Bit mask of the memory slices an instance started at {@code start} occupies. */
  public int sliceMask(int start) {
    return ((1 << memorySlices) - 1) << start;
  }

  /** True for the media-extension variant, of which a GPU holds at most one. */
  public boolean mediaExtension() {
    return name.endsWith("+me");
  }

  public boolean isLegalStart(int start) {
    return legalStarts.contains(start);
  }
}
