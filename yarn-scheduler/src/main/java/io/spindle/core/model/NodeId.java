package io.spindle.core.model;

/**
 * A worker node, as the engine knows it. The YARN adapter makes one from YARN's {@code NodeId} ({@code host:port})
 * and keeps the way back; the simulator and tests name nodes freely.
 */
public final class NodeId extends TextId<NodeId> {

  private NodeId(String value) {
    super("node.id", value);
  }

  public static NodeId of(String value) {
    return new NodeId(value);
  }
}
