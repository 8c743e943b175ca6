package io.spindle.sim;

import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.PlacementSpec;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Strict FIFO over the whole cluster: one queue holding every job in submit order, and the first job that does not
 * fit stops the pass (no backfill, no reservations); a job's GPUs are granted all at once. Realised as the engine
 * with a single leaf queue and {@link EngineSettings#strictQueueOrder()}.
 */
public final class FifoPolicy implements SimPolicy {

  static final String QUEUE = "fifo";

  @Override
  public String name() {
    return "fifo";
  }

  @Override
  public String implementation() {
    return "engine, one leaf queue for all jobs, strict queue order (head-of-line blocking, no backfill), no "
        + "reservations; gangs whole; all nodes shared";
  }

  @Override
  public EngineSettings engineSettings() {
    EngineSettings d = EngineSettings.defaults();
    return d.withStrictQueueOrder(true).withReservations(d.reservationTimeoutMillis(), 0);
  }

  @Override
  public Map<String, String> queueConf(ClusterSpec cluster) {
    Map<String, String> conf = new LinkedHashMap<>();
    conf.put(ClusterSpecs.key("root.queues"), QUEUE);
    conf.put(ClusterSpecs.key("root." + QUEUE + ".capacity"), "100");
    conf.put(ClusterSpecs.key("root." + QUEUE + ".user-limit-factor"), "-1");
    return conf;
  }

  @Override
  public String engineQueue(SimJob job) {
    return QUEUE;
  }

  @Override
  public boolean isolatesPartitions() {
    return false;
  }

  @Override
  public PlacementSpec placement(SimJob job, Members members, int gpusPerNode, long declaredRuntimeMillis) {
    return Policies.gangSpec(job, members, gpusPerNode, 0);
  }
}
