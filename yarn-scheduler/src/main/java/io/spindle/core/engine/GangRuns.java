package io.spindle.core.engine;

import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which containers started together as one gang, so that losing one member can stop the rest: a tightly coupled job
 * (MPI, NCCL) cannot go on without it, and left running, its survivors would hold GPUs doing nothing. Owned by
 * {@link Engine}, which tells it every gang start and every release.
 */
final class GangRuns {

  /** One start of a gang: its members still charged, and whether it is already being restarted. */
  static final class Run {
    final String appId;
    final String requestKey;
    final Resources shape;
    final ResourceVector unitCharge;
    final PlacementSpec spec;
    final int requiredDepth;
    final int size;
    final Set<Long> members = new LinkedHashSet<>();
    final List<Long> lost = new ArrayList<>();
    boolean restarting;

    Run(DemandState d, List<Long> members) {
      this.appId = d.app.id;
      this.requestKey = d.key;
      this.shape = d.shape;
      this.unitCharge = d.unitCharge;
      this.spec = d.spec;
      this.requiredDepth = d.requiredDepth;
      this.size = members.size();
      this.members.addAll(members);
    }
  }

  private final Map<Long, Run> runOf = new HashMap<>();

  void started(DemandState d, List<Long> members) {
    if (!d.spec.gang() || !d.spec.restartOnMemberLoss()) {
      return;
    }
    Run run = new Run(d, members);
    for (long id : members) {
      runOf.put(id, run);
    }
  }

  /**
   * The container is lost to the cluster. Returns its run when this loss must restart it (its first lost member),
   * else {@code null}.
   */
  Run lost(long allocationId) {
    Run run = runOf.get(allocationId);
    if (run == null) {
      return null;
    }
    run.lost.add(allocationId);
    if (run.restarting) {
      return null;
    }
    run.restarting = true;
    return run;
  }

  void released(long allocationId) {
    Run run = runOf.remove(allocationId);
    if (run != null) {
      run.members.remove(allocationId);
    }
  }

  /**
   * A gang lost members to the cluster: its survivors are stopped, and it waits again, whole, under its key, unless
   * the application already asks for that key again (its ask stands, as after a preemption).
   */
  void restart(Run run, String why, EngineState state, List<Decision> decisions) {
    List<Long> survivors = run.members.stream().filter(id -> !run.lost.contains(id) && state.hasAllocation(id))
        .toList();
    String reason = "gang of " + run.size + " lost " + run.lost.size() + " member" + (run.lost.size() == 1 ? "" : "s")
        + " (" + why + "); its other members are stopped and it is re-queued whole";
    decisions.add(new Decision.RestartGang(run.appId, run.requestKey, survivors, run.lost, reason));
    AppState app = state.app(run.appId);
    if (app == null || app.demands.containsKey(run.requestKey)) {
      return;
    }
    DemandState d = new DemandState(app, run.requestKey, run.shape, run.unitCharge, run.size, run.spec,
        run.requiredDepth);
    state.addDemand(d);
    app.leaf.waitingApps.add(app);
    d.reportedReason = "re-queued: " + reason;
    decisions.add(new Decision.Wait(app.id, d.key, d.reportedReason));
  }
}
