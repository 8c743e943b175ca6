package io.spindle.spark.examples;

import io.spindle.client.CheckpointDecision;
import io.spindle.client.CheckpointNoticeView;
import io.spindle.spark.SparkCheckpointHandler;
import io.spindle.spark.SpindleSpark;
import org.apache.spark.SparkContext;

/**
 * {@link CheckpointedSteps}' answer to a Spindle checkpoint notice: save the step reached now and acknowledge with
 * where it is. Enabled with {@code spark.spindle.checkpoint.handler=io.spindle.spark.examples.CheckpointedStepsHandler}.
 */
public final class CheckpointedStepsHandler implements SparkCheckpointHandler {

  @Override
  public CheckpointDecision onNotice(CheckpointNoticeView notice, SparkContext sc) throws Exception {
    if (CheckpointedSteps.dir == null) {
      return CheckpointDecision.done(); // not started yet: nothing to save
    }
    long now = System.currentTimeMillis();
    String where = CheckpointedSteps.save(CheckpointedSteps.STEP.get());
    System.out.println("Spindle preempts executors " + SpindleSpark.executorsIn(notice.containerIds())
        + ": saved step " + CheckpointedSteps.STEP.get() + " to " + where);
    return CheckpointDecision.done(where, now);
  }
}
