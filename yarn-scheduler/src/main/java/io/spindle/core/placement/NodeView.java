package io.spindle.core.placement;

import io.spindle.core.model.MigLayout;
import io.spindle.core.model.Node;
import java.util.Map;

/**
 * One node as placement sees it, for status pages: read between cycles, kept by readers on other threads.
 *
 * @param reservedFor the owner ({@code appId/requestKey}) of the gang reservation holding the node, or {@code null}
 * @param migLayouts the instances that exist on each MIG-mode GPU, by GPU index
 * @param reconfiguringTo the layout each GPU being re-partitioned is going to, by GPU index
 * @param shares what is taken of each GPU in a sharing mode, by GPU index
 * @param cordoned why an admin took new work off the node, or {@code null} when it takes new work
 * @param gpuService why each GPU that is not fully in service is not, by GPU index
 */
public record NodeView(Node node, String reservedFor, Map<Integer, MigLayout> migLayouts,
    Map<Integer, MigLayout> reconfiguringTo, Map<Integer, GpuShareUse> shares, String cordoned,
    Map<Integer, GpuService> gpuService) {

  public NodeView {
    migLayouts = Map.copyOf(migLayouts);
    reconfiguringTo = Map.copyOf(reconfiguringTo);
    shares = Map.copyOf(shares);
    gpuService = Map.copyOf(gpuService);
  }

  public NodeView(Node node, String reservedFor, Map<Integer, MigLayout> migLayouts,
      Map<Integer, MigLayout> reconfiguringTo) {
    this(node, reservedFor, migLayouts, reconfiguringTo, Map.of(), null, Map.of());
  }

  /** A node that takes new work. */
  public NodeView(Node node, String reservedFor, Map<Integer, MigLayout> migLayouts,
      Map<Integer, MigLayout> reconfiguringTo, Map<Integer, GpuShareUse> shares) {
    this(node, reservedFor, migLayouts, reconfiguringTo, shares, null, Map.of());
  }
}
