package io.spindle.core.placement;

import io.spindle.core.model.Resources;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The container shapes asked for most recently among those that take GPUs outside MIG (whole GPUs and shares) or
 * no GPU at all: the last {@code window} containers, whatever became of them. It is the "target workload" of the
 * fragmentation measure ({@link FragmentationScore}): GPU capacity is fragmented when the work that keeps arriving
 * cannot use it. Deterministic — a count of arrivals, not a clock.
 */
public final class GpuDemandMix {

  /** About a few hundred requests: enough to see a mix, short enough to follow it when it shifts. */
  public static final int DEFAULT_WINDOW = Integer.getInteger("spindle.w", 1_000);
  /** Shapes the measure looks at, most asked first: the rest of a long tail changes little and costs per node. */
  public static final int DEFAULT_TYPES = Integer.getInteger("spindle.t", 48);

  /** One shape and its share of the window. */
  record Weighted(Resources shape, double weight) {}

  private final long window;
  private final int maxTypes;
  private final ArrayDeque<long[]> runCounts = new ArrayDeque<>();
  private final ArrayDeque<Resources> runShapes = new ArrayDeque<>();
  private final Map<Resources, Long> counts = new HashMap<>();
  private long total;
  private List<Weighted> cached;

  public GpuDemandMix(long window, int maxTypes) {
    if (window <= 0 || maxTypes <= 0) {
      throw new IllegalArgumentException("window and types must be positive: " + window + ", " + maxTypes);
    }
    this.window = window;
    this.maxTypes = maxTypes;
  }

  /** {@code containers} more containers of the shape were asked for (MIG shapes are not part of this mix). */
  public void record(Resources shape, long containers) {
    if (containers <= 0 || shape.wantsMig()) {
      return;
    }
    Resources key = shape;
    runShapes.addLast(key);
    runCounts.addLast(new long[] {containers});
    counts.merge(key, containers, Long::sum);
    total += containers;
    while (total > window) {
      long[] oldest = runCounts.peekFirst();
      Resources oldShape = runShapes.peekFirst();
      long drop = Math.min(oldest[0], total - window);
      oldest[0] -= drop;
      total -= drop;
      counts.computeIfPresent(oldShape, (k, v) -> v == drop ? null : v - drop);
      if (oldest[0] == 0) {
        runCounts.pollFirst();
        runShapes.pollFirst();
      }
    }
    cached = null;
  }

  /** The most asked shapes with their weights (fractions of the window, summing to at most 1), heaviest first. */
  List<Weighted> types() {
    if (cached == null) {
      List<Map.Entry<Resources, Long>> entries = new ArrayList<>(counts.entrySet());
      // Ties by text keep the order, and so every decision, independent of hash order.
      entries.sort((a, b) -> a.getValue().equals(b.getValue())
          ? a.getKey().toString().compareTo(b.getKey().toString()) : Long.compare(b.getValue(), a.getValue()));
      List<Weighted> out = new ArrayList<>();
      for (int i = 0; i < entries.size() && i < maxTypes; i++) {
        out.add(new Weighted(entries.get(i).getKey(), (double) entries.get(i).getValue() / total));
      }
      cached = List.copyOf(out);
    }
    return cached;
  }

  boolean isEmpty() {
    return total == 0;
  }
}
