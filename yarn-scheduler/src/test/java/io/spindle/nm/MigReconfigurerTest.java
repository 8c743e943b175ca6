package io.spindle.nm;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.nm.MigReconfigurer.Outcome;
import io.spindle.nm.MigReconfigurer.Status;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MigReconfigurerTest {

  private static final GpuModel A100 = GpuModelCatalog.builtIn().find("A100-40GB").orElseThrow();
  /** GPU 0 of the a100-mig fixture now: 2g.10gb@0 (GI 3), 1g.5gb@2 (GI 9), 1g.5gb@3 (GI 10), 3g.20gb@4 (GI 2). */
  private static final MigLayout NOW = layout(at("2g.10gb", 0), at("1g.5gb", 2), at("1g.5gb", 3), at("3g.20gb", 4));
  /** What after-reconfigure/ shows: the 3g.20gb kept, a 4g.20gb in place of the rest. */
  private static final MigLayout FOUR_THREE = layout(at("4g.20gb", 0), at("3g.20gb", 4));

  @TempDir
  Path temp;

  @Test
  void destroysWhatGoesAndCreatesWhatIsMissingAtItsPlacement() {
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp);

    Outcome outcome = reconfigurer(fake).apply(0, FOUR_THREE, false);

    assertThat(fake.migLog()).containsExactly(
        "mig -i 0 -gi 9,10,3 -dci",
        "mig -i 0 -gi 9,10,3 -dgi",
        "mig -i 0 -cgi 5:0 -C");
    assertThat(outcome.status()).isEqualTo(Status.APPLIED);
    assertThat(outcome.layout()).isEqualTo(FOUR_THREE);
  }

  @Test
  void createsLargestFirst() {
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp);
    MigLayout wanted = layout(at("1g.5gb", 0), at("1g.5gb", 1), at("2g.10gb", 2), at("3g.20gb", 4));

    reconfigurer(fake).apply(0, wanted, false);

    assertThat(fake.migLog()).containsExactly(
        "mig -i 0 -gi 9,10,3 -dci",
        "mig -i 0 -gi 9,10,3 -dgi",
        "mig -i 0 -cgi 14:2 -C",
        "mig -i 0 -cgi 19:0 -C",
        "mig -i 0 -cgi 19:1 -C");
  }

  @Test
  void reportsWhatNvidiaSmiShowsWhenItDiffersFromTheRequest() {
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp);
    MigLayout wanted = layout(at("4g.20gb", 0), at("2g.10gb", 4), at("1g.5gb", 6));

    Outcome outcome = reconfigurer(fake).apply(0, wanted, false);

    assertThat(outcome.status()).isEqualTo(Status.FAILED);
    assertThat(outcome.layout()).isEqualTo(FOUR_THREE);
    assertThat(outcome.detail()).contains("nvidia-smi reports [4g.20gb@0, 3g.20gb@4]");
  }

  @Test
  void destroysIdleInstancesBesideRunningWork() {
    // The 3g.20gb runs a process; the layout keeps it and replaces the idle rest.
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp).serve("query.xml", "query-busy.xml");

    Outcome outcome = reconfigurer(fake).apply(0, FOUR_THREE, false);

    assertThat(outcome.status()).isEqualTo(Status.APPLIED);
    assertThat(fake.migLog()).containsExactly(
        "mig -i 0 -gi 9,10,3 -dci",
        "mig -i 0 -gi 9,10,3 -dgi",
        "mig -i 0 -cgi 5:0 -C");
  }

  @Test
  void neverDestroysAnInstanceWithRunningWork() {
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp).serve("query.xml", "query-busy.xml");
    MigLayout dropsTheBusyOne = layout(at("2g.10gb", 0), at("1g.5gb", 2), at("1g.5gb", 3), at("2g.10gb", 4));

    Outcome outcome = reconfigurer(fake).apply(0, dropsTheBusyOne, false);

    assertThat(outcome.status()).isEqualTo(Status.BUSY);
    assertThat(outcome.detail()).contains("runs work on [3g.20gb@4]");
    assertThat(outcome.layout()).isEqualTo(NOW);
    assertThat(fake.migLog()).isEmpty();
  }

  @Test
  void neverDestroysWhileAContainerWasJustGivenAnInstance() {
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp);

    Outcome outcome = reconfigurer(fake).apply(0, FOUR_THREE, true);

    assertThat(outcome.status()).isEqualTo(Status.BUSY);
    assertThat(outcome.detail()).contains("held by a container");
    assertThat(fake.migLog()).isEmpty();
  }

  @Test
  void createsInstancesInFreeSlicesEvenWhileAContainerWasJustGivenOne() {
    // Only 4g.20gb@0 exists (say a container was just given it): adding a 3g.20gb in slices 4-7 destroys nothing.
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig-partial", temp);

    Outcome outcome = reconfigurer(fake).apply(0, FOUR_THREE, true);

    assertThat(outcome.status()).isEqualTo(Status.APPLIED);
    assertThat(outcome.layout()).isEqualTo(FOUR_THREE);
    assertThat(fake.migLog()).containsExactly("mig -i 0 -cgi 9:4 -C");
  }

  @Test
  void sameLayoutRunsNothing() {
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp).serve("query.xml", "query-busy.xml");

    Outcome outcome = reconfigurer(fake).apply(0, NOW, false);

    assertThat(outcome.status()).isEqualTo(Status.UNCHANGED);
    assertThat(fake.migLog()).isEmpty();
  }

  @Test
  void refusesToToggleMigMode() {
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp);

    Outcome outcome = reconfigurer(fake).apply(1, FOUR_THREE, false);

    assertThat(outcome.status()).isEqualTo(Status.FAILED);
    assertThat(outcome.detail()).contains("GPU 1 has MIG mode disabled");
    assertThat(fake.migLog()).isEmpty();
  }

  @Test
  void stopsAtTheFirstFailingCommandAndSaysWhich() {
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp).write("mig-fails", "-cgi 5:0");

    Outcome outcome = reconfigurer(fake).apply(0, FOUR_THREE, false);

    assertThat(outcome.status()).isEqualTo(Status.FAILED);
    assertThat(outcome.detail()).isEqualTo("nvidia-smi mig -i 0 -cgi 5:0 -C failed (exit code 1: Unable to create a "
        + "GPU instance on GPU  0 using profile 5: Insufficient Resources)");
    assertThat(fake.migLog()).containsExactly(
        "mig -i 0 -gi 9,10,3 -dci", "mig -i 0 -gi 9,10,3 -dgi", "mig -i 0 -cgi 5:0 -C");
  }

  private static MigReconfigurer reconfigurer(FakeNvidiaSmi fake) {
    return new MigReconfigurer(fake.smi(), new GpuDiscovery(fake.smi(), GpuModelCatalog.builtIn()));
  }

  private static MigLayout layout(MigPlacement... placements) {
    return MigLayout.of(A100, List.of(placements));
  }

  private static MigPlacement at(String profile, int start) {
    return new MigPlacement(A100.profile(profile).orElseThrow(), start);
  }
}
