package io.spindle.sim;

import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.PlacementSpec;
import java.util.Map;

/**
 * A scheduling policy as the simulator runs it. Every policy drives the same {@link io.spindle.core.engine.Engine}
 * through the same simulator loop; a policy only chooses the engine's settings, the queue configuration it
 * runs, whether queues are confined to their own nodes, and how a job's containers are asked for.
 */
public interface SimPolicy {

  /** Short name, as given to {@code --policy}. */
  String name();

  /** One sentence: how this policy is realised on the engine (printed in reports). */
  String implementation();

  EngineSettings engineSettings();

  /** The CapacityScheduler keys the engine runs with, derived from the cluster's own. */
  Map<String, String> queueConf(ClusterSpec cluster);

  /** The engine leaf queue a job is submitted to. */
  String engineQueue(SimJob job);

  /** True: a node of a partition serves only its own queue's jobs (the HeliosArtifact rule of isolated VCs). */
  boolean isolatesPartitions();

  /**
   * How the job's containers are placed.
   *
   * @param declaredRuntimeMillis the run time the job's owner declares (0: none)
   */
  PlacementSpec placement(SimJob job, Members members, int gpusPerNode, long declaredRuntimeMillis);

  /** Whether the policy preempts, and how the simulated applications answer a checkpoint notice. */
  default PreemptionMode preemption() {
    return PreemptionMode.NONE;
  }
}
