package io.spindle.channel.checkpoint;

import io.spindle.client.CheckpointAckView;
import io.spindle.client.CheckpointNoticeView;
import io.spindle.client.CheckpointReportView;

/**
 * What the scheduler hears from applications through {@link CheckpointNoticeStore}. Called on the store's reader
 * thread, one call at a time, never on ZooKeeper's event thread; a call that blocks delays the calls after it.
 *
 * <p>Delivery is at least once: the same ack can arrive again (an application re-writing it, or every open answer
 * once more after a ResourceManager restart), so handle each idempotently.
 */
public interface CheckpointListener {

  /**
   * A valid answer of the owning application to an open notice. DONE: reclaim now, re-queue with the location (or
   * the last report's). EXTEND: decide, then re-issue the notice — a later deadline, or a refusal — with
   * {@link CheckpointNoticeStore#issue}. An EXTEND is passed on only when it answers the notice's current revision.
   *
   * @param notice the notice as it stands now (its current revision)
   */
  void onAck(CheckpointAckView ack, CheckpointNoticeView notice);

  /** The application's last checkpoint, whenever it reports one. */
  void onReport(CheckpointReportView report);

  /**
   * An ack or report that was refused and not passed on (already logged). The notice's deadline stands. For
   * metrics; does nothing unless overridden.
   *
   * @param path the znode
   * @param reason why, for people
   */
  default void onRejected(String appId, String path, String reason) {}
}
