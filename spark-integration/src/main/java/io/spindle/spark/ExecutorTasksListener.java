package io.spindle.spark;

import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import scala.Option;

/** Feeds {@link ExecutorTasks} from Spark's listener bus. */
final class ExecutorTasksListener extends SparkListener {

  private final ExecutorTasks tasks;

  ExecutorTasksListener(ExecutorTasks tasks) {
    this.tasks = tasks;
  }

  @Override
  public void onExecutorAdded(SparkListenerExecutorAdded added) {
    Option<String> container = added.executorInfo().attributes().get(ExecutorTasks.CONTAINER_ID);
    tasks.executorAdded(added.executorId(), container.isDefined() ? container.get() : null);
  }

  @Override
  public void onExecutorRemoved(SparkListenerExecutorRemoved removed) {
    tasks.executorRemoved(removed.executorId());
  }

  @Override
  public void onTaskStart(SparkListenerTaskStart start) {
    tasks.taskStarted(start.taskInfo().executorId());
  }

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    tasks.taskEnded(end.taskInfo().executorId());
  }
}
