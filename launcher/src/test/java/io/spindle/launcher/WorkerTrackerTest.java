package io.spindle.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** When a run of the gang has failed or succeeded, and the restart budget between runs. */
class WorkerTrackerTest {

  private final AtomicLong now = new AtomicLong(1_000);

  private WorkerTracker tracker(Duration hang) {
    return new WorkerTracker(0, List.of("h1", "h2"), hang, now::get);
  }

  @Test
  void everyWorkerExitingZeroIsSuccessAndTheFirstNonZeroExitIsTheCause() {
    WorkerTracker t = tracker(Duration.ZERO);
    t.started(0);
    t.started(1);
    t.ended(0, 0, "");
    assertThat(t.succeeded()).isFalse();
    t.ended(1, 0, "");
    assertThat(t.succeeded()).isTrue();

    WorkerTracker f = tracker(Duration.ZERO);
    f.started(0);
    f.started(1);
    f.ended(1, 3, "Exception from container-launch.\nmore");
    f.ended(0, 143, "killed");
    assertThat(f.failure()).contains("rank 1 on h2 exited with status 3 (Exception from container-launch.)");
  }

  @Test
  void aWorkerSilentForLongerThanTheHangTimeoutHasFailedAndReportsKeepItAlive() {
    WorkerTracker t = tracker(Duration.ofSeconds(10));
    t.started(0);
    t.started(1);
    now.addAndGet(8_000);
    t.progress(0, 5);
    now.addAndGet(3_000);
    assertThat(t.checkHangs()).contains("rank 1 on h2 hung: no progress report for 11 s (--hang-timeout 10 s)");
    assertThat(t.describe()).containsExactly("rank 0 RUNNING on h1 (step 5)", "rank 1 FAILED on h2");
  }

  @Test
  void withoutAHangTimeoutSilenceIsFine() {
    WorkerTracker t = tracker(Duration.ZERO);
    t.started(0);
    now.addAndGet(86_400_000);
    assertThat(t.checkHangs()).isEmpty();
  }

  @Test
  void restartsAreBoundedAndBackOffExponentiallyUpToACap() {
    RestartBudget b = new RestartBudget(12, Duration.ofSeconds(10));
    assertThat(b.restartAfter("a")).isEqualTo(Duration.ofSeconds(10));
    assertThat(b.restartAfter("b")).isEqualTo(Duration.ofSeconds(20));
    assertThat(b.restartAfter("c")).isEqualTo(Duration.ofSeconds(40));
    for (int i = 0; i < 7; i++) {
      b.restartAfter("x");
    }
    assertThat(b.restartAfter("late")).isEqualTo(RestartBudget.MAX_BACKOFF);
    assertThat(b.allowsAnother()).isTrue();
    b.restartAfter("last");
    assertThat(b.allowsAnother()).isFalse();
    assertThat(b.reasons()).hasSize(12).startsWith("a", "b", "c");
  }
}
