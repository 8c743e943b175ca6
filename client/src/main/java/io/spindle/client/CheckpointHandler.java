package io.spindle.client;

/**
 * The application's side of a checkpoint notice. Registered with {@link SpindleCheckpointClient#register}.
 *
 * <p>Called on the client's own handler thread (one thread, calls never overlap, never ZooKeeper's event thread)
 * for every notice the application has not answered DONE, first when it is issued and again for each re-issue
 * (an extension granted or refused). A handler that takes long delays only later notices; revisions that pile
 * up meanwhile are delivered once, newest only.
 *
 * <p>A typical handler checkpoints and answers {@link CheckpointDecision#done(String, long)}; one whose checkpoint
 * will not fit before the deadline answers {@link CheckpointDecision#extend} at once, checkpoints on a thread of its
 * own and then calls {@link SpindleCheckpointClient#answer} with DONE. Throwing, or answering nothing, leaves the
 * notice unanswered: the containers are reclaimed at the deadline.
 */
@FunctionalInterface
public interface CheckpointHandler {

  /** What to answer to {@code notice}; {@link CheckpointDecision#later()} to answer nothing now. */
  CheckpointDecision onNotice(CheckpointNoticeView notice) throws Exception;

  /**
   * The scheduler closed notice {@code noticeId} (reclaimed, or no longer needs the containers). Called on the
   * handler thread; does nothing unless overridden.
   */
  default void onClosed(long noticeId) {}
}
