package io.spindle.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.GangRun.Phase;
import io.spindle.core.model.AppId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import org.junit.jupiter.api.Test;

/** The phases of a run (docs/architecture.md, The gang lifecycle), one transition at a time. */
class GangRunLifecycleTest {

  private static GangRun gang(boolean restartsOnLoss, long... members) {
    GangRun run = new GangRun(1, AppId.of("app"), "k", Resources.of(1024, 1), PlacementSpec.gang(null, false),
        ResourceVector.ZERO, -1, 0, true, restartsOnLoss);
    for (long m : members) {
      run.members.add(m);
    }
    run.size = members.length;
    return run;
  }

  @Test
  void aVictimRunsOnWhenItsReclaimLetsItGo() {
    GangRun run = gang(true, 1, 2);
    assertThat(run.phase()).isEqualTo(Phase.RUNNING);
    run.pickedAsVictim();
    assertThat(run.phase()).isEqualTo(Phase.VICTIM);
    run.letGo();
    assertThat(run.phase()).isEqualTo(Phase.RUNNING);
  }

  @Test
  void theFirstLostMemberRestartsARunAndLaterLossesDoNotAgain() {
    GangRun run = gang(true, 1, 2, 3);
    assertThat(run.memberLost(1)).isTrue();
    assertThat(run.phase()).isEqualTo(Phase.RESTARTING);
    assertThat(run.memberLost(2)).isFalse();
    assertThat(run.lost).containsExactly(1L, 2L);
  }

  @Test
  void aRunThatDoesNotRestartOnLossIgnoresLosses() {
    GangRun run = gang(false, 1, 2);
    assertThat(run.memberLost(1)).isFalse();
    assertThat(run.phase()).isEqualTo(Phase.RUNNING);
    assertThat(run.lost).isEmpty();
  }

  @Test
  void aVictimThatLosesAMemberRestartsYetStaysHeldUntilItsReclaimIsDone() {
    GangRun run = gang(true, 1, 2);
    run.pickedAsVictim();
    assertThat(run.memberLost(1)).as("the restart is ordered at once").isTrue();
    assertThat(run.phase()).isEqualTo(Phase.VICTIM);
    run.members.clear();
    assertThat(run.done()).as("its reclaim still holds it").isFalse();
    run.letGo();
    assertThat(run.phase()).isEqualTo(Phase.RESTARTING);
    assertThat(run.done()).isTrue();
  }

  @Test
  void aRunIsDoneWhenNothingOfItRunsAndNoReclaimHoldsIt() {
    GangRun run = gang(true, 1);
    assertThat(run.done()).isFalse();
    run.members.remove(1L);
    assertThat(run.done()).isTrue();
  }
}
