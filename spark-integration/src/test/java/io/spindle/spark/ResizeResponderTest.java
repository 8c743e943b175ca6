package io.spindle.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.client.CheckpointDecision;
import io.spindle.client.CheckpointNoticeView;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** A resize notice: the named executors are decommissioned, and the notice is answered once they have gone. */
class ResizeResponderTest {

  private static final String C2 = "container_1_0001_01_000002";
  private static final String C3 = "container_1_0001_01_000003";
  private static final String C4 = "container_1_0001_01_000004";
  private static final String C5 = "container_1_0001_01_000005";

  private final ExecutorTasks tasks = new ExecutorTasks();
  private final Map<Set<String>, String> decommissioned = new ConcurrentHashMap<>();

  {
    tasks.executorAdded("1", C2);
    tasks.executorAdded("2", C3);
    tasks.executorAdded("3", C4);
    tasks.executorAdded("4", C5);
  }

  @Test
  void theNamedExecutorsAreDecommissionedAndTheAnswerWaitsUntilTheyHaveLeft() throws Exception {
    ResizeResponder r = responder(executors -> {
      // As Spark does: the executors leave by themselves once their blocks have moved.
      new Thread(() -> {
        sleep(300);
        executors.forEach(tasks::executorRemoved);
      }).start();
      return executors;
    }, Duration.ofSeconds(2));
    long start = System.nanoTime();

    CheckpointDecision d = r.onResize(resize(List.of(C4, C5), System.currentTimeMillis() + 20_000));

    assertThat(d).isEqualTo(CheckpointDecision.done());
    assertThat(decommissioned).containsOnlyKeys(Set.of("3", "4"));
    assertThat(decommissioned.get(Set.of("3", "4"))).contains("resize notice 9");
    assertThat((System.nanoTime() - start) / 1_000_000).as("waited for them").isBetween(250L, 5_000L);
    assertThat(tasks.executorsIn(List.of(C2, C3))).as("the others stay").containsExactly("1", "2");
  }

  @Test
  void executorsThatDoNotLeaveInTimeAreLeftToSpindleShortlyBeforeTheDeadline() throws Exception {
    ResizeResponder r = responder(executors -> executors, Duration.ofMillis(500));
    long deadline = System.currentTimeMillis() + 1_500;

    CheckpointDecision d = r.onResize(resize(List.of(C4, C5), deadline));

    assertThat(d).isEqualTo(CheckpointDecision.done());
    assertThat(System.currentTimeMillis()).as("answered about 500 ms before the deadline")
        .isBetween(deadline - 700, deadline - 300);
  }

  @Test
  void containersWithoutAnExecutorNeedNoDecommissioning() throws Exception {
    ResizeResponder r = responder(executors -> executors, Duration.ofSeconds(2));
    assertThat(r.onResize(resize(List.of("container_1_0001_01_000042"), System.currentTimeMillis() + 20_000)))
        .isEqualTo(CheckpointDecision.done());
    assertThat(decommissioned).isEmpty();
  }

  @Test
  void theNoticeResponderSendsResizesHereAndNeverToTheHandler() throws Exception {
    ResizeResponder resizes = responder(executors -> {
      executors.forEach(tasks::executorRemoved);
      return executors;
    }, Duration.ofSeconds(2));
    NoticeResponder n = new NoticeResponder((notice, sc) -> {
      throw new AssertionError("the handler is for preemptions");
    }, null, tasks, Duration.ofSeconds(2), System::currentTimeMillis, resizes);

    assertThat(n.onNotice(resize(List.of(C5), System.currentTimeMillis() + 20_000)))
        .isEqualTo(CheckpointDecision.done());
    assertThat(decommissioned).containsOnlyKeys(Set.of("4"));
    assertThat(n.lastCheckpoint()).as("a resize is no checkpoint").isEmpty();
  }

  private ResizeResponder responder(UnaryOperator<Set<String>> spark, Duration ackBeforeDeadline) {
    return new ResizeResponder(tasks, (executors, why) -> {
      decommissioned.put(Set.copyOf(executors), why);
      return spark.apply(executors);
    }, ackBeforeDeadline, System::currentTimeMillis);
  }

  private static CheckpointNoticeView resize(List<String> containers, long deadlineMillis) {
    return new CheckpointNoticeView("application_1_0001", 9, 1, List.of("gang-1"), containers, "urgent gang",
        System.currentTimeMillis(), deadlineMillis, 0, 1, 60_000, Optional.empty(), 2);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
