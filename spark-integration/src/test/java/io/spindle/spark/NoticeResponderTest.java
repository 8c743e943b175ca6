package io.spindle.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.client.CheckpointDecision;
import io.spindle.client.CheckpointNoticeView;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The driver's answer to a notice: the user's handler and its checkpoint, or drain the named executors and ack. */
class NoticeResponderTest {

  private static final String C2 = "container_1_0001_01_000002";
  private static final String C3 = "container_1_0001_01_000003";

  private final ExecutorTasks tasks = new ExecutorTasks();
  private final List<String> reported = new ArrayList<>();

  @Test
  void theHandlersCheckpointIsTheAnswerAndIsReported() throws Exception {
    List<CheckpointNoticeView> seen = new ArrayList<>();
    NoticeResponder r = new NoticeResponder((notice, sc) -> {
      seen.add(notice);
      return CheckpointDecision.done("hdfs:///ckpt/step-42", 1_000);
    }, null, tasks, Duration.ofSeconds(2), System::currentTimeMillis);
    r.reportTo((location, millis) -> reported.add(location + "@" + millis));
    CheckpointNoticeView notice = notice(System.currentTimeMillis() + 10_000);

    CheckpointDecision d = r.onNotice(notice);

    assertThat(seen).containsExactly(notice);
    assertThat(d).isEqualTo(CheckpointDecision.done("hdfs:///ckpt/step-42", 1_000));
    assertThat(reported).containsExactly("hdfs:///ckpt/step-42@1000");
    assertThat(r.lastCheckpoint()).contains(new SparkCheckpoint("hdfs:///ckpt/step-42", 1_000));
  }

  @Test
  void anExtensionIsPassedOnAndReportsNothing() throws Exception {
    NoticeResponder r = new NoticeResponder((notice, sc) -> CheckpointDecision.extend(Duration.ofSeconds(30)), null,
        tasks, Duration.ofSeconds(2), System::currentTimeMillis);
    r.reportTo((location, millis) -> reported.add(location));
    assertThat(r.onNotice(notice(System.currentTimeMillis() + 10_000))).isInstanceOf(CheckpointDecision.Extend.class);
    assertThat(reported).isEmpty();
    assertThat(r.lastCheckpoint()).isEmpty();
  }

  @Test
  void withoutAHandlerItWaitsForTheNamedExecutorsTasksThenAcks() throws Exception {
    tasks.executorAdded("1", C2);
    tasks.executorAdded("2", C3);
    tasks.taskStarted("1");
    tasks.taskStarted("2"); // on an executor the notice does not name: not waited for
    NoticeResponder r = new NoticeResponder(null, null, tasks, Duration.ofSeconds(2), System::currentTimeMillis);
    Thread finisher = new Thread(() -> {
      sleep(400);
      tasks.taskEnded("1");
    });
    finisher.start();
    long start = System.nanoTime();

    CheckpointDecision d = r.onNotice(notice(System.currentTimeMillis() + 20_000));

    long tookMillis = (System.nanoTime() - start) / 1_000_000;
    finisher.join();
    assertThat(d).isEqualTo(CheckpointDecision.done());
    assertThat(tookMillis).isBetween(350L, 5_000L);
  }

  @Test
  void withoutAHandlerItAcksBeforeTheDeadlineEvenIfTasksStillRun() throws Exception {
    tasks.executorAdded("1", C2);
    tasks.taskStarted("1");
    NoticeResponder r = new NoticeResponder(null, null, tasks, Duration.ofMillis(500), System::currentTimeMillis);
    long deadline = System.currentTimeMillis() + 1_500;

    CheckpointDecision d = r.onNotice(notice(deadline));

    assertThat(d).isEqualTo(CheckpointDecision.done());
    assertThat(System.currentTimeMillis()).as("answered about 500 ms before the deadline")
        .isBetween(deadline - 700, deadline - 300);
  }

  @Test
  void reportedCheckpointsKeepTheLatestAndNeedNoConnectionToBeRemembered() {
    NoticeResponder r = new NoticeResponder(null, null, tasks, Duration.ofSeconds(2), System::currentTimeMillis);
    assertThat(r.checkpointed("file:/a", 2_000)).as("not connected: remembered, not reported").isFalse();
    r.reportTo((location, millis) -> {
      throw new java.io.IOException("ZooKeeper is away");
    });
    assertThat(r.checkpointed("file:/old", 1_000)).isFalse();
    assertThat(r.lastCheckpoint()).contains(new SparkCheckpoint("file:/a", 2_000));
  }

  private static CheckpointNoticeView notice(long deadlineMillis) {
    return new CheckpointNoticeView("application_1_0001", 7, 1, List.of("gang-1"), List.of(C2), "urgent gang",
        System.currentTimeMillis(), deadlineMillis, 0, 1, 60_000, Optional.empty());
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
