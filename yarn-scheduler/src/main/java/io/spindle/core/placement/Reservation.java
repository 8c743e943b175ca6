package io.spindle.core.placement;

import io.spindle.core.model.NodeId;
import io.spindle.core.model.RequestRef;
import java.util.List;

/**
 * Nodes held for one gang that does not fit yet. Nothing else is placed on them (except backfill that declared it
 * ends before {@link #projectedStartMillis()}), so they only drain, and the gang fits once they have.
 *
 * <p>A {@linkplain #spare() spare} reservation holds a leaf's hot spares in one rack instead ({@link SparePool}): it
 * has no gang, no lifetime and no projected start, and counts against no limit on gang reservations.
 */
public final class Reservation {

  private final RequestRef owner;
  private final String subtree;
  private final List<NodeState> nodes;
  private final long createdMillis;
  private final boolean spare;
  private long projectedStartMillis = Long.MAX_VALUE;

  Reservation(RequestRef owner, String subtree, List<NodeState> nodes, long createdMillis) {
    this(owner, subtree, nodes, createdMillis, false);
  }

  Reservation(RequestRef owner, String subtree, List<NodeState> nodes, long createdMillis, boolean spare) {
    this.spare = spare;
    this.owner = owner;
    this.subtree = subtree;
    this.nodes = List.copyOf(nodes);
    this.createdMillis = createdMillis;
  }

  public RequestRef owner() {
    return owner;
  }

  /** The topology path (or node id) the reserved nodes share. */
  public String subtree() {
    return subtree;
  }

  public List<NodeId> nodeIds() {
    return nodes.stream().map(NodeState::id).toList();
  }

  List<NodeState> nodes() {
    return nodes;
  }

  /** Whether this holds hot spares rather than nodes for a waiting gang. */
  public boolean spare() {
    return spare;
  }

  /** How many of {@code all} hold nodes for waiting gangs (spares left out): what the gang-reservation limit counts. */
  public static int gangReservations(java.util.Collection<Reservation> all) {
    int n = 0;
    for (Reservation r : all) {
      n += r.spare ? 0 : 1;
    }
    return n;
  }

  public long createdMillis() {
    return createdMillis;
  }

  /** When the gang is expected to fit: the last declared end of what runs on the nodes; MAX_VALUE if unknown. */
  public long projectedStartMillis() {
    return projectedStartMillis;
  }

  public void projectedStartMillis(long millis) {
    this.projectedStartMillis = millis;
  }
}
