package io.spindle.yarn;

/**
 * The YARN adapter's two locks besides each attempt's monitor. Lock order: {@link #nodeRemoval}, then an attempt's
 * monitor, then {@link #queueMetrics}, then YARN's own locks (the scheduler's, in recovery; an attempt's read-write
 * lock).
 */
final class SchedulerLocks {

  /**
   * Held around everything that changes or reads YARN's queue metrics: applications' asks (IPC handlers),
   * allocations (the scheduling thread), completions and recovery (the dispatcher). YARN keeps the GPU and other
   * custom-resource figures of a queue in a plain HashMap, shared by every application of the queue and, through the
   * parents, of the cluster; concurrent updates lost counts or threw ConcurrentModificationException out of an AM's
   * allocate call (found by the failover soak, docs/reliability.md).
   */
  final Object queueMetrics = new Object();

  /**
   * Makes a node's removal one step for the scheduling thread. The removal is the losses of the node's containers and
   * then the node's leaving: a cycle that drained the inbox between the two restarted the lost containers' gang on the
   * leaving node, still free in the engine, and its AM got containers on a NodeManager that was gone
   * (FaultMatrixTest, docs/reliability.md); and containers handed out while the node was being removed were missed by
   * it. Held by the removal, by the inbox's drain and around handing out a cycle's containers.
   */
  final Object nodeRemoval = new Object();
}
