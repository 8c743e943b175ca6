package io.spindle.core.placement;

/**
 * Memory slices of the cluster's MIG-mode GPUs.
 *
 * @param total slices of all MIG-mode GPUs
 * @param used slices held by running instances
 * @param unheldOnBusy free slices on GPUs that also run something: they serve only instances their layout already
 *     has, since a busy GPU is not re-partitioned under its work wholesale; the slices a waiting MIG request finds
 *     stranded (the simulator's and benchmark's definition). Idle GPUs are not counted: they can be re-partitioned.
 */
public record MigSlices(long total, long used, long unheldOnBusy) {

  public static final MigSlices NONE = new MigSlices(0, 0, 0);
}
