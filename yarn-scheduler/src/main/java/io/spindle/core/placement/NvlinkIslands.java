package io.spindle.core.placement;

import java.util.Arrays;

/**
 * The one rule for choosing whole GPUs inside a node, shared by the scheduler's placement and the NodeManager
 * plugin so that the GPUs a container gets are the ones the scheduler counted: keep NVLink islands whole.
 *
 * <p>Take the island with the fewest free GPUs that still holds the request (best fit; ties go to the lower island
 * id), lowest positions first. If no island holds it, span as few islands as possible: largest first (ties: lower
 * island id).
 */
public final class NvlinkIslands {

  private NvlinkIslands() {}

  /**
   * @param islandIds each GPU's NVLink island id, in the node's GPU order
   * @param free which of those GPUs are free for a whole-GPU container
   * @return positions (indexes into the arrays) of the chosen GPUs, island by island, or {@code null} if fewer than
   *     {@code count} are free
   */
  public static int[] choose(int[] islandIds, boolean[] free, int count) {
    int[] ids = distinctSorted(islandIds);
    int[] freePer = new int[ids.length];
    int totalFree = 0;
    for (int i = 0; i < islandIds.length; i++) {
      if (free[i]) {
        freePer[Arrays.binarySearch(ids, islandIds[i])]++;
        totalFree++;
      }
    }
    if (count > totalFree) {
      return null;
    }
    int[] chosen = new int[count];
    int n = 0;
    int best = -1;
    for (int k = 0; k < ids.length; k++) {
      if (freePer[k] >= count && (best < 0 || freePer[k] < freePer[best])) {
        best = k;
      }
    }
    if (best >= 0) {
      take(ids[best], islandIds, free, chosen, n, count);
      return chosen;
    }
    boolean[] used = new boolean[ids.length];
    while (n < count) {
      int largest = -1;
      for (int k = 0; k < ids.length; k++) {
        if (!used[k] && freePer[k] > 0 && (largest < 0 || freePer[k] > freePer[largest])) {
          largest = k;
        }
      }
      used[largest] = true;
      n = take(ids[largest], islandIds, free, chosen, n, count);
    }
    return chosen;
  }

  /** Without streams: this runs for every candidate node of every whole-GPU placement. */
  private static int[] distinctSorted(int[] values) {
    int[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = 0;
    for (int i = 0; i < sorted.length; i++) {
      if (i == 0 || sorted[i] != sorted[n - 1]) {
        sorted[n++] = sorted[i];
      }
    }
    return n == sorted.length ? sorted : Arrays.copyOf(sorted, n);
  }

  private static int take(int island, int[] islandIds, boolean[] free, int[] into, int n, int count) {
    for (int i = 0; i < islandIds.length && n < count; i++) {
      if (free[i] && islandIds[i] == island) {
        into[n++] = i;
      }
    }
    return n;
  }
}
