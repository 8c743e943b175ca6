package io.spindle.core.placement;

import static io.spindle.core.Fixtures.H100;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import java.util.List;
import org.junit.jupiter.api.Test;

class FragmentationAwareSlotsTest {

  private static final MigProfile G1 = H100.profile("1g.10gb").orElseThrow();
  private static final MigProfile G2 = H100.profile("2g.20gb").orElseThrow();
  private static final MigProfile G3 = H100.profile("3g.40gb").orElseThrow();
  private static final MigProfile G4 = H100.profile("4g.40gb").orElseThrow();
  private static final MigProfile G7 = H100.profile("7g.80gb").orElseThrow();
  private final MigSlotPolicy policy = new FragmentationAwareSlots();

  @Test
  void smallInstancesGoToTheTopOfAnEmptyGpu() {
    assertThat(policy.choose(G1, List.of(MigLayout.empty(H100)))).isEqualTo(new MigSlotPolicy.Choice(0, 6));
    // 3g at 4 keeps the 4g place at 0; 3g at 0 would lose it.
    assertThat(policy.choose(G3, List.of(MigLayout.empty(H100)))).isEqualTo(new MigSlotPolicy.Choice(0, 4));
  }

  @Test
  void lossWeighsEveryProfileBySize() {
    MigLayout empty = MigLayout.empty(H100);
    // 1g@6 loses: 7g (840), one 3g place (420), one 1g.20gb place (210), one 1g place (120) = 1590.
    assertThat(FragmentationAwareSlots.loss(empty, empty.with(new MigPlacement(G1, 6)))).isEqualTo(1590);
    // 1g@0 also loses the 4g (480) and a 2g place (240).
    assertThat(FragmentationAwareSlots.loss(empty, empty.with(new MigPlacement(G1, 0))))
        .isEqualTo(1590 + 480 + 240);
  }

  @Test
  void prefersAGpuAlreadyBeingPlannedOverAFreshOne() {
    MigLayout planned = MigLayout.empty(H100).with(new MigPlacement(G3, 4));
    MigSlotPolicy.Choice c = policy.choose(G1, List.of(planned, MigLayout.empty(H100)));
    assertThat(c.option()).isZero();
    assertThat(c.start()).isLessThan(4);
  }

  @Test
  void nothingFitsGivesNoChoice() {
    MigLayout full = MigLayout.empty(H100).with(new MigPlacement(G7, 0));
    assertThat(policy.choose(G1, List.of(full))).isNull();
    assertThat(new FirstFitSlots().choose(G1, List.of(full))).isNull();
    assertThat(new RandomSlots(1).choose(G1, List.of(full))).isNull();
  }

  @Test
  void baselinesTakeFirstOrRandomLegalSlots() {
    MigLayout empty = MigLayout.empty(H100);
    assertThat(new FirstFitSlots().choose(G1, List.of(empty))).isEqualTo(new MigSlotPolicy.Choice(0, 0));
    assertThat(new FirstFitSlots().choose(G4, List.of(empty.with(new MigPlacement(G2, 0)), empty)))
        .isEqualTo(new MigSlotPolicy.Choice(1, 0));
    RandomSlots random = new RandomSlots(7);
    for (int i = 0; i < 200; i++) {
      MigSlotPolicy.Choice c = random.choose(G2, List.of(empty));
      assertThat(G2.legalStarts()).contains(c.start());
    }
  }
}
