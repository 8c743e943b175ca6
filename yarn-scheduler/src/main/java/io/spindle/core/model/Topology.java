package io.spindle.core.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The network tree above nodes, with named levels from the top ({@code spine > rack}). Locations are Hadoop-style
 * paths with one segment per level ({@code /spine1/rack3}), as {@code net.topology.script.file.name} prints them.
 * Below the last level sit nodes, and inside a node its NVLink islands.
 */
public record Topology(List<String> levels, Set<String> locations, boolean open) {

  /** Hadoop's rack for nodes no script has placed. */
  public static final String DEFAULT_RACK = "/default-rack";

  public Topology {
    levels = List.copyOf(levels);
    if (levels.isEmpty()) {
      throw new InvalidInputException("topology.levels", levels, "at least one level above nodes is needed");
    }
    Set<String> seenLevels = new LinkedHashSet<>();
    for (String level : levels) {
      InvalidInputException.requireNonBlank("topology.levels", level);
      if (!seenLevels.add(level)) {
        throw new InvalidInputException("topology.levels", level, "duplicate level name");
      }
    }
    Set<String> checked = new LinkedHashSet<>();
    for (String location : locations) {
      List<String> segments = segments(location);
      if (segments.size() != levels.size()) {
        throw new InvalidInputException("topology.location", location,
            "has " + segments.size() + " segment(s); levels " + levels + " need " + levels.size());
      }
      checked.add(location);
    }
    locations = Collections.unmodifiableSet(checked);
  }

  /** A closed topology: only these locations exist. */
  public Topology(List<String> levels, Set<String> locations) {
    this(levels, locations, false);
  }

  /**
   * An open topology: any location with one segment per level is accepted as nodes register — the YARN adapter's
   * case, where racks come from Hadoop's rack resolution one node at a time.
   */
  public static Topology open(String... levels) {
    return new Topology(List.of(levels), Set.of(), true);
  }

  /** One level, {@code rack}, holding only Hadoop's default rack. */
  public static Topology singleRack() {
    return new Topology(List.of("rack"), Set.of(DEFAULT_RACK));
  }

  public static Builder builder(String... levels) {
    return new Builder(List.of(levels));
  }

  public boolean contains(String location) {
    if (open) {
      try {
        return segments(location).size() == levels.size();
      } catch (InvalidInputException e) {
        return false;
      }
    }
    return locations.contains(location);
  }

  /** Throws unless {@code node}'s location is one of this topology's. */
  public void requireLocation(Node node) {
    if (!contains(node.location())) {
      throw new InvalidInputException("node.location", node.id() + "@" + node.location(), open
          ? "location needs one segment per topology level " + levels
          : "node is outside the topology; known locations: " + locations);
    }
  }

  /** The ancestors of a location from the top, as paths: {@code /s1/r3} gives {@code [/s1, /s1/r3]}. */
  public static List<String> ancestry(String location) {
    List<String> out = new ArrayList<>();
    StringBuilder path = new StringBuilder();
    for (String s : segments(location)) {
      path.append('/').append(s);
      out.add(path.toString());
    }
    return out;
  }

  static List<String> segments(String location) {
    if (location == null || !location.startsWith("/") || location.length() < 2 || location.endsWith("/")) {
      throw new InvalidInputException("topology.location", location, "must be a path such as /spine1/rack3");
    }
    List<String> segments = List.of(location.substring(1).split("/"));
    if (segments.stream().anyMatch(String::isBlank)) {
      throw new InvalidInputException("topology.location", location, "has an empty segment");
    }
    return segments;
  }

  /** Collects locations, then checks them all at {@link #build()}. */
  public static final class Builder {
    private final List<String> levels;
    private final Set<String> locations = new LinkedHashSet<>();

    private Builder(List<String> levels) {
      this.levels = levels;
    }

    public Builder location(String path) {
      locations.add(path);
      return this;
    }

    public Topology build() {
      return new Topology(levels, locations);
    }
  }
}
