package io.spindle.core.preemption;

import io.spindle.core.model.AppId;
import io.spindle.core.model.ResourceVector;

/**
 * A waiting request that preemption may serve: a whole gang, or one container of a request for single containers
 * (each further container of it is a need of its own, planned only while its queue stays within its fair share).
 *
 * @param queue the leaf queue's path
 * @param charge what placing it adds to its queue's usage
 * @param containers how many containers it places (the gang's size, or 1)
 * @param crossQueue whether it may take from other queues: its queue has been below its fair share for the
 *     starvation delay. Without it, only lower-priority work of its own queue is eligible.
 * @param userUsage what the request's user holds in its queue now
 * @param userLimit the most that user may hold in the queue, {@code null} for no per-user limit
 * @param reorders its queue preempts by its ordering ({@code spindle.ordering.preemption}): it may take work of its
 *     own queue and priority whose {@link Candidate#rank} is strictly above its own
 * @param rank where its queue's ordering puts it, lower first (see {@link Candidate#rank}); {@link #AGED} for an
 *     application that has waited its queue's starvation bound, which may take work submitted after it whatever its
 *     rank
 * @param submitMillis when its application was submitted
 */
public record Need(AppId appId, String requestKey, String queue, String user, int priority, ResourceVector charge,
    int containers, boolean gang, boolean crossQueue, ResourceVector userUsage, ResourceVector userLimit,
    boolean reorders, long rank, long submitMillis) {

  /** The rank of a need whose application has waited its queue's starvation bound. */
  public static final long AGED = Long.MIN_VALUE;

  /** A need that takes nothing by its queue's ordering (as every need restored after a failover). */
  public Need(AppId appId, String requestKey, String queue, String user, int priority, ResourceVector charge,
      int containers, boolean gang, boolean crossQueue, ResourceVector userUsage, ResourceVector userLimit) {
    this(appId, requestKey, queue, user, priority, charge, containers, gang, crossQueue, userUsage, userLimit, false,
        0, 0);
  }
}
