package io.spindle.core.model;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A GPU product and its MIG geometry. Profiles are data from the catalog, never code, so a new product is one line.
 *
 * <p>A profile's charge in GPU-equivalents is {@code max(compute/totalCompute, memory/totalMemory)} of a whole GPU:
 * a slice costs what it denies others, and it denies both the compute and the memory it holds.
 */
public record GpuModel(
    String name, int memoryGb, int memorySlices, int computeSlices, List<MigProfile> profiles, List<String> aliases) {

  public GpuModel {
    profiles = List.copyOf(profiles);
    aliases = List.copyOf(aliases);
  }

  /** The GPU's memory in MB (the catalog's GB times 1024), what a share's memory amount is measured against. */
  public long memoryMb() {
    return memoryGb * 1024L;
  }

  public boolean migCapable() {
    return !profiles.isEmpty();
  }

  public Optional<MigProfile> profile(String profileName) {
    // A loop, not a stream: placement asks this for every GPU it looks at.
    for (MigProfile p : profiles) {
      if (p.name().equals(profileName)) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  /**
   * Whether {@code other} is this model. Models are told apart by name (a catalog refuses duplicates); the record's
   * own {@code equals} compares every profile and legal-start list, far too slow for placement's inner loops.
   */
  public boolean sameModel(GpuModel other) {
    return this == other || (other != null && name.equals(other.name));
  }

  public Map<String, MigProfile> profilesByName() {
    return profiles.stream().collect(Collectors.toMap(MigProfile::name, Function.identity()));
  }

  /** GPU units charged for an instance of {@code computes} compute and {@code memories} memory slices. */
  static long chargeUnits(int computes, int memories, int totalCompute, int totalMemory) {
    long byCompute = computes * ResourceVector.GPU_UNITS / totalCompute;
    long byMemory = memories * ResourceVector.GPU_UNITS / totalMemory;
    return Math.max(byCompute, byMemory);
  }
}
