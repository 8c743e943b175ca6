package io.spindle.core.preemption;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.model.AppId;
import io.spindle.core.preemption.CheckpointHandshake.Outcome;
import io.spindle.core.preemption.CheckpointHandshake.State;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The handshake alone: notice at 1,000 ms, grace 120 s, two extensions of at most 30 s. */
class CheckpointHandshakeTest {

  private static CheckpointHandshake notice() {
    return new CheckpointHandshake(7, 3, AppId.of("app"), "r", List.of(11L, 12L), 1_000, 120_000, 2, 30_000, "why");
  }

  @Test
  void silenceIsReclaimedAtTheDeadlineExactly() {
    CheckpointHandshake h = notice();
    assertThat(h.deadlineMillis()).isEqualTo(121_000);
    assertThat(h.dueAt(120_999)).isFalse();
    assertThat(h.dueAt(121_000)).isTrue();
    String why = h.reclaim();
    assertThat(why).contains("deadline");
    assertThat(CheckpointHandshake.reclaimedAtDeadline(why)).as("what metrics count as reclaimed at the deadline")
        .isTrue();
    assertThat(h.state()).isEqualTo(State.RECLAIMING);
    h.containerEnded(11);
    assertThat(h.state()).isEqualTo(State.RECLAIMING);
    h.containerEnded(12);
    assertThat(h.state()).isEqualTo(State.ENDED);
    assertThat(h.wasReclaimed()).isTrue();
  }

  @Test
  void doneMakesItDueAtOnceAndKeepsTheLocation() {
    CheckpointHandshake h = notice();
    assertThat(h.answer(CheckpointAnswer.DONE, 0, "hdfs:///c/1", 5_000)).isEqualTo(Outcome.DONE);
    assertThat(h.dueAt(5_000)).isTrue();
    assertThat(h.checkpointLocation()).isEqualTo("hdfs:///c/1");
    String why = h.reclaim();
    assertThat(why).contains("checkpoint done");
    assertThat(CheckpointHandshake.reclaimedAtDeadline(why)).isFalse();
    assertThat(h.answer(CheckpointAnswer.EXTEND, 1, null, 6_000)).isEqualTo(Outcome.IGNORED);
  }

  @Test
  void extensionsMoveTheDeadlineByAtMostTheBoundThenAreRefused() {
    CheckpointHandshake h = notice();
    assertThat(h.answer(CheckpointAnswer.EXTEND, 60_000, null, 2_000)).isEqualTo(Outcome.GRANTED);
    assertThat(h.deadlineMillis()).isEqualTo(151_000);
    assertThat(h.answer(CheckpointAnswer.EXTEND, 0, null, 3_000)).as("0: as much as allowed")
        .isEqualTo(Outcome.GRANTED);
    assertThat(h.deadlineMillis()).isEqualTo(181_000);
    assertThat(h.extensionsLeft()).isZero();
    assertThat(h.answer(CheckpointAnswer.EXTEND, 1_000, null, 4_000)).isEqualTo(Outcome.REFUSED);
    assertThat(h.deadlineMillis()).isEqualTo(181_000);
    assertThat(h.reclaim()).as("not yet due, but reclaim() is the caller's call").contains("after 2 extensions");
  }

  @Test
  void anExtensionAskedAtOrAfterTheDeadlineIsRefused() {
    CheckpointHandshake h = notice();
    assertThat(h.answer(CheckpointAnswer.EXTEND, 10_000, null, 121_000)).isEqualTo(Outcome.REFUSED);
    assertThat(h.dueAt(121_000)).isTrue();
  }

  @Test
  void aVictimThatEndsOnItsOwnIsNotReclaimedAndAWithdrawnOneNeverIs() {
    CheckpointHandshake ended = notice();
    ended.containerEnded(11);
    ended.containerEnded(12);
    assertThat(ended.state()).isEqualTo(State.ENDED);
    assertThat(ended.dueAt(1_000_000)).isFalse();
    assertThat(ended.wasReclaimed()).isFalse();

    CheckpointHandshake withdrawn = notice();
    assertThat(withdrawn.withdraw()).isTrue();
    assertThat(withdrawn.dueAt(1_000_000)).isFalse();
    assertThat(withdrawn.answer(CheckpointAnswer.DONE, 0, null, 2_000)).isEqualTo(Outcome.IGNORED);
    assertThatThrownBy(withdrawn::reclaim).isInstanceOf(IllegalStateException.class);

    CheckpointHandshake reclaiming = notice();
    reclaiming.reclaim();
    assertThat(reclaiming.withdraw()).as("a kill under way is not taken back").isFalse();
  }

  @Test
  void aSavedHandshakeResumesAsItStoodWithItsDeadlineExtensionsAndAnswer() {
    CheckpointHandshake h = notice();
    assertThat(h.answer(CheckpointAnswer.EXTEND, 20_000, null, 2_000)).isEqualTo(Outcome.GRANTED);
    h.containerEnded(11);
    CheckpointHandshake.Saved saved = h.saved();

    CheckpointHandshake resumed = CheckpointHandshake.resume(saved);

    assertThat(resumed.saved()).isEqualTo(saved);
    assertThat(resumed.deadlineMillis()).isEqualTo(141_000);
    assertThat(resumed.extensionsLeft()).isEqualTo(1);
    assertThat(resumed.runningAllocationIds()).containsExactly(12L);
    assertThat(resumed.dueAt(140_999)).isFalse();
    assertThat(resumed.dueAt(141_000)).isTrue();
    assertThat(resumed.reclaim()).contains("after 1 extension");
  }

  @Test
  void aResumedVictimWithNothingLeftRunningHasEndedUnlessItWasLetGo() {
    CheckpointHandshake.Saved noticed = new CheckpointHandshake.Saved(7, 3, AppId.of("app"), "r", List.of(11L), List.of(),
        1_000, 121_000, 0, 2, 30_000, "why", null, State.NOTICED, null);
    assertThat(CheckpointHandshake.resume(noticed).state()).isEqualTo(State.ENDED);
    CheckpointHandshake.Saved withdrawn = new CheckpointHandshake.Saved(7, 3, AppId.of("app"), "r", List.of(11L), List.of(),
        1_000, 121_000, 0, 2, 30_000, "why", null, State.WITHDRAWN, null);
    assertThat(CheckpointHandshake.resume(withdrawn).state()).isEqualTo(State.WITHDRAWN);
    assertThatThrownBy(() -> new CheckpointHandshake.Saved(7, 3, AppId.of("app"), "r", List.of(11L), List.of(12L), 1_000,
        121_000, 0, 2, 30_000, "why", null, State.NOTICED, null)).hasMessageContaining("not all among");
    assertThatThrownBy(() -> new CheckpointHandshake.Saved(7, 3, AppId.of("app"), "r", List.of(11L), List.of(11L), 1_000,
        121_000, 3, 2, 30_000, "why", null, State.NOTICED, null)).hasMessageContaining("3 extensions granted of 2");
  }
}
