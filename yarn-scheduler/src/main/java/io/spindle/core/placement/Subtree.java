package io.spindle.core.placement;

import java.util.LinkedHashSet;
import java.util.Set;

/**
 * One topology subtree (a spine, a rack, …) with running sums of its nodes' free capacity. The sums bound what a
 * gang could get there, so gang placement skips subtrees that cannot hold it without looking at their nodes.
 */
final class Subtree {

  final String path;
  /** Index of this subtree's level in the topology's levels (0 = top). */
  final int depth;
  final Set<NodeState> nodes = new LinkedHashSet<>();
  long freeWholeGpus;
  long freeMemoryMb;
  long freeVcores;

  Subtree(String path, int depth) {
    this.path = path;
    this.depth = depth;
  }

  void add(NodeState n, int sign) {
    freeWholeGpus += sign * (long) n.freeWholeGpus;
    freeMemoryMb += sign * n.freeMemoryMb;
    freeVcores += sign * (long) n.freeVcores;
  }
}
