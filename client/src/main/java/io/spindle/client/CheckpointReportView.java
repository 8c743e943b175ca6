package io.spindle.client;

import static io.spindle.client.CheckpointNoticeView.require;

/**
 * An application's last checkpoint, which a gang preempted without a DONE answer re-queues with.
 *
 * @param appId the application reporting
 * @param location where the checkpoint is (a URI the application can restart from)
 * @param checkpointMillis when it was taken, epoch ms on the application's clock
 * @param reportedMillis when the application wrote the report, epoch ms on its clock
 */
public record CheckpointReportView(String appId, String location, long checkpointMillis, long reportedMillis) {

  public CheckpointReportView {
    CheckpointPaths.checkAppId(appId);
    CheckpointAckView.checkLocation(location);
    require(checkpointMillis >= 0, "checkpointMillis must be >= 0, not " + checkpointMillis);
  }
}
