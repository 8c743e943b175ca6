package io.spindle.core.engine;

import io.spindle.core.model.Resources;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.MigDemandMix;
import io.spindle.core.placement.MigRepartitionPlanner;
import io.spindle.core.placement.MigRepartitionPlanner.Need;
import io.spindle.core.placement.MigRepartitionPlanner.Status;
import io.spindle.core.placement.MigSlotPolicy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The engine's side of MIG re-partitioning: the requests a cycle left waiting for MIG instances go to the planner in
 * scheduling order, the re-partitions it plans start, and each such request is told why it still waits.
 */
final class MigRepartitioning {

  private final ClusterState cluster;
  private final EngineSettings settings;
  private final Clock clock;
  private final MigRepartitionPlanner planner;
  private final MigDemandMix recent = new MigDemandMix(MigDemandMix.DEFAULT_WINDOW);

  MigRepartitioning(ClusterState cluster, EngineSettings settings, Clock clock, MigSlotPolicy slots) {
    this.cluster = cluster;
    this.settings = settings;
    this.clock = clock;
    this.planner = new MigRepartitionPlanner(slots);
  }

  /** {@code containers} new containers of a shape were asked for: the mix that fills re-partitioned GPUs follows. */
  void asked(Resources shape, long containers) {
    if (shape.wantsMig()) {
      recent.record(shape.migProfile(), containers * shape.migInstances());
    }
  }

  /**
   * Plans for the containers that wait for MIG instances, starts the re-partitions and announces them.
   *
   * @param needs in scheduling order: earlier needs get instances first
   * @return why each shape among the needs still waits
   */
  Map<Resources, String> plan(List<Need> needs, List<Decision> decisions) {
    Map<Resources, String> reasons = new HashMap<>();
    if (needs.isEmpty()) {
      return reasons;
    }
    int budget = settings.maxMigReconfigurationsPerCycle();
    MigRepartitionPlanner.Result result = planner.plan(cluster, needs, budget, recent);
    long availableAt = clock.nowMillis() + settings.migReconfigureMillis();
    for (MigRepartitionPlanner.Plan p : result.plans()) {
      cluster.beginReconfigure(p.nodeId(), p.gpuIndex(), p.layout(), availableAt);
      decisions.add(new Decision.ReconfigureMig(p.nodeId(), p.gpuIndex(), p.layout(), availableAt));
    }
    result.status().forEach((shape, status) -> reasons.put(shape, reason(shape, status, budget)));
    return reasons;
  }

  // The text stays the same while the situation does: drivers re-announce a request only when its reason changes.
  private static String reason(Resources shape, Status status, int budget) {
    String what = "waiting for MIG instance" + (shape.migInstances() == 1 ? "" : "s") + " of " + shape.migProfile()
        + (shape.models().isAny() ? "" : " on " + shape.models()) + ": ";
    return switch (status) {
      case COVERED -> what + "MIG GPUs are being re-partitioned for it";
      case OUT_OF_BUDGET -> what + (budget == 0
          ? "none is free on a node with room for the container, and re-partitioning is off"
              + " (max-reconfigurations-per-cycle is 0)"
          : "none is free on a node with room for the container; at most " + budget
              + " GPUs are re-partitioned per cycle, and more follow");
      case NO_ROOM -> what + "none is free on a node with room for the container, and no MIG GPU there can make "
          + "one without destroying an instance in use";
    };
  }
}
