package io.spindle.spark;

import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * Spindle's Spark plugin, enabled with {@code --conf spark.plugins=io.spindle.spark.SpindlePlugin} (and this JAR in
 * {@code --jars}). Its driver side listens for Spindle's checkpoint notices, calls the application's
 * {@link SparkCheckpointHandler} ({@code spark.spindle.checkpoint.handler}) or, without one, lets the tasks on the
 * named executors finish, answers before the deadline and reports checkpoints (see {@link SpindleSpark}). A resize
 * notice of an elastic executor gang ({@code spindle.gang.min}) decommissions the executors it names instead, and the
 * job runs on. Executors need nothing from it. See {@code docs/spark-guide.md}.
 */
public final class SpindlePlugin implements SparkPlugin {

  /** The class name of the application's {@link SparkCheckpointHandler}; none: drain and acknowledge. */
  public static final String HANDLER = "spark.spindle.checkpoint.handler";
  /** Without a handler: how long before the deadline to stop waiting for running tasks and answer (default 2s). */
  public static final String ACK_BEFORE_DEADLINE = "spark.spindle.checkpoint.ackBeforeDeadline";
  /** Whether the driver listens for notices at all (default true). */
  public static final String ENABLED = "spark.spindle.checkpoint.enabled";

  @Override
  public DriverPlugin driverPlugin() {
    return new SpindleDriverPlugin();
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return null;
  }
}
