package io.spindle.core.placement;

import io.spindle.core.model.Resources;
import java.util.AbstractCollection;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.IntFunction;

/**
 * Shared GPUs ordered by the free compute they were indexed with ({@link SharedGpu#indexedFree}, thousandths of a
 * GPU: exact), then by slot ({@link SharedGpu#slot}: the order GPUs registered, a node's by position).
 *
 * <p>One bitmap of slots per level of free compute, each with a summary bit per 64 slots. A start or end moves one
 * GPU between two levels by flipping a few words; the red-black tree this replaces took some 17 pointer-chasing steps
 * (a cache miss each) per update at 80,000 shared GPUs, on every start and every end. A walk from a level visits
 * levels upward, skipping empty ones through a bitmap of levels.
 */
final class FreeComputeIndex extends AbstractCollection<SharedGpu> {

  private static final int LEVELS = Resources.MILLI_PER_GPU + 1;

  private final IntFunction<SharedGpu> bySlot;
  private final SlotBitmap[] levels = new SlotBitmap[LEVELS];
  private final SlotBitmap nonEmpty = new SlotBitmap();
  private int size;

  /** @param bySlot the GPU registered in a slot */
  FreeComputeIndex(IntFunction<SharedGpu> bySlot) {
    this.bySlot = bySlot;
  }

  @Override
  public boolean add(SharedGpu g) {
    SlotBitmap level = levels[g.indexedFree];
    if (level == null) {
      level = new SlotBitmap();
      levels[g.indexedFree] = level;
    }
    if (!level.set(g.slot)) {
      return false;
    }
    nonEmpty.set(g.indexedFree);
    size++;
    return true;
  }

  @Override
  public boolean remove(Object o) {
    SharedGpu g = (SharedGpu) o;
    SlotBitmap level = levels[g.indexedFree];
    if (level == null || !level.clear(g.slot)) {
      return false;
    }
    if (level.isEmpty()) {
      nonEmpty.clear(g.indexedFree);
    }
    size--;
    return true;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public Iterator<SharedGpu> iterator() {
    return from(0);
  }

  /** The GPUs indexed with at least {@code minFree} free, in the index's order. */
  Iterator<SharedGpu> from(int minFree) {
    SlotWalk walk = slotsFrom(minFree);
    return new Iterator<>() {
      private int slot = walk.next();

      @Override
      public boolean hasNext() {
        return slot >= 0;
      }

      @Override
      public SharedGpu next() {
        if (slot < 0) {
          throw new NoSuchElementException();
        }
        SharedGpu g = bySlot.apply(slot);
        slot = walk.next();
        return g;
      }
    };
  }

  /**
   * {@link #from}'s order as slots: a caller that can reject a slot from arrays of its own need not read the GPU,
   * which on a walk past many GPUs of full nodes is most of the walk's cost (a cache miss per GPU and per node).
   */
  SlotWalk slotsFrom(int minFree) {
    return new SlotWalk(Math.max(0, minFree));
  }

  /** Slots in the index's order; {@link #next} gives -1 after the last. */
  final class SlotWalk {
    private int level;
    private int slot;

    private SlotWalk(int minFree) {
      level = nonEmpty.next(minFree);
      slot = -1;
    }

    int next() {
      while (level >= 0) {
        slot = levels[level].next(slot + 1);
        if (slot >= 0) {
          return slot;
        }
        level = nonEmpty.next(level + 1);
      }
      return -1;
    }
  }

  /** A growable set of small non-negative ints with a summary word per 64 words, for a fast next-set lookup. */
  static final class SlotBitmap {
    private long[] words = new long[1];
    private long[] summary = new long[1];
    private int count;

    /** Whether it was not set before. */
    boolean set(int i) {
      int w = i >>> 6;
      if (w >= words.length) {
        grow(w);
      }
      long bit = 1L << i;
      if ((words[w] & bit) != 0) {
        return false;
      }
      words[w] |= bit;
      summary[w >>> 6] |= 1L << w;
      count++;
      return true;
    }

    /** Whether it was set before. */
    boolean clear(int i) {
      int w = i >>> 6;
      long bit = 1L << i;
      if (w >= words.length || (words[w] & bit) == 0) {
        return false;
      }
      words[w] &= ~bit;
      if (words[w] == 0) {
        summary[w >>> 6] &= ~(1L << w);
      }
      count--;
      return true;
    }

    boolean isEmpty() {
      return count == 0;
    }

    /** The lowest member at or above {@code from}, or -1. */
    int next(int from) {
      int w = from >>> 6;
      if (w >= words.length) {
        return -1;
      }
      long word = words[w] & (-1L << from);
      if (word != 0) {
        return (w << 6) + Long.numberOfTrailingZeros(word);
      }
      int nextWord = w + 1;
      int s = nextWord >>> 6;
      if (s >= summary.length) {
        return -1;
      }
      long sum = summary[s] & (-1L << nextWord);
      while (sum == 0) {
        if (++s >= summary.length) {
          return -1;
        }
        sum = summary[s];
      }
      int found = (s << 6) + Long.numberOfTrailingZeros(sum);
      return (found << 6) + Long.numberOfTrailingZeros(words[found]);
    }

    private void grow(int word) {
      int length = Math.max(word + 1, words.length * 2);
      words = java.util.Arrays.copyOf(words, length);
      summary = java.util.Arrays.copyOf(summary, (length + 63) >>> 6);
    }
  }
}
