package io.spindle.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Spindle's notices name YARN containers; the plugin needs the executors in them and what they run. */
class ExecutorTasksTest {

  @Test
  void containersMapToTheirExecutorsAndTheirRunningTasksAreCounted() {
    ExecutorTasks t = new ExecutorTasks();
    t.executorAdded("1", "container_1_0001_01_000002");
    t.executorAdded("2", "container_1_0001_01_000003");
    t.executorAdded("driver", null); // local mode: no container
    t.taskStarted("1");
    t.taskStarted("1");
    t.taskStarted("2");
    List<String> first = List.of("container_1_0001_01_000002", "container_1_0001_01_000009");
    assertThat(t.executorsIn(first)).containsExactly("1");
    assertThat(t.runningIn(first)).isEqualTo(2);
    t.taskEnded("1");
    t.taskEnded("1");
    t.taskEnded("1"); // an end whose start this listener missed never goes below zero
    assertThat(t.runningIn(first)).isZero();
    assertThat(t.runningIn(List.of("container_1_0001_01_000003"))).isEqualTo(1);
    t.executorRemoved("2");
    assertThat(t.executorsIn(List.of("container_1_0001_01_000003"))).isEmpty();
    assertThat(t.runningIn(List.of("container_1_0001_01_000003"))).isZero();
  }
}
