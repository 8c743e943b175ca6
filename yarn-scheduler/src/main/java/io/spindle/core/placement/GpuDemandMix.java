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
  public static final int DEFAULT_WINDOW = 1_000;
  /** Shapes the measure looks at, most asked first: the rest of a long tail changes little and costs per node. */
  public static final int DEFAULT_TYPES = 48;

  /** One shape and its share of the window. */
  record Weighted(Resources shape, double weight) {}

  private final long window;
  private final int maxTypes;
  private final ArrayDeque<long[]> runCounts = new ArrayDeque<>();
  private final ArrayDeque<Resources> runShapes = new ArrayDeque<>();
  private final Map<Resources, Long> counts = new HashMap<>();
  /** Each counted shape's text, the tie-break of {@link #types()}: made once per shape, not per comparison. */
  private final Map<Resources, String> texts = new HashMap<>();
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
    if (counts.merge(key, containers, Long::sum) == containers) {
      texts.put(key, key.toString());
    }
    total += containers;
    while (total > window) {
      long[] oldest = runCounts.peekFirst();
      Resources oldShape = runShapes.peekFirst();
      long drop = Math.min(oldest[0], total - window);
      oldest[0] -= drop;
      total -= drop;
      if (counts.computeIfPresent(oldShape, (k, v) -> v == drop ? null : v - drop) == null) {
        texts.remove(oldShape);
      }
      if (oldest[0] == 0) {
        runCounts.pollFirst();
        runShapes.pollFirst();
      }
    }
    cached = null;
    table = null;
  }

  /** The most asked shapes with their weights (fractions of the window, summing to at most 1), heaviest first. */
  List<Weighted> types() {
    if (cached == null) {
      List<Map.Entry<Resources, Long>> entries = new ArrayList<>(counts.entrySet());
      // Ties by text keep the order, and so every decision, independent of hash order.
      entries.sort((a, b) -> a.getValue().equals(b.getValue())
          ? texts.get(a.getKey()).compareTo(texts.get(b.getKey())) : Long.compare(b.getValue(), a.getValue()));
      List<Weighted> out = new ArrayList<>();
      // Weights are by count of containers, as FGD weighs its target workload (weighing by GPUs asked was tried:
      // 95.05% against 95.14% on OpenB's default pod list at 100% arrived).
      for (int i = 0; i < entries.size() && i < maxTypes; i++) {
        out.add(new Weighted(entries.get(i).getKey(), (double) entries.get(i).getValue() / total));
      }
      cached = List.copyOf(out);
    }
    return cached;
  }

  /**
   * {@link #types()} as parallel arrays, what the fragmentation measure's inner loop reads: per shape its weight,
   * vcores, memory, whole GPUs, share (compute, GPU memory, MPS only), and models.
   */
  static final class Table {
    final int size;
    final double[] weight;
    final long[] vcores;
    final long[] memoryMb;
    final int[] gpus;
    final boolean[] wantsGpu;
    final int[] milli;
    final long[] gpuMemoryMb;
    final boolean[] mpsOnly;
    final io.spindle.core.model.GpuModelSet[] models;
    final Resources[] shapes;
    /** Shares of compute alone (no GPU memory, any isolation): their usable capacity is a prefix by size. */
    final boolean[] plainShare;
    /** The plain shares' indexes, largest compute first. */
    final int[] plainSharesBySize;

    Table(List<Weighted> types) {
      size = types.size();
      weight = new double[size];
      vcores = new long[size];
      memoryMb = new long[size];
      gpus = new int[size];
      wantsGpu = new boolean[size];
      milli = new int[size];
      gpuMemoryMb = new long[size];
      mpsOnly = new boolean[size];
      models = new io.spindle.core.model.GpuModelSet[size];
      shapes = new Resources[size];
      for (int i = 0; i < size; i++) {
        Resources r = types.get(i).shape();
        weight[i] = types.get(i).weight();
        vcores[i] = r.vcores();
        memoryMb[i] = r.memoryMb();
        gpus[i] = r.gpus();
        wantsGpu[i] = r.wantsGpu();
        milli[i] = r.gpuMilli();
        gpuMemoryMb[i] = r.gpuMemoryMb();
        mpsOnly[i] = r.isolation() == io.spindle.core.model.GpuIsolation.MPS;
        models[i] = r.models();
        shapes[i] = r;
      }
      plainShare = new boolean[size];
      List<Integer> plain = new ArrayList<>();
      for (int i = 0; i < size; i++) {
        plainShare[i] = wantsGpu[i] && gpus[i] == 0 && milli[i] > 0 && gpuMemoryMb[i] == 0 && !mpsOnly[i];
        if (plainShare[i]) {
          plain.add(i);
        }
      }
      plain.sort((a, b) -> milli[a] != milli[b] ? Integer.compare(milli[b], milli[a]) : Integer.compare(a, b));
      plainSharesBySize = plain.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The share's compute on a GPU of the model (memory-only shares: their memory's part of it). */
    int need(int i, io.spindle.core.model.GpuModel model) {
      return milli[i] > 0 ? milli[i] : shapes[i].shareMilli(model);
    }
  }

  private Table table;

  Table table() {
    types();
    if (table == null) {
      table = new Table(cached);
    }
    return table;
  }

  boolean isEmpty() {
    return total == 0;
  }
}
