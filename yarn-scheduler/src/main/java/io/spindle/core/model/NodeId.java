package io.spindle.core.model;

import static io.spindle.core.model.InvalidInputException.requireNonBlank;

/**
 * A worker node, as the engine knows it. The YARN adapter makes one from YARN's {@code NodeId} ({@code host:port})
 * and keeps the way back; the simulator and tests name nodes freely. The engine never parses it.
 *
 * <p>Hashing and ordering are those of the text, so maps and sorts keyed by node behave exactly as they did when the
 * id was a bare string (the simulator's and the journal's replays depend on that).
 */
public record NodeId(String value) implements Comparable<NodeId> {

  public NodeId {
    requireNonBlank("node.id", value);
  }

  public static NodeId of(String value) {
    return new NodeId(value);
  }

  @Override
  public int compareTo(NodeId other) {
    return value.compareTo(other.value);
  }

  @Override
  public int hashCode() {
    return value.hashCode();
  }

  @Override
  public String toString() {
    return value;
  }
}
