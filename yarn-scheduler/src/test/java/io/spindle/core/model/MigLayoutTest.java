package io.spindle.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class MigLayoutTest {

  private static final GpuModel H100 = GpuModelCatalog.builtIn().require("test", "H100-80GB");
  private static final GpuModel A30 = GpuModelCatalog.builtIn().require("test", "A30-24GB");

  private static MigProfile p(GpuModel model, String name) {
    return model.profile(name).orElseThrow();
  }

  private static MigPlacement at(GpuModel model, String profile, int start) {
    return new MigPlacement(p(model, profile), start);
  }

  private static MigLayout layout(GpuModel model, Object... profileStart) {
    List<MigPlacement> ps = new ArrayList<>();
    for (int i = 0; i < profileStart.length; i += 2) {
      ps.add(at(model, (String) profileStart[i], (Integer) profileStart[i + 1]));
    }
    return MigLayout.of(model, ps);
  }

  /** Every placement (profile at a legal start) of a model. */
  private static List<MigPlacement> candidates(GpuModel model) {
    List<MigPlacement> out = new ArrayList<>();
    for (MigProfile profile : model.profiles()) {
      for (int start : profile.legalStarts()) {
        out.add(new MigPlacement(profile, start));
      }
    }
    return out;
  }

  private static boolean isFull(MigLayout l) {
    return candidates(l.model()).stream().noneMatch(l::canAdd);
  }

  /** Every layout reachable from empty by MigLayout.with(); returns the maximal (full) ones. */
  private static Set<MigLayout> fullLayouts(GpuModel model) {
    Set<MigLayout> seen = new HashSet<>();
    Set<MigLayout> full = new HashSet<>();
    Deque<MigLayout> todo = new ArrayDeque<>();
    MigLayout empty = MigLayout.empty(model);
    seen.add(empty);
    todo.add(empty);
    while (!todo.isEmpty()) {
      MigLayout l = todo.pop();
      boolean extended = false;
      for (MigPlacement c : candidates(model)) {
        if (l.canAdd(c)) {
          extended = true;
          MigLayout next = l.with(c);
          if (seen.add(next)) {
            todo.push(next);
          }
        }
      }
      if (!extended) {
        full.add(l);
      }
    }
    return full;
  }

  private static String describe(MigLayout l) {
    return l.placements().stream().map(MigPlacement::toString).collect(Collectors.joining(" + "));
  }

  // ------------------------------------------------ independent reference model from mig-geometry.md

  /** name, compute, memory, legal starts, max instances, media extension. */
  private record Ref(String name, int compute, int memory, int[] starts, int max, boolean me) {}

  private static final List<Ref> H100_TABLE = List.of(
      new Ref("1g.10gb", 1, 1, new int[] {0, 1, 2, 3, 4, 5, 6}, 7, false),
      new Ref("1g.10gb+me", 1, 1, new int[] {0, 1, 2, 3, 4, 5, 6}, 1, true),
      new Ref("1g.20gb", 1, 2, new int[] {0, 2, 4, 6}, 4, false),
      new Ref("2g.20gb", 2, 2, new int[] {0, 2, 4}, 3, false),
      new Ref("3g.40gb", 3, 4, new int[] {0, 4}, 2, false),
      new Ref("4g.40gb", 4, 4, new int[] {0}, 1, false),
      new Ref("7g.80gb", 7, 8, new int[] {0}, 1, false));

  private static final List<Ref> A30_TABLE = List.of(
      new Ref("1g.6gb", 1, 1, new int[] {0, 1, 2, 3}, 4, false),
      new Ref("1g.6gb+me", 1, 1, new int[] {0, 1, 2, 3}, 1, true),
      new Ref("2g.12gb", 2, 2, new int[] {0, 2}, 2, false),
      new Ref("2g.12gb+me", 2, 2, new int[] {0, 2}, 1, true),
      new Ref("4g.24gb", 4, 4, new int[] {0}, 1, false));

  /** Full layouts by plain subset search over the documented table, as sorted "profile@start" strings. */
  private static Set<String> referenceFullLayouts(List<Ref> table, int computeSlices) {
    List<int[]> cands = new ArrayList<>(); // {row, start}
    for (int r = 0; r < table.size(); r++) {
      for (int s : table.get(r).starts()) {
        cands.add(new int[] {r, s});
      }
    }
    Set<String> out = new TreeSet<>();
    search(table, computeSlices, cands, 0, new ArrayList<>(), out);
    return out;
  }

  private static boolean fits(List<Ref> table, int computeSlices, List<int[]> chosen, int[] cand) {
    Ref r = table.get(cand[0]);
    int mask = 0;
    int compute = 0;
    int same = 0;
    boolean me = false;
    for (int[] c : chosen) {
      Ref q = table.get(c[0]);
      mask |= ((1 << q.memory()) - 1) << c[1];
      compute += q.compute();
      same += c[0] == cand[0] ? 1 : 0;
      me |= q.me();
    }
    int m = ((1 << r.memory()) - 1) << cand[1];
    return (mask & m) == 0 && compute + r.compute() <= computeSlices && same < r.max() && !(me && r.me());
  }

  private static void search(List<Ref> table, int computeSlices, List<int[]> cands, int i, List<int[]> chosen,
      Set<String> out) {
    if (i == cands.size()) {
      for (int[] c : cands) {
        if (fits(table, computeSlices, chosen, c)) {
          return; // not maximal
        }
      }
      List<int[]> sorted = new ArrayList<>(chosen);
      sorted.sort((a, b) -> Integer.compare(a[1], b[1]));
      out.add(sorted.stream().map(c -> table.get(c[0]).name() + "@" + c[1]).collect(Collectors.joining(" + ")));
      return;
    }
    if (fits(table, computeSlices, chosen, cands.get(i))) {
      chosen.add(cands.get(i));
      search(table, computeSlices, cands, i + 1, chosen, out);
      chosen.remove(chosen.size() - 1);
    }
    search(table, computeSlices, cands, i + 1, chosen, out);
  }

  private static void assertSound(MigLayout l) {
    int mask = 0;
    int compute = 0;
    for (MigPlacement pl : l.placements()) {
      assertThat(pl.profile().isLegalStart(pl.start())).as(describe(l)).isTrue();
      assertThat(mask & pl.sliceMask()).as("overlap in %s", describe(l)).isZero();
      assertThat(pl.start() + pl.profile().memorySlices()).isLessThanOrEqualTo(l.model().memorySlices());
      mask |= pl.sliceMask();
      compute += pl.profile().computeSlices();
    }
    assertThat(compute).as(describe(l)).isLessThanOrEqualTo(l.model().computeSlices());
    assertThat(l.usedSliceMask()).isEqualTo(mask);
    assertThat(l.usedComputeSlices()).isEqualTo(compute);
    assertThat(l.freeMemorySlices()).isEqualTo(l.model().memorySlices() - Integer.bitCount(mask));
    assertThat(l.placements().stream().filter(x -> x.profile().mediaExtension()).count()).isLessThanOrEqualTo(1);
    for (MigProfile prof : l.model().profiles()) {
      assertThat(l.placements().stream().filter(x -> x.profile().equals(prof)).count())
          .isLessThanOrEqualTo(prof.maxInstances());
      assertThat(l.placeable(prof)).as("full layout %s still places %s", describe(l), prof.name()).isZero();
      assertThat(l.firstFreeStart(prof)).isEqualTo(-1);
    }
  }

  // ------------------------------------------------ enumeration

  @Test
  void enumeratesEveryFullLayoutOfAnEightSliceGpu() {
    Set<MigLayout> full = fullLayouts(H100);
    System.out.println("H100-80GB full MIG layouts: " + full.size());

    full.forEach(MigLayoutTest::assertSound);
    assertThat(full).allMatch(MigLayoutTest::isFull);

    Set<String> described = full.stream().map(MigLayoutTest::describe).collect(Collectors.toSet());
    assertThat(described).contains(
        "4g.40gb@0 + 3g.40gb@4",
        "4g.40gb@0 + 2g.20gb@4 + 1g.10gb@6",
        "3g.40gb@0 + 3g.40gb@4",
        "2g.20gb@0 + 2g.20gb@2 + 3g.40gb@4",
        "2g.20gb@0 + 2g.20gb@2 + 2g.20gb@4 + 1g.10gb@6",
        "1g.10gb@0 + 1g.10gb@1 + 1g.10gb@2 + 1g.10gb@3 + 1g.10gb@4 + 1g.10gb@5 + 1g.10gb@6",
        "7g.80gb@0");

    // Cross-check against a plain subset search over the table in mig-geometry.md.
    Set<String> reference = referenceFullLayouts(H100_TABLE, 7);
    assertThat(described).containsExactlyInAnyOrderElementsOf(reference);
    assertThat(full).hasSize(reference.size()).hasSizeGreaterThan(5);
    // counted by this enumeration (with the +me variant and the 2-memory-slice 1g.20gb): 239
    assertThat(full).hasSize(239);
    // without the +me and 1g.20gb variants only the classic layouts remain
    Set<String> plain = described.stream().filter(d -> !d.contains("+me") && !d.contains("1g.20gb"))
        .collect(Collectors.toSet());
    System.out.println("H100-80GB full layouts without +me/1g.20gb: " + plain.size());
    plain.stream().sorted().forEach(d -> System.out.println("  " + d));
    // 19: the number of combinations NVIDIA's MIG user guide tabulates for the A100 geometry
    assertThat(plain).hasSize(19);
  }

  @Test
  void enumeratesEveryFullLayoutOfAnA30() {
    Set<MigLayout> full = fullLayouts(A30);
    System.out.println("A30-24GB full MIG layouts: " + full.size());
    full.stream().map(MigLayoutTest::describe).sorted().forEach(s -> System.out.println("  " + s));

    full.forEach(MigLayoutTest::assertSound);
    Set<String> described = full.stream().map(MigLayoutTest::describe).collect(Collectors.toSet());
    assertThat(described).contains(
        "4g.24gb@0",
        "2g.12gb@0 + 2g.12gb@2",
        "2g.12gb@0 + 1g.6gb@2 + 1g.6gb@3",
        "1g.6gb@0 + 1g.6gb@1 + 1g.6gb@2 + 1g.6gb@3",
        "2g.12gb+me@0 + 2g.12gb@2");
    // at most one +me instance per GPU, whatever the profile
    assertThat(described).doesNotContain("2g.12gb+me@0 + 1g.6gb+me@2 + 1g.6gb@3");

    Set<String> reference = referenceFullLayouts(A30_TABLE, 4);
    assertThat(described).containsExactlyInAnyOrderElementsOf(reference);
    assertThat(full).hasSize(reference.size()).hasSizeGreaterThan(5);
    assertThat(full).hasSize(17); // counted by this enumeration
  }

  @Test
  void documentedLayoutsBuildWithOfAndAreFull() {
    List<MigLayout> docs = List.of(
        layout(H100, "4g.40gb", 0, "3g.40gb", 4),
        layout(H100, "4g.40gb", 0, "2g.20gb", 4, "1g.10gb", 6),
        layout(H100, "3g.40gb", 0, "3g.40gb", 4),
        layout(H100, "2g.20gb", 0, "2g.20gb", 2, "3g.40gb", 4),
        layout(H100, "2g.20gb", 0, "2g.20gb", 2, "2g.20gb", 4, "1g.10gb", 6),
        layout(H100, "1g.10gb", 0, "1g.10gb", 1, "1g.10gb", 2, "1g.10gb", 3, "1g.10gb", 4, "1g.10gb", 5,
            "1g.10gb", 6));
    for (MigLayout l : docs) {
      assertThat(isFull(l)).as(describe(l)).isTrue();
      assertSound(l);
    }
    // seven 1g leave memory slice 7 unused
    assertThat(docs.get(5).freeMemorySlices()).isEqualTo(1);
    assertThat(docs.get(5).usedComputeSlices()).isEqualTo(7);
    // order of construction does not matter: placements are kept by start
    assertThat(layout(H100, "3g.40gb", 4, "4g.40gb", 0)).isEqualTo(docs.get(0));
    assertThat(layout(H100, "3g.40gb", 4, "4g.40gb", 0).hashCode()).isEqualTo(docs.get(0).hashCode());
    assertThat(docs.get(1).placements()).extracting(MigPlacement::start).containsExactly(0, 4, 6);
  }

  // ------------------------------------------------ illegal layouts

  private static void rejected(MigLayout base, MigPlacement p, String reason) {
    assertThat(base.canAdd(p)).isFalse();
    assertThat(base.whyNot(p)).contains(reason);
    InvalidInputException e = catchThrowableOfType(InvalidInputException.class, () -> base.with(p));
    assertThat(e).isNotNull();
    assertThat(e.field()).isEqualTo("mig.placement");
    assertThat(e.value()).isEqualTo(p.toString());
    assertThat(e.getMessage()).contains(reason);
  }

  @Test
  void rejects4gAt4() {
    rejected(MigLayout.empty(H100), at(H100, "4g.40gb", 4), "may start only at memory slice [0]");
  }

  @Test
  void rejects2gAt1() {
    rejected(MigLayout.empty(H100), at(H100, "2g.20gb", 1), "not 1");
  }

  @Test
  void rejects3gAt0Plus4gAt4() {
    MigLayout l = layout(H100, "3g.40gb", 0);
    rejected(l, at(H100, "4g.40gb", 4), "may start only");
    assertThatThrownBy(() -> layout(H100, "3g.40gb", 0, "4g.40gb", 4)).isInstanceOf(InvalidInputException.class);
  }

  @Test
  void rejectsOverlap2gAt0And1gAt1() {
    rejected(layout(H100, "2g.20gb", 0), at(H100, "1g.10gb", 1), "overlaps");
    rejected(layout(H100, "1g.10gb", 1), at(H100, "2g.20gb", 0), "overlaps");
    rejected(layout(H100, "1g.10gb", 6), at(H100, "1g.20gb", 6), "overlaps");
  }

  @Test
  void rejectsTwoMediaExtensionInstances() {
    MigLayout l = layout(H100, "1g.10gb+me", 0);
    rejected(l, at(H100, "1g.10gb+me", 1), "at most 1 instance");
    MigLayout a30 = layout(A30, "2g.12gb+me", 0);
    rejected(a30, at(A30, "1g.6gb+me", 2), "media-extension");
  }

  @Test
  void rejectsEighth1g() {
    MigLayout seven = MigLayout.empty(H100);
    for (int s = 0; s < 7; s++) {
      seven = seven.with(at(H100, "1g.10gb", s));
    }
    for (int s = 0; s < 7; s++) {
      rejected(seven, at(H100, "1g.10gb", s), "overlaps");
    }
    assertThat(seven.canAdd(at(H100, "1g.10gb", 7))).isFalse();
    assertThat(seven.placeable(p(H100, "1g.10gb"))).isZero();
    assertThat(seven.firstFreeStart(p(H100, "1g.10gb"))).isEqualTo(-1);
  }

  @Test
  void rejectsMoreThanMaxInstances() {
    MigLayout three = layout(H100, "2g.20gb", 0, "2g.20gb", 2, "2g.20gb", 4);
    assertThat(three.placeable(p(H100, "2g.20gb"))).isZero();
    MigLayout fourBig1g = layout(H100, "1g.20gb", 0, "1g.20gb", 2, "1g.20gb", 4, "1g.20gb", 6);
    assertThat(fourBig1g.freeMemorySlices()).isZero();
    assertThat(fourBig1g.usedComputeSlices()).isEqualTo(4);
  }

  @Test
  void rejectsProfileOfAnotherModel() {
    MigPlacement a30Slice = at(A30, "1g.6gb", 0);
    rejected(MigLayout.empty(H100), a30Slice, "does not belong to H100-80GB");
  }

  @Test
  void rejectsNonMigModel() {
    GpuModel t4 = new GpuModel("T4", 16, 0, 0, List.of(), List.of());
    InvalidInputException e = catchThrowableOfType(InvalidInputException.class, () -> MigLayout.empty(t4));
    assertThat(e).isNotNull();
    assertThat(e.field()).isEqualTo("gpu.model");
    assertThat(e.value()).isEqualTo("T4");
  }

  // ------------------------------------------------ placeable / firstFreeStart / without

  @Test
  void placeableOnAnEmptyGpuIsTheMaxInstances() {
    MigLayout empty = MigLayout.empty(H100);
    assertThat(empty.isEmpty()).isTrue();
    assertThat(empty.placeable(p(H100, "1g.10gb"))).isEqualTo(7);
    assertThat(empty.placeable(p(H100, "1g.10gb+me"))).isEqualTo(1);
    assertThat(empty.placeable(p(H100, "1g.20gb"))).isEqualTo(4);
    assertThat(empty.placeable(p(H100, "2g.20gb"))).isEqualTo(3);
    assertThat(empty.placeable(p(H100, "3g.40gb"))).isEqualTo(2);
    assertThat(empty.placeable(p(H100, "4g.40gb"))).isEqualTo(1);
    assertThat(empty.placeable(p(H100, "7g.80gb"))).isEqualTo(1);
    MigLayout a30 = MigLayout.empty(A30);
    assertThat(a30.placeable(p(A30, "1g.6gb"))).isEqualTo(4);
    assertThat(a30.placeable(p(A30, "2g.12gb"))).isEqualTo(2);
    assertThat(a30.placeable(p(A30, "2g.12gb+me"))).isEqualTo(1);
    assertThat(a30.placeable(p(A30, "4g.24gb"))).isEqualTo(1);
    // placeable does not change the layout
    assertThat(empty.isEmpty()).isTrue();
  }

  @Test
  void placeableAfterOne3gAt0() {
    MigLayout l = layout(H100, "3g.40gb", 0);
    assertThat(l.placeable(p(H100, "1g.10gb"))).isEqualTo(3);
    assertThat(l.placeable(p(H100, "1g.20gb"))).isEqualTo(2);
    assertThat(l.placeable(p(H100, "2g.20gb"))).isEqualTo(1);
    assertThat(l.placeable(p(H100, "3g.40gb"))).isEqualTo(1);
    assertThat(l.placeable(p(H100, "4g.40gb"))).isZero();
    assertThat(l.placeable(p(H100, "7g.80gb"))).isZero();
  }

  @Test
  void placeableAfterOne1gAt1() {
    MigLayout l = layout(H100, "1g.10gb", 1);
    assertThat(l.placeable(p(H100, "2g.20gb"))).isEqualTo(2);
    assertThat(l.placeable(p(H100, "3g.40gb"))).isEqualTo(1);
    assertThat(l.placeable(p(H100, "1g.10gb"))).isEqualTo(6);
    assertThat(l.placeable(p(H100, "4g.40gb"))).isZero();
  }

  @Test
  void firstFreeStartIsTheLowestLegalFreeStart() {
    MigLayout empty = MigLayout.empty(H100);
    for (MigProfile prof : H100.profiles()) {
      assertThat(empty.firstFreeStart(prof)).as(prof.name()).isZero();
    }
    MigLayout four = layout(H100, "4g.40gb", 0);
    assertThat(four.firstFreeStart(p(H100, "3g.40gb"))).isEqualTo(4);
    assertThat(four.firstFreeStart(p(H100, "2g.20gb"))).isEqualTo(4);
    assertThat(four.firstFreeStart(p(H100, "1g.10gb"))).isEqualTo(4);
    assertThat(four.firstFreeStart(p(H100, "1g.20gb"))).isEqualTo(4);
    assertThat(four.firstFreeStart(p(H100, "4g.40gb"))).isEqualTo(-1);
    assertThat(four.firstFreeStart(p(H100, "7g.80gb"))).isEqualTo(-1);

    MigLayout one = layout(H100, "1g.10gb", 0);
    assertThat(one.firstFreeStart(p(H100, "1g.10gb"))).isEqualTo(1);
    assertThat(one.firstFreeStart(p(H100, "2g.20gb"))).isEqualTo(2);
    assertThat(one.firstFreeStart(p(H100, "1g.20gb"))).isEqualTo(2);
    assertThat(one.firstFreeStart(p(H100, "3g.40gb"))).isEqualTo(4);

    // memory slice 7 is free, but no profile may start there
    MigLayout twoThree = layout(H100, "3g.40gb", 0, "2g.20gb", 4, "1g.10gb", 6);
    assertThat(twoThree.freeMemorySlices()).isEqualTo(1);
    assertThat(twoThree.firstFreeStart(p(H100, "1g.10gb"))).isEqualTo(-1);
  }

  @Test
  void withoutRestoresThePreviousLayout() {
    MigLayout base = layout(H100, "2g.20gb", 0, "3g.40gb", 4);
    MigPlacement p = at(H100, "2g.20gb", 2);
    MigLayout more = base.with(p);
    assertThat(more).isNotEqualTo(base);
    assertThat(more.usedComputeSlices()).isEqualTo(7);
    MigLayout back = more.without(p);
    assertThat(back).isEqualTo(base);
    assertThat(back.placements()).isEqualTo(base.placements());
    assertThat(back.usedSliceMask()).isEqualTo(base.usedSliceMask());
    assertThat(back.usedComputeSlices()).isEqualTo(base.usedComputeSlices());
    assertThat(back.freeMemorySlices()).isEqualTo(base.freeMemorySlices());
    assertThat(back.canAdd(p)).isTrue();

    // removing every instance gives the empty layout back, and then any profile fits again
    MigLayout emptied = base.without(at(H100, "3g.40gb", 4)).without(at(H100, "2g.20gb", 0));
    assertThat(emptied.isEmpty()).isTrue();
    assertThat(emptied).isEqualTo(MigLayout.empty(H100));
    assertThat(emptied.usedSliceMask()).isZero();
    assertThat(emptied.usedComputeSlices()).isZero();
    assertThat(emptied.placeable(p(H100, "7g.80gb"))).isEqualTo(1);

    // the original is immutable
    assertThat(base.placements()).hasSize(2);
    assertThat(more.placements()).hasSize(3);
  }

  @Test
  void withoutRejectsAnInstanceNotInTheLayout() {
    MigLayout base = layout(H100, "2g.20gb", 0);
    InvalidInputException e = catchThrowableOfType(InvalidInputException.class,
        () -> base.without(at(H100, "2g.20gb", 2)));
    assertThat(e).isNotNull();
    assertThat(e.field()).isEqualTo("mig.placement");
    assertThat(e.getMessage()).contains("not in layout");
  }

  @Test
  void withoutThenWithRestoresEveryFullLayout() {
    for (MigLayout full : fullLayouts(H100)) {
      for (MigPlacement pl : full.placements()) {
        MigLayout less = full.without(pl);
        assertThat(less.canAdd(pl)).as("%s without %s", describe(full), pl).isTrue();
        assertThat(less.with(pl)).isEqualTo(full);
      }
    }
  }

  @Test
  void placementsAreImmutable() {
    MigLayout l = layout(H100, "2g.20gb", 0);
    assertThatThrownBy(() -> l.placements().add(at(H100, "2g.20gb", 2)))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(l.toString()).isEqualTo("H100-80GB[2g.20gb@0]");
  }
}
