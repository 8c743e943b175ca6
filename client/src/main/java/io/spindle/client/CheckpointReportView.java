package io.spindle.client;

import static io.spindle.client.CheckpointNoticeView.require;

import java.util.OptionalLong;

/**
 * An application's last checkpoint, which a gang preempted without a DONE answer re-queues with.
 *
 * @param appId the application reporting
 * @param location where the checkpoint is (a URI the application can restart from)
 * @param checkpointMillis when it was taken, epoch ms on the application's clock
 * @param reportedMillis when the application wrote the report, epoch ms on its clock
 * @param writeMillis how long the checkpoint took to write, if the application said: the scheduler advises the
 *     checkpoint interval from it
 */
public record CheckpointReportView(String appId, String location, long checkpointMillis, long reportedMillis,
    OptionalLong writeMillis) {

  public CheckpointReportView {
    CheckpointPaths.checkAppId(appId);
    CheckpointAckView.checkLocation(location);
    require(checkpointMillis >= 0, "checkpointMillis must be >= 0, not " + checkpointMillis);
    require(writeMillis != null, "writeMillis must be given (empty when not said)");
    require(writeMillis.orElse(0) >= 0, "writeMillis must be >= 0, not " + writeMillis.orElse(0));
  }

  /** A report that does not say how long the write took. */
  public CheckpointReportView(String appId, String location, long checkpointMillis, long reportedMillis) {
    this(appId, location, checkpointMillis, reportedMillis, OptionalLong.empty());
  }
}
