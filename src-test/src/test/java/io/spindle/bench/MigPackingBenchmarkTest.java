package io.spindle.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.spindle.bench.MigPackingBenchmark.Config;
import io.spindle.bench.MigPackingBenchmark.Request;
import io.spindle.bench.MigPackingBenchmark.Result;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.placement.FirstFitSlots;
import io.spindle.core.placement.FragmentationAwareSlots;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class MigPackingBenchmarkTest {

  private static final GpuModel H100 = GpuModelCatalog.builtIn().require("model", "H100-80GB");

  private static MigLayout layout(String... placements) {
    List<MigPlacement> list = new ArrayList<>();
    for (String p : placements) {
      String[] a = p.split("@");
      list.add(new MigPlacement(H100.profile(a[0]).orElseThrow(), Integer.parseInt(a[1])));
    }
    return MigLayout.of(H100, list);
  }

  @Test
  void slicesAreClassifiedByWhereTheyAre() {
    // Busy GPU: 3g@0 held, 2g@4 free, slices 6-7 in no instance; a 1g.20gb@6 could still cover both.
    MigLayout l = layout("3g.40gb@0", "2g.20gb@4");
    int held = l.placements().get(0).sliceMask();
    int[] c = MigSliceLedger.classify(8, l.usedSliceMask(), held, false, MigPackingBenchmark.coverableSlices(l));
    assertThat(c).containsExactly(4, 2, 2, 0, 0, 0);
    // Seven 1g.10gb use all 7 compute slices: slice 7 can never be covered.
    MigLayout sevenOnes = layout("1g.10gb@0", "1g.10gb@1", "1g.10gb@2", "1g.10gb@3", "1g.10gb@4", "1g.10gb@5",
        "1g.10gb@6");
    assertThat(MigPackingBenchmark.coverableSlices(sevenOnes)).isZero();
    assertThat(MigSliceLedger.classify(8, sevenOnes.usedSliceMask(), 1, false, 0)).containsExactly(1, 6, 0, 1, 0, 0);
    // 3g@0 + 2g@4 + 1g.10gb@6: one compute slice left, but no legal start reaches slice 7.
    assertThat(MigPackingBenchmark.coverableSlices(layout("3g.40gb@0", "2g.20gb@4", "1g.10gb@6"))).isZero();
    assertThat(MigPackingBenchmark.coverableSlices(layout("4g.40gb@0"))).isEqualTo(4);
    // Idle and re-partitioning GPUs count whole, whatever their layout.
    assertThat(MigSliceLedger.classify(8, l.usedSliceMask(), 0, false, 0)).containsExactly(0, 0, 0, 0, 8, 0);
    assertThat(MigSliceLedger.classify(8, 0, 0, true, 0)).containsExactly(0, 0, 0, 0, 0, 8);
    // A busy GPU being re-partitioned keeps what is held; the rest is out of service until the change is in force.
    assertThat(MigSliceLedger.classify(8, l.usedSliceMask(), 0b1111, true, 0)).containsExactly(4, 0, 0, 0, 0, 4);
  }

  @Test
  void ledgerTotalsFollowUpdates() {
    MigSliceLedger ledger = new MigSliceLedger(2, 8);
    assertThat(ledger.total(MigSliceLedger.IDLE_GPU)).isEqualTo(16);
    MigLayout l = layout("4g.40gb@0", "3g.40gb@4");
    ledger.update(0, l.usedSliceMask(), l.placements().get(1).sliceMask(), false, 0);
    ledger.update(1, 0, 0, true, 0);
    assertThat(ledger.totals()).containsExactly(4, 4, 0, 0, 0, 8);
    assertThat(ledger.free()).isEqualTo(12);
  }

  /**
   * Window [1000, 5000), 16 slices. [0,2000): 4 held, a 2-slice request waits (stranding: 12 free); [2000,4000): 8
   * held, a 16-slice request waits (not stranding: 8 free < 16); [4000,6000): 16 held, nothing waits.
   */
  @Test
  void windowIntegratesStrandedSlicesOnlyWhenAWaitingRequestFitsInTheFreeTotal() {
    MigSliceLedger.Window w = new MigSliceLedger.Window(1000, 5000, 16, 2 * 840);
    w.accumulate(0, 2000, new long[] {4, 2, 2, 0, 8, 0}, 420, 2, 1);
    w.accumulate(2000, 4000, new long[] {8, 0, 0, 0, 8, 0}, 840, 16, 1);
    w.accumulate(4000, 6000, new long[] {16, 0, 0, 0, 0, 0}, 1680, Integer.MAX_VALUE, 0);
    // Only [1000,2000) of the first interval lies in the window: 12 stranded slices for 1000 of 4000 ms.
    assertThat(w.strandedSlices()).isCloseTo(3.0, within(1e-12));
    assertThat(w.strandingShare()).isCloseTo(0.25, within(1e-12));
    assertThat(w.strandedSlicesWhenStranding()).isCloseTo(12, within(1e-12));
    assertThat(w.strandedByCategory(MigSliceLedger.IDLE_GPU)).isCloseTo(2.0, within(1e-12));
    assertThat(w.strandedByCategory(MigSliceLedger.FREE_INSTANCE)).isCloseTo(0.5, within(1e-12));
    // Held: 4 x 1000 + 8 x 2000 + 16 x 1000 = 36,000 slice-ms over 4000 ms and 16 slices.
    assertThat(w.sliceUtilisation()).isCloseTo(36_000.0 / 4000 / 16, within(1e-12));
    assertThat(w.unitUtilisation()).isCloseTo((420 * 1000 + 840 * 2000 + 1680 * 1000) / 4000.0 / 1680,
        within(1e-12));
    assertThat(w.averageWaiting()).isCloseTo(0.75, within(1e-12));
  }

  @Test
  void percentileIsNearestRank() {
    long[] v = {5, 1, 4, 2, 3, 10, 9, 8, 7, 6};
    assertThat(MigPackingBenchmark.percentile(v.clone(), 0.99)).isEqualTo(10);
    assertThat(MigPackingBenchmark.percentile(v.clone(), 0.5)).isEqualTo(5);
    assertThat(MigPackingBenchmark.percentile(new long[0], 0.99)).isZero();
  }

  @Test
  void workloadIsSeededAndFollowsTheMixAndTheLoad() {
    Config c = Config.parse(new String[] {"--warmup-h=0", "--measure-h=10", "--mix=1g.10gb:3,7g.80gb:1"});
    assertThat(c.mix()).extracting(MigPackingBenchmark.Share::fraction).containsExactly(0.75, 0.25);
    List<Request> a = MigPackingBenchmark.workload(c, 1.0, 5, H100);
    assertThat(MigPackingBenchmark.workload(c, 1.0, 5, H100)).isEqualTo(a);
    assertThat(MigPackingBenchmark.workload(c, 1.0, 6, H100)).isNotEqualTo(a);
    // Mean slices 0.75 x 1 + 0.25 x 8 = 2.75; rate = 8000 / (2.75 x 1800 s); 10 h -> about 58,182 requests.
    assertThat(a.size()).isBetween(57_000, 59_400);
    double sevens = a.stream().filter(r -> r.profile().name().equals("7g.80gb")).count() / (double) a.size();
    assertThat(sevens).isCloseTo(0.25, within(0.01));
    double meanRun = a.stream().mapToLong(Request::runMillis).average().orElseThrow();
    assertThat(meanRun).isCloseTo(1_800_000, within(30_000.0));
  }

  /**
   * One GPU, a 7g.80gb request arriving at 0.5 s that runs 10 s; the NodeManager reports at once, instances are
   * usable 2 s after the decision. Tick 1 s: seen, re-partition planned (usable at 3 s); tick 3 s: placed (wait
   * 2.5 s); ends at tick 13 s. Window [0, 20 s).
   */
  @Test
  void aHandMadeRunThroughTheEngine() {
    Config c = new Config(1, 1, 1, 1, List.of(1.0), 30, 0, 20 / 3600.0, 0, 2_000, MigPackingBenchmark.DEFAULT_MIX, 1);
    List<Request> requests = List.of(new Request(0, 500, H100.profile("7g.80gb").orElseThrow(), 10_000));
    Result r = MigPackingBenchmark.simulate(c, 1.0, 1, requests, "fa", new FragmentationAwareSlots());
    assertThat(r.placedInWindow()).isEqualTo(1);
    assertThat(r.completedInWindow()).isEqualTo(1);
    assertThat(r.waitsMillis()).containsExactly(2_500);
    assertThat(r.repartitionsInWindow()).isEqualTo(1);
    assertThat(r.plannedLayouts()).containsEntry("7g.80gb@0", 1);
    MigSliceLedger.Window w = r.window();
    assertThat(w.sliceUtilisation()).isCloseTo(0.5, within(1e-12)); // 8 slices held 3 s..13 s of 20 s
    // Stranded from 1 s to 3 s (8 free slices, the GPU being re-partitioned): 8 x 2 / 20.
    assertThat(w.strandedSlices()).isCloseTo(0.8, within(1e-12));
    assertThat(w.strandedByCategory(MigSliceLedger.REPARTITIONING)).isCloseTo(0.8, within(1e-12));
    assertThat(w.strandingShare()).isCloseTo(0.1, within(1e-12));
  }

  @Test
  void sameSeedSameNumbers() {
    Config c = Config.parse(new String[] {"--nodes=4", "--warmup-h=0.5", "--measure-h=1", "--threads=1"});
    GpuModel model = H100;
    List<Request> requests = MigPackingBenchmark.workload(c, 1.0, 3, model);
    Result a = MigPackingBenchmark.simulate(c, 1.0, 3, requests, "ff", new FirstFitSlots());
    Result b = MigPackingBenchmark.simulate(c, 1.0, 3, MigPackingBenchmark.workload(c, 1.0, 3, model), "ff",
        new FirstFitSlots());
    assertThat(b.window().strandedSlices()).isEqualTo(a.window().strandedSlices());
    assertThat(b.window().sliceUtilisation()).isEqualTo(a.window().sliceUtilisation());
    assertThat(b.waitsMillis()).isEqualTo(a.waitsMillis());
    assertThat(b.plannedLayouts()).isEqualTo(a.plannedLayouts());
    assertThat(a.window().sliceUtilisation()).isBetween(0.5, 1.0);
    assertThat(a.window().strandedSlices()).isLessThanOrEqualTo(4 * 8 * 8); // 4 nodes x 8 GPUs x 8 slices
    assertThat(Arrays.stream(a.waitsMillis()).allMatch(x -> x >= 0)).isTrue();
  }
}
