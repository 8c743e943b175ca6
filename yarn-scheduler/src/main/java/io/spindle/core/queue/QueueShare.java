package io.spindle.core.queue;

import io.spindle.core.model.ResourceVector;

/**
 * A queue's resolved amounts for one cycle.
 *
 * @param guarantee what the queue is promised (its capacity, resolved against the cluster)
 * @param maximum what it may never exceed (its maximum-capacity, resolved)
 * @param demand what it uses plus what it asks for, capped at its maximum
 * @param fairShare its hierarchical dominant-resource fair share: the guarantee it can use, plus its weighted part
 *     of what siblings leave idle
 * @param historyFactor what usage history multiplied the queue's weight by when its parent shared idle capacity
 *     ({@link UsageWeighting}): 1 when history is off or changed nothing
 */
public record QueueShare(String path, ResourceVector guarantee, ResourceVector maximum, ResourceVector demand,
    ResourceVector fairShare, double historyFactor) {

  /** A share that usage history did not weigh. */
  public QueueShare(String path, ResourceVector guarantee, ResourceVector maximum, ResourceVector demand,
      ResourceVector fairShare) {
    this(path, guarantee, maximum, demand, fairShare, 1.0);
  }
}
