package io.spindle.sim;

import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.PlacementSpec;
import java.util.Map;

/** A policy that is another one with one thing changed: everything it does not override is the base policy's. */
interface WrappingPolicy extends SimPolicy {

  SimPolicy base();

  @Override
  default EngineSettings engineSettings() {
    return base().engineSettings();
  }

  @Override
  default Map<String, String> queueConf(ClusterSpec cluster) {
    return base().queueConf(cluster);
  }

  @Override
  default String engineQueue(SimJob job) {
    return base().engineQueue(job);
  }

  @Override
  default boolean isolatesPartitions() {
    return base().isolatesPartitions();
  }

  @Override
  default PlacementSpec placement(SimJob job, Members members, int gpusPerNode, long declaredRuntimeMillis) {
    return base().placement(job, members, gpusPerNode, declaredRuntimeMillis);
  }

  @Override
  default PreemptionMode preemption() {
    return base().preemption();
  }
}
