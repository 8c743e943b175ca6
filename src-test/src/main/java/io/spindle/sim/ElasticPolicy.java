package io.spindle.sim;

import io.spindle.core.engine.Elasticity;
import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.PlacementSpec;
import java.util.Map;

/**
 * A policy whose gangs of several containers are elastic ({@code <policy>+elastic}): the same engine, queues and
 * placement as the base policy, but such a job starts as soon as a quarter of its members fit, grows one member at a
 * time into idle capacity and, under a preempting base, gives grown members back through resize notices before it is
 * preempted whole. How fast it runs on fewer members is {@link SimOptions#elastic()}'s model.
 */
public record ElasticPolicy(SimPolicy base, ElasticModel model, long seed) implements SimPolicy {

  public static final String SUFFIX = "elastic";

  @Override
  public String name() {
    return base.name() + "+" + SUFFIX;
  }

  @Override
  public String implementation() {
    return base.implementation() + "; " + model.describe();
  }

  @Override
  public EngineSettings engineSettings() {
    return base.engineSettings();
  }

  @Override
  public Map<String, String> queueConf(ClusterSpec cluster) {
    return base.queueConf(cluster);
  }

  @Override
  public String engineQueue(SimJob job) {
    return base.engineQueue(job);
  }

  @Override
  public boolean isolatesPartitions() {
    return base.isolatesPartitions();
  }

  @Override
  public PlacementSpec placement(SimJob job, Members members, int gpusPerNode, long declaredRuntimeMillis) {
    PlacementSpec spec = base.placement(job, members, gpusPerNode, declaredRuntimeMillis);
    if (!spec.gang() || members.count() < 2 || !model.picks(job, seed)) {
      return spec;
    }
    return spec.withElasticity(Elasticity.of(Math.max(1, members.count() / 4), 1));
  }

  @Override
  public PreemptionMode preemption() {
    return base.preemption();
  }
}
