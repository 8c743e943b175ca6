package io.spindle.core.model;

import java.util.List;
import java.util.TreeSet;

/**
 * The GPU models a request accepts: one, several ("one of", written {@code A100-80GB|H100-80GB} as OpenB's
 * {@code gpu_spec} writes it) or any. Names are kept sorted, so equal sets compare equal whatever order they were
 * written in.
 */
public record GpuModelSet(List<String> names) {

  public static final GpuModelSet ANY = new GpuModelSet(List.of());

  public GpuModelSet {
    TreeSet<String> sorted = new TreeSet<>();
    for (String n : names) {
      if (n == null || n.isBlank()) {
        throw new InvalidInputException("gpuModel", String.join("|", names), "empty model name in the set");
      }
      sorted.add(n.strip());
    }
    names = List.copyOf(sorted);
  }

  /** A set from its text ({@code null} or blank for any), models separated by {@code |}. */
  public static GpuModelSet parse(String text) {
    if (text == null || text.isBlank()) {
      return ANY;
    }
    String[] parts = text.split("\\|", -1);
    return new GpuModelSet(List.of(parts));
  }

  public static GpuModelSet of(String... names) {
    return new GpuModelSet(List.of(names));
  }

  public boolean isAny() {
    return names.isEmpty();
  }

  /** Whether a GPU of this model serves the request. */
  public boolean accepts(String modelName) {
    if (names.isEmpty()) {
      return true;
    }
    // A loop, not contains(): placement asks this per node, and sets are one to a few names.
    for (String n : names) {
      if (n.equals(modelName)) {
        return true;
      }
    }
    return false;
  }

  public boolean accepts(GpuModel model) {
    return model != null && accepts(model.name());
  }

  /** The text form, {@code null} for any (what records and reports carry). */
  public String text() {
    return names.isEmpty() ? null : String.join("|", names);
  }

  @Override
  public String toString() {
    return names.isEmpty() ? "any" : String.join("|", names);
  }
}
