package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.engine.MigRepartitionTest.layout;
import static io.spindle.core.engine.MigRepartitionTest.mig;
import static io.spindle.core.engine.MigRepartitionTest.migNode;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.placement.MigSlices;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The figures {@link Engine#stats()} gives metrics, against what the cycles did. */
class EngineStatsTest {

  private static final Topology TOPO = Topology.builder("rack").location("/r1").build();
  private static final Resources ONE_GPU = Resources.of(1024, 1).withGpus(1);

  private final ManualClock clock = new ManualClock(1_000);
  private final Engine engine = new Engine(CATALOG, MigRepartitionTest.oneQueue(), TOPO, clock);

  @Test
  void aWaitingGangIsCountedWithItsAgeAndReservation() {
    engine.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8))));
    CycleResult first = engine.cycle(List.of(new AppSubmitted(AppId.of("run"), "a", "u", 0),
        new Demand(AppId.of("run"), "w", ONE_GPU, 8, PlacementSpec.gang(null, false))));
    assertThat(first.allocations()).hasSize(8);
    assertThat(engine.stats().pendingGangs()).isZero();
    assertThat(engine.stats().oldestPendingGangAgeMillis()).isZero();
    assertThat(engine.stats().oldestReservationAgeMillis()).isZero();

    clock.advance(2_000);
    CycleResult second = engine.cycle(List.of(new AppSubmitted(AppId.of("wait"), "a", "u", 0),
        new Demand(AppId.of("wait"), "w", ONE_GPU, 12, PlacementSpec.gang(null, false))));
    assertThat(second.allocations()).isEmpty();
    clock.advance(3_000);

    EngineStats stats = engine.stats();
    assertThat(stats.pendingGangs()).isEqualTo(1);
    assertThat(stats.oldestPendingGangAgeMillis()).isEqualTo(3_000);
    assertThat(stats.reservations()).isEqualTo(
        (int) second.decisions().stream().filter(Decision.Reserve.class::isInstance).count()).isEqualTo(1);
    assertThat(stats.totalGpus()).isEqualTo(16.0);
    assertThat(stats.freeWholeGpus()).isEqualTo(8);
    assertThat(stats.pendingContainers()).isEqualTo(12);
    assertThat(stats.runningContainers()).isEqualTo(8);
    assertThat(stats.migSlices()).isEqualTo(MigSlices.NONE);
    assertThat(stats.oldestReservationAgeMillis()).as("reserved in the second cycle").isEqualTo(3_000);
  }

  @Test
  void freeSlicesOnABusyMigGpuAreStrandedAndThoseOnAnIdleOneAreNot() {
    engine.cycle(List.of(new NodeAdded(migNode("m1", 512_000, 64, layout("3g.40gb@0", "3g.40gb@4"),
        layout("3g.40gb@0", "3g.40gb@4")))));
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("app"), "a", "u", 0), new Demand(AppId.of("app"), "r",
        mig("3g.40gb", 1), 1)));
    assertThat(r.allocations()).hasSize(1);

    EngineStats stats = engine.stats();
    // An H100 has 8 memory slices; a 3g.40gb instance holds 4 of them.
    assertThat(stats.migSlices()).isEqualTo(new MigSlices(16, 4, 4));
    assertThat(stats.freeMigInstances()).containsEntry("3g.40gb", 3);
    assertThat(stats.freeWholeGpus()).isZero();
  }
}
