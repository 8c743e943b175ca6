package io.spindle.core.preemption;

import io.spindle.core.model.ResourceVector;

/**
 * One queue as the preemption planner sees it in one cycle.
 *
 * @param parent the parent's path, {@code null} for root
 * @param hasSibling whether the parent has other children: only such a queue can lose capacity to a sibling
 * @param usage what the queue will hold once the reclaims already in flight are done: its usage, less the victims
 *     already noticed, plus what their beneficiaries will be given
 */
public record QueueView(String path, String parent, boolean hasSibling, ResourceVector fairShare,
    ResourceVector maximum, ResourceVector usage) {}
