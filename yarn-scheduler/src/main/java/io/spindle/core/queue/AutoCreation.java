package io.spindle.core.queue;

/**
 * How a parent queue creates leaf queues on an application's first submission, as CapacityScheduler's auto-created
 * queues do (a placement rule such as {@code u:%user:root.users.%user} names a leaf that does not exist yet).
 *
 * <ul>
 *   <li>{@link Mode#LEGACY}: {@code auto-create-child-queue.enabled}. The parent (CapacityScheduler's managed parent)
 *       holds only created leaves; each gets {@code leaf-queue-template.capacity} percent of it while those
 *       guarantees fit in the parent, later ones 0 (CapacityScheduler's guaranteed-or-zero policy), so an idle
 *       team's queue never dilutes those of teams that came first.
 *   <li>{@link Mode#FLEXIBLE}: {@code auto-queue-creation-v2.enabled}. Created leaves sit beside declared ones and
 *       share the parent by weight, {@code 1w} unless the template says otherwise.
 * </ul>
 *
 * @param maxQueues how many created leaves the parent may hold ({@code auto-create-child-queue.max-queues},
 *     {@code auto-queue-creation-v2.max-queues}; 1000 by default as in CapacityScheduler)
 * @param failBeyondCapacity legacy {@code auto-create-child-queue.fail-on-exceeding-parent-capacity}: refuse to create
 *     a leaf whose guarantee no longer fits in the parent, rather than create it with none
 * @param maxDepth flexible only: how many levels a submission may create below this queue, parents and leaf together
 *     ({@code auto-queue-creation-v2.maximum-queue-depth}, 2 by default as in CapacityScheduler); a created parent is
 *     itself flexible and creates as this queue does
 * @param templateLabels the node labels and label capacities of created leaves ({@code leaf-queue-template.}, or the
 *     flexible templates, {@code .accessible-node-labels…}); {@link QueueLabels#INHERIT} where the template sets none
 */
public record AutoCreation(Mode mode, Capacity templateCapacity, Capacity templateMaximum, double templateUserLimitFactor,
    int maxQueues, boolean failBeyondCapacity, int maxDepth, QueueLabels templateLabels) {

  public enum Mode { LEGACY, FLEXIBLE }

  public static final String LEGACY_ENABLED = "auto-create-child-queue.enabled";
  public static final String LEGACY_TEMPLATE = "leaf-queue-template.";
  public static final String FLEXIBLE_ENABLED = "auto-queue-creation-v2.enabled";
  public static final String FLEXIBLE_TEMPLATE = "auto-queue-creation-v2.template.";
  /** Keys of created leaves only (CapacityScheduler 3.3+), read before the plain template. */
  public static final String FLEXIBLE_LEAF_TEMPLATE = "auto-queue-creation-v2.leaf-template.";
  public static final String LEGACY_MAX_QUEUES = "auto-create-child-queue.max-queues";
  public static final String LEGACY_FAIL_BEYOND_CAPACITY = "auto-create-child-queue.fail-on-exceeding-parent-capacity";
  public static final String FLEXIBLE_MAX_QUEUES = "auto-queue-creation-v2.max-queues";
  public static final int DEFAULT_MAX_QUEUES = 1000;
  public static final String FLEXIBLE_MAX_DEPTH = "auto-queue-creation-v2.maximum-queue-depth";
  public static final int DEFAULT_MAX_DEPTH = 2;
}
