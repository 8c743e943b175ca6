package io.spindle.client;

import static io.spindle.client.CheckpointNoticeView.require;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * An application's answer to one checkpoint notice, as written to ZooKeeper and as the scheduler reads it.
 *
 * @param appId the application answering
 * @param noticeId the notice answered
 * @param noticeRevision the notice revision the application saw when it answered
 * @param kind DONE (checkpointed: reclaim now) or EXTEND (asks for more time)
 * @param requestedExtensionMillis EXTEND: how much later the application wants the deadline; 0 for DONE
 * @param checkpointLocation DONE: where the checkpoint is, if the application has one
 * @param checkpointMillis DONE: when that checkpoint was taken, epoch ms
 * @param answeredMillis when the application wrote the answer, epoch ms on its clock
 */
public record CheckpointAckView(String appId, long noticeId, int noticeRevision, Kind kind,
    long requestedExtensionMillis, Optional<String> checkpointLocation, OptionalLong checkpointMillis,
    long answeredMillis) {

  /** Locations are references (URIs), not data: anything longer is refused. */
  public static final int MAX_LOCATION_CHARS = 4096;

  public enum Kind { DONE, EXTEND }

  public CheckpointAckView {
    CheckpointPaths.checkAppId(appId);
    require(noticeId >= 0, "noticeId must be >= 0, not " + noticeId);
    require(noticeRevision >= 1, "noticeRevision must be >= 1, not " + noticeRevision);
    require(kind != null, "kind must be DONE or EXTEND");
    checkpointLocation = checkpointLocation == null ? Optional.empty() : checkpointLocation;
    checkpointMillis = checkpointMillis == null ? OptionalLong.empty() : checkpointMillis;
    if (kind == Kind.EXTEND) {
      require(requestedExtensionMillis > 0, "EXTEND must ask for more than 0 ms, not " + requestedExtensionMillis);
      require(checkpointLocation.isEmpty(), "EXTEND carries no checkpoint location");
    } else {
      require(requestedExtensionMillis == 0, "DONE asks for no extension, not " + requestedExtensionMillis + " ms");
    }
    checkpointLocation.ifPresent(CheckpointAckView::checkLocation);
    require(checkpointMillis.orElse(0) >= 0, "checkpointMillis must be >= 0, not " + checkpointMillis);
  }

  static String checkLocation(String location) {
    require(location != null && !location.isBlank(), "checkpoint location must not be blank");
    require(location.length() <= MAX_LOCATION_CHARS,
        "checkpoint location is " + location.length() + " chars, more than " + MAX_LOCATION_CHARS);
    return location;
  }
}
