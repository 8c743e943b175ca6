package io.spindle.core.placement;

import java.util.AbstractCollection;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Nodes in best-fit order: by free whole GPUs, then free MIG slices, then free memory, free vcores, registration.
 *
 * <p>Grouped by (free whole GPUs, free MIG slices), a few dozen groups, each a tree by the rest: a start or end then
 * walks a group's tree rather than one tree of every node, fewer steps of pointer chasing (a cache miss each) on
 * every start and every end. Free CPU-only and no-GPU nodes order the same way (groups of zero free GPUs first), so a
 * container without GPUs goes where no GPU capacity is left to strand.
 */
final class BestFitIndex extends AbstractCollection<NodeState> {

  // Hand-written rather than Comparator.comparing chains: this runs in every tree step.
  private static final Comparator<NodeState> BY_FREE_SPACE = (a, b) -> {
    if (a.freeMemoryMb != b.freeMemoryMb) {
      return Long.compare(a.freeMemoryMb, b.freeMemoryMb);
    }
    if (a.freeVcores != b.freeVcores) {
      return Integer.compare(a.freeVcores, b.freeVcores);
    }
    return Integer.compare(a.seq, b.seq);
  };

  private final TreeMap<Long, TreeSet<NodeState>> groups = new TreeMap<>();
  private int size;

  private static long group(int freeWholeGpus, int freeMigSlices) {
    return ((long) freeWholeGpus << 32) | (freeMigSlices & 0xffffffffL);
  }

  @Override
  public boolean add(NodeState n) {
    if (!groups.computeIfAbsent(group(n.freeWholeGpus, n.freeMigSlices), k -> new TreeSet<>(BY_FREE_SPACE)).add(n)) {
      return false;
    }
    size++;
    return true;
  }

  /** Removes a node under the free capacity it was added with (callers remove before they change it). */
  @Override
  public boolean remove(Object o) {
    NodeState n = (NodeState) o;
    TreeSet<NodeState> g = groups.get(group(n.freeWholeGpus, n.freeMigSlices));
    if (g == null || !g.remove(n)) {
      return false;
    }
    size--;
    return true;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public Iterator<NodeState> iterator() {
    return from(0, Long.MIN_VALUE);
  }

  /**
   * The nodes with at least {@code gpus} free whole GPUs in best-fit order, each group of (free GPUs, free MIG slices)
   * from its first node with at least {@code memoryMb} free: the nodes of a group with less are jumped past.
   */
  Iterator<NodeState> from(int gpus, long memoryMb) {
    NodeState probe = NodeState.probe(0, 0, memoryMb);
    Iterator<TreeSet<NodeState>> rest = groups.tailMap(group(gpus, 0), true).values().iterator();
    return new Iterator<>() {
      private Iterator<NodeState> inGroup = Collections.emptyIterator();

      @Override
      public boolean hasNext() {
        while (!inGroup.hasNext()) {
          if (!rest.hasNext()) {
            return false;
          }
          inGroup = rest.next().tailSet(probe, true).iterator();
        }
        return true;
      }

      @Override
      public NodeState next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return inGroup.next();
      }
    };
  }
}
