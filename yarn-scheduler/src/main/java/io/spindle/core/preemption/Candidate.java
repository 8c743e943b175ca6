package io.spindle.core.preemption;

import io.spindle.core.model.AppId;
import io.spindle.core.model.ResourceVector;
import java.util.List;

/**
 * Something that runs and could be preempted: a whole gang, one container that is not part of a gang, or a group of
 * members an elastic gang grew by above its minimum ({@code elastic}), which goes through a resize notice while the
 * gang runs on. A rigid gang is taken whole or not at all.
 *
 * @param unitId the engine's id of the running gang or container, unique and increasing with start order
 * @param queue the leaf queue's path
 * @param charge what its containers are charged, together
 * @param startMillis when it started
 * @param checkpointMillis when its application last reported a checkpoint, {@link Long#MIN_VALUE} if never
 * @param elastic members an elastic gang grew by: taken before anything else ({@link VictimOrder})
 * @param rank where its queue's ordering puts its application ({@code least-attained}: the level of its attained
 *     service; {@code shortest-first}: the run time it has left), lower first
 * @param reorderable whether a need of its queue that ranks before it may take it ({@link Need#reorders}): its queue
 *     preempts by ordering, it has run its queue's minimum run time since it started, and its application has not
 *     waited the queue's starvation bound
 * @param submitMillis when its application was submitted: a need that has waited its starvation bound may take work
 *     submitted after it
 */
public record Candidate(long unitId, AppId appId, String requestKey, String queue, String user, int priority,
    ResourceVector charge, long startMillis, long checkpointMillis, List<Long> allocationIds, boolean elastic,
    long rank, boolean reorderable, long submitMillis) {

  public Candidate {
    allocationIds = List.copyOf(allocationIds);
  }

  /** Not taken by ordering. */
  public Candidate(long unitId, AppId appId, String requestKey, String queue, String user, int priority,
      ResourceVector charge, long startMillis, long checkpointMillis, List<Long> allocationIds, boolean elastic) {
    this(unitId, appId, requestKey, queue, user, priority, charge, startMillis, checkpointMillis, allocationIds,
        elastic, 0, false, 0);
  }

  /** A whole gang, or one container. */
  public Candidate(long unitId, AppId appId, String requestKey, String queue, String user, int priority,
      ResourceVector charge, long startMillis, long checkpointMillis, List<Long> allocationIds) {
    this(unitId, appId, requestKey, queue, user, priority, charge, startMillis, checkpointMillis, allocationIds,
        false);
  }

  /** Milliseconds of work since the last checkpoint (or start): what preempting it now would throw away. */
  public long elapsedSinceCheckpoint(long nowMillis) {
    return Math.max(0, nowMillis - Math.max(startMillis, checkpointMillis));
  }

  /**
   * Work lost if preempted now, in GPU-unit milliseconds (840 units to a GPU): elapsed time since the last
   * checkpoint times the GPU-equivalents held. Containers without GPUs lose no GPU work and cost 0.
   */
  public long workLost(long nowMillis) {
    long elapsed = elapsedSinceCheckpoint(nowMillis);
    long units = charge.gpuUnits();
    // Saturate: a year of a 10,000-GPU gang is still far below the limit, but nothing here may wrap.
    return units == 0 ? 0 : (elapsed > Long.MAX_VALUE / units ? Long.MAX_VALUE : elapsed * units);
  }
}
