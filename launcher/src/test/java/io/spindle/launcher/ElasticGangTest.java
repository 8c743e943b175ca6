package io.spindle.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.launcher.ElasticGang.Change;
import io.spindle.launcher.ElasticGang.Role;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ElasticGangTest {

  private final AtomicLong now = new AtomicLong(1_000_000);

  private ElasticGang gang(int min, int max, int step) {
    return new ElasticGang(min, max, step, now::get);
  }

  private void pass(java.time.Duration d) {
    now.addAndGet(d.toMillis());
  }

  @Test
  void aRigidGangStartsWhenAllAreThereAndNeverChangesSize() {
    ElasticGang g = gang(3, 3, 1);
    g.arrived("c1");
    g.arrived("c2");
    pass(ElasticGang.SETTLE.multipliedBy(10));
    assertThat(g.readyToStart()).as("two of three, however long").isFalse();
    g.arrived("c3");
    assertThat(g.readyToStart()).isTrue();
    g.started(List.of("c2", "c1", "c3"));
    assertThat(g.wantsMore()).isFalse();
    assertThat(g.change()).isEqualTo(Change.NONE);
    assertThat(g.ended("c1")).isEqualTo(Role.MEMBER);
    assertThat(g.ended("other")).isEqualTo(Role.UNKNOWN);
  }

  @Test
  void anElasticGangStartsAtItsMinimumOnceNoMoreArriveForTheSettleTime() {
    ElasticGang g = gang(2, 4, 1);
    g.arrived("c1");
    assertThat(g.readyToStart()).isFalse();
    g.arrived("c2");
    assertThat(g.readyToStart()).as("more may come in the next allocations").isFalse();
    pass(ElasticGang.SETTLE.minusMillis(1));
    g.arrived("c3");
    pass(ElasticGang.SETTLE.minusMillis(1));
    assertThat(g.readyToStart()).as("the settle time counts from the latest arrival").isFalse();
    pass(java.time.Duration.ofMillis(1));
    assertThat(g.readyToStart()).isTrue();
    assertThat(g.nextSize()).isEqualTo(3);
    g.started(g.candidates());
    assertThat(g.members()).containsExactlyInAnyOrder("c1", "c2", "c3");
    assertThat(g.wantsMore()).isTrue();
  }

  @Test
  void allOfThemStartAtOnce() {
    ElasticGang g = gang(2, 4, 2);
    List.of("a", "b", "c", "d").forEach(g::arrived);
    assertThat(g.readyToStart()).isTrue();
    assertThat(g.nextSize()).isEqualTo(4);
  }

  @Test
  void arrivalsWhileRunningAskForAGrowWhenTheyMakeAWholeStep() {
    ElasticGang g = gang(2, 6, 2);
    g.arrived("a");
    g.arrived("b");
    pass(ElasticGang.SETTLE);
    g.started(List.of("a", "b"));
    g.arrived("c");
    assertThat(g.change()).as("one more does not make a step of 2").isEqualTo(Change.NONE);
    assertThat(g.nextSize()).isEqualTo(2);
    g.arrived("d");
    assertThat(g.change()).isEqualTo(Change.GROW);
    assertThat(g.nextSize()).isEqualTo(4);
    g.arrived("e");
    assertThat(g.nextSize()).isEqualTo(4);
    g.started(List.of("a", "b", "c", "d"));
    assertThat(g.change()).isEqualTo(Change.NONE);
    assertThat(g.candidates()).as("e waits for a sixth").containsExactly("a", "b", "c", "d", "e");
    assertThat(g.ended("e")).isEqualTo(Role.WAITING);
    assertThat(g.wantsMore()).isTrue();
  }

  @Test
  void aGrowWithoutACheckpointIsDueAfterTheWait() {
    ElasticGang g = gang(1, 2, 1);
    g.arrived("a");
    pass(ElasticGang.SETTLE);
    g.started(List.of("a"));
    g.arrived("b");
    assertThat(g.growDue()).isFalse();
    pass(ElasticGang.GROW_WAIT);
    assertThat(g.growDue()).isTrue();
  }

  @Test
  void aResizeNoticeShrinksToTheSurvivorsAndTheNamedContainersDepart() {
    ElasticGang g = gang(2, 4, 2);
    List.of("a", "b", "c", "d").forEach(g::arrived);
    g.started(List.of("a", "b", "c", "d"));
    assertThat(g.resize(7, List.of("c", "d", "not-ours"))).isTrue();
    assertThat(g.change()).isEqualTo(Change.SHRINK);
    assertThat(g.shrinkNotice()).isEqualTo(7);
    assertThat(g.candidates()).containsExactly("a", "b");
    assertThat(g.nextSize()).isEqualTo(2);
    assertThat(g.resize(7, List.of("c", "d"))).as("a re-issue changes nothing").isTrue();
    g.started(List.of("b", "a"));
    assertThat(g.change()).isEqualTo(Change.NONE);
    assertThat(g.departing()).containsExactlyInAnyOrder("c", "d");
    assertThat(g.wantsMore()).as("the departing ones will be asked for again once gone").isTrue();
    assertThat(g.ended("c")).isEqualTo(Role.DEPARTING);
    assertThat(g.ended("d")).isEqualTo(Role.DEPARTING);
    assertThat(g.departing()).isEmpty();
    g.arrived("e");
    g.arrived("f");
    assertThat(g.change()).as("and it grows again").isEqualTo(Change.GROW);
  }

  @Test
  void aNoticeForContainersThatRunNothingNeedsNoCheckpoint() {
    ElasticGang g = gang(2, 4, 1);
    List.of("a", "b", "c").forEach(g::arrived);
    assertThat(g.resize(3, List.of("c"))).as("before the first run").isFalse();
    assertThat(g.change()).isEqualTo(Change.NONE);
    pass(ElasticGang.SETTLE);
    assertThat(g.nextSize()).isEqualTo(2);
    g.started(List.of("a", "b"));
    assertThat(g.ended("c")).isEqualTo(Role.DEPARTING);
  }

  @Test
  void aMemberReclaimedAtTheDeadlineBeforeTheCheckpointLeavesTheRun() {
    ElasticGang g = gang(1, 3, 1);
    List.of("a", "b", "c").forEach(g::arrived);
    g.started(List.of("a", "b", "c"));
    g.resize(9, List.of("c"));
    g.noticeClosed(9);
    assertThat(g.ended("c")).isEqualTo(Role.DEPARTING);
    assertThat(g.members()).containsExactlyInAnyOrder("a", "b");
    assertThat(g.change()).as("still to restart at the smaller size").isEqualTo(Change.SHRINK);
    assertThat(g.nextSize()).isEqualTo(2);
  }

  @Test
  void aWithdrawnNoticeKeepsEveryone() {
    ElasticGang g = gang(1, 3, 1);
    List.of("a", "b", "c").forEach(g::arrived);
    g.started(List.of("a", "b", "c"));
    g.resize(9, List.of("c"));
    g.noticeClosed(9);
    pass(ElasticGang.WITHDRAWN_AFTER.minusMillis(1));
    assertThat(g.cancelWithdrawnShrink()).as("the reclaim may still be on its way").isFalse();
    pass(java.time.Duration.ofMillis(1));
    assertThat(g.cancelWithdrawnShrink()).isTrue();
    assertThat(g.change()).isEqualTo(Change.NONE);
    assertThat(g.departing()).isEmpty();
    assertThat(g.nextSize()).isEqualTo(3);
  }

  @Test
  void aRunMustBeTheNextSizeOfTheCandidates() {
    ElasticGang g = gang(2, 4, 1);
    List.of("a", "b", "c").forEach(g::arrived);
    assertThatThrownBy(() -> g.started(List.of("a", "b"))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> g.started(List.of("a", "b", "x"))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ElasticGang(2, 5, 2, now::get)).hasMessageContaining("steps of 2");
  }
}
