package io.spindle.sim;

import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.PlacementSpec;
import java.util.Map;

/**
 * "Stock-YARN-like": the cluster's queues with CapacityScheduler-style borrowing (up to maximum-capacity), but no
 * gangs: a job's containers are plain requests granted one by one as capacity frees, so a job may hold some of its
 * containers while it waits for the rest (a partial gang: held GPUs that do no work). The job runs once it holds
 * them all. Realised as the engine with the job's containers asked as independent containers (no gang
 * {@link PlacementSpec}), no reservations, requests that do not fit skipped (as CapacityScheduler moves on to the
 * next application).
 */
public final class StockYarnPolicy implements SimPolicy {

  @Override
  public String name() {
    return "yarn";
  }

  @Override
  public String implementation() {
    return "engine, the cluster's queues with borrowing, a job's containers as independent requests (no gang, no "
        + "reservations), granted as capacity frees; the job starts when it holds all of them";
  }

  @Override
  public EngineSettings engineSettings() {
    EngineSettings d = EngineSettings.defaults();
    return d.withReservations(d.reservationTimeoutMillis(), 0);
  }

  @Override
  public Map<String, String> queueConf(ClusterSpec cluster) {
    return cluster.queueConf();
  }

  @Override
  public String engineQueue(SimJob job) {
    return job.queue();
  }

  @Override
  public boolean isolatesPartitions() {
    return false;
  }

  @Override
  public PlacementSpec placement(SimJob job, Members members, int gpusPerNode, long declaredRuntimeMillis) {
    return PlacementSpec.SINGLE;
  }
}
