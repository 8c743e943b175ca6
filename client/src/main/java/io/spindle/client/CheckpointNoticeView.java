package io.spindle.client;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A checkpoint notice as the application sees it: the scheduler will reclaim {@link #containerIds()} at
 * {@link #deadlineMillis()} unless the application answers DONE sooner or is granted more time.
 *
 * <p>A notice is re-issued with the same {@link #noticeId()} and a higher {@link #revision()} when the scheduler
 * answers an extension request: granted, {@link #deadlineMillis()} moves and {@link #extensionsGranted()} rises;
 * refused, {@link #refusal()} says why and the deadline stays.
 *
 * @param appId the application the notice is for
 * @param noticeId unique within the application
 * @param revision 1 when first issued, one higher on every re-issue (0: not yet issued)
 * @param gangKeys the gangs whose containers go
 * @param containerIds the YARN container ids that go
 * @param reason why, for people
 * @param issuedMillis when this revision was written, epoch ms on the ResourceManager's clock
 * @param deadlineMillis when the containers are reclaimed unless acknowledged, epoch ms on the ResourceManager's clock
 * @param extensionsGranted extensions granted so far
 * @param maxExtensions the most extensions the application's queue grants
 * @param maxExtensionMillis the most one extension adds
 * @param refusal set when this revision refuses an extension request: why
 * @param targetSize 0 when the gangs named stop whole (a preemption); above 0 for a <em>resize</em> of an elastic gang:
 *     only {@link #containerIds()} go, and the gang runs on with this many members. The application checkpoints or
 *     re-shards, answers DONE, and goes on at the new size (docs/training-guide.md, "Elastic jobs")
 */
public record CheckpointNoticeView(String appId, long noticeId, int revision, List<String> gangKeys,
    List<String> containerIds, String reason, long issuedMillis, long deadlineMillis, int extensionsGranted,
    int maxExtensions, long maxExtensionMillis, Optional<String> refusal, int targetSize) {

  public CheckpointNoticeView {
    CheckpointPaths.checkAppId(appId);
    require(noticeId >= 0, "noticeId must be >= 0, not " + noticeId);
    require(revision >= 0, "revision must be >= 0, not " + revision);
    gangKeys = List.copyOf(gangKeys);
    containerIds = List.copyOf(containerIds);
    require(reason != null, "reason must be given");
    require(extensionsGranted >= 0, "extensionsGranted must be >= 0, not " + extensionsGranted);
    require(maxExtensions >= 0, "maxExtensions must be >= 0, not " + maxExtensions);
    require(maxExtensionMillis >= 0, "maxExtensionMillis must be >= 0, not " + maxExtensionMillis);
    refusal = refusal == null ? Optional.empty() : refusal;
    require(targetSize >= 0, "targetSize must be >= 0, not " + targetSize);
  }

  /** A notice that stops its gangs whole (a preemption, not a resize). */
  public CheckpointNoticeView(String appId, long noticeId, int revision, List<String> gangKeys,
      List<String> containerIds, String reason, long issuedMillis, long deadlineMillis, int extensionsGranted,
      int maxExtensions, long maxExtensionMillis, Optional<String> refusal) {
    this(appId, noticeId, revision, gangKeys, containerIds, reason, issuedMillis, deadlineMillis, extensionsGranted,
        maxExtensions, maxExtensionMillis, refusal, 0);
  }

  /** Whether this notice shrinks an elastic gang to {@link #targetSize()} rather than stopping it whole. */
  public boolean isResize() {
    return targetSize > 0;
  }

  /** Time left until the deadline at {@code nowMillis}; negative once it has passed. Clocks of AM and RM differ. */
  public Duration timeLeft(long nowMillis) {
    return Duration.ofMillis(deadlineMillis - nowMillis);
  }

  /** Whether the queue still grants extensions of this notice (the scheduler decides each request). */
  public boolean mayExtend() {
    return extensionsGranted < maxExtensions && maxExtensionMillis > 0;
  }

  /** This notice as revision {@code revision}. */
  public CheckpointNoticeView withRevision(int revision) {
    return new CheckpointNoticeView(appId, noticeId, revision, gangKeys, containerIds, reason, issuedMillis,
        deadlineMillis, extensionsGranted, maxExtensions, maxExtensionMillis, refusal, targetSize);
  }

  static void require(boolean condition, String message) {
    if (!condition) {
      throw new IllegalArgumentException(message);
    }
  }
}
