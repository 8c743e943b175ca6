package io.spindle.spark;

import io.spindle.client.CheckpointDecision;
import io.spindle.client.CheckpointNoticeView;
import org.apache.spark.SparkContext;

/**
 * What a Spark application does when Spindle is about to preempt some of its executors. Implement it with a public
 * no-argument constructor and name the class in {@code spark.spindle.checkpoint.handler}; {@link SpindlePlugin}'s
 * driver side creates one instance and calls it for each checkpoint notice.
 *
 * <p>A typical handler saves what the job cannot afford to recompute (write a model, a {@code Dataset}, the state of
 * a training loop) and answers {@link CheckpointDecision#done(String, long)} with where it is; Spindle then reclaims
 * the containers at once, and the plugin reports the checkpoint so victim selection knows this application has just
 * saved. {@link SpindleSpark#executorsIn} says which executors run in the notice's containers.
 *
 * <p>Called on the plugin's own thread (never Spark's listener bus, never ZooKeeper's event thread), one notice at a
 * time; it may block, and may run Spark jobs with {@code sc}. The deadline is {@link
 * CheckpointNoticeView#deadlineMillis()}; a handler that needs longer answers {@link CheckpointDecision#extend} and is
 * called again with the re-issued notice. Throwing leaves the notice unanswered: the executors go at the deadline.
 */
@FunctionalInterface
public interface SparkCheckpointHandler {

  /** What to answer to {@code notice}; the plugin writes the answer (the ack) when this returns. */
  CheckpointDecision onNotice(CheckpointNoticeView notice, SparkContext sc) throws Exception;
}
