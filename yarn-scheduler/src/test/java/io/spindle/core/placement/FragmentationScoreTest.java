package io.spindle.core.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.spindle.core.Fixtures;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuIsolation;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The fragmentation measure's incremental growth is the difference of the measure, whatever the node's state. */
class FragmentationScoreTest {

  private static final GpuModel L40S = Fixtures.CATALOG.require("model", "L40S-48GB");

  @Test
  void deltaEqualsTheMeasureAfterMinusBeforeOnRandomNodes() {
    Random rnd = new Random(5);
    GpuDemandMix mix = new GpuDemandMix(1_000, 48);
    for (int i = 0; i < 400; i++) {
      mix.record(randomShape(rnd), 1 + rnd.nextInt(3));
    }
    FragmentationScore score = new FragmentationScore();
    for (int trial = 0; trial < 300; trial++) {
      List<Gpu> gpus = new ArrayList<>();
      for (int g = 0; g < 8; g++) {
        GpuSharing mode = GpuSharing.values()[rnd.nextInt(3)];
        gpus.add(Gpu.shared(g, L40S, 0, mode));
      }
      NodeState n = new NodeState(new Node(NodeId.of("n"), "/r", 64_000 + rnd.nextInt(64_000), 8 + rnd.nextInt(56),
          gpus), 0);
      // Some shares and whole GPUs already on it.
      for (int k = 0; k < rnd.nextInt(12); k++) {
        Resources s = Resources.of(1_000, 1).withShare(50 * (1 + rnd.nextInt(10)), 0, GpuIsolation.ANY);
        List<GpuSlot> slot = n.chooseShares(s, 1);
        if (slot != null && n.fitsCpuAndMemory(s)) {
          n.take(s, slot);
        }
      }
      Resources shape = randomShape(rnd);
      if (!n.fitsCpuAndMemory(shape)) {
        continue;
      }
      score.load(n);
      double before = score.score(mix.types());
      int[] at;
      int[] milli;
      long[] mem;
      if (shape.wantsShare()) {
        List<GpuSlot> slot = n.chooseShares(shape, 1);
        if (slot == null) {
          continue;
        }
        at = new int[] {FragmentationScore.loadedIndex(n, n.positionOf(slot.get(0).gpuIndex()))};
        milli = new int[] {shape.shareMilli(L40S)};
        mem = new long[] {shape.gpuMemoryMb()};
      } else {
        List<GpuSlot> slots = shape.gpus() > 0 ? n.chooseWholeGpus(shape.gpus()) : List.of();
        if (slots == null) {
          continue;
        }
        at = slots.stream().mapToInt(s -> FragmentationScore.loadedIndex(n, n.positionOf(s.gpuIndex()))).toArray();
        milli = new int[at.length];
        java.util.Arrays.fill(milli, -1);
        mem = new long[at.length];
      }
      double delta = score.delta(mix.table(), shape.vcores(), shape.memoryMb(), at, milli, mem, at.length);
      score.takeCpu(shape.vcores(), shape.memoryMb());
      for (int k = 0; k < at.length; k++) {
        if (milli[k] < 0) {
          score.takeWhole(at[k]);
        } else {
          score.takeShare(at[k], milli[k], mem[k]);
        }
      }
      assertThat(delta).as("trial %d, %s", trial, shape).isCloseTo(score.score(mix.types()) - before, within(1e-6));
    }
  }

  /**
   * FGD asks only whether one more container of a shape fits, so after a CPU-only container either node below still
   * "fits" a 1-GPU container and neither counts as fragmented; Spindle's measure counts the idle GPU that the CPU
   * left on the tight node can no longer serve.
   */
  @Test
  void cpuStaysBesideTheGpusThatNeedIt() {
    GpuDemandMix mix = new GpuDemandMix(1_000, 48);
    mix.record(Resources.of(4_096, 4).withGpus(1), 10);
    NodeState tight = twoGpus("tight", 8);
    NodeState roomy = twoGpus("roomy", 12);
    Resources cpuOnly = Resources.of(4_096, 4);
    FragmentationScore score = new FragmentationScore();
    score.load(tight);
    assertThat(score.delta(mix.table(), 4, 4_096, new int[0], new int[0], new long[0], 0)).isEqualTo(1_000);
    score.load(roomy);
    assertThat(score.delta(mix.table(), 4, 4_096, new int[0], new int[0], new long[0], 0)).isZero();
    assertThat(new SharePlacer(mix, 8).best(List.of(tight, roomy), cpuOnly)).isSameAs(roomy);
  }

  private static NodeState twoGpus(String id, int vcores) {
    List<Gpu> gpus = List.of(Gpu.shared(0, L40S, 0, GpuSharing.TIME_SLICE), Gpu.shared(1, L40S, 0,
        GpuSharing.TIME_SLICE));
    return new NodeState(new Node(NodeId.of(id), "/r", 64_000, vcores, gpus), 0);
  }

  private static Resources randomShape(Random rnd) {
    Resources base = Resources.of(4_096L * (1 + rnd.nextInt(12)), 1 + rnd.nextInt(24));
    return switch (rnd.nextInt(4)) {
      case 0 -> base;
      case 1 -> base.withGpus(1 + rnd.nextInt(4));
      case 2 -> base.withShare(50 * (1 + rnd.nextInt(20)), 0, GpuIsolation.ANY);
      default -> base.withShare(100 * (1 + rnd.nextInt(5)), 1_024L * rnd.nextInt(20),
          rnd.nextBoolean() ? GpuIsolation.ANY : GpuIsolation.MPS);
    };
  }
}
