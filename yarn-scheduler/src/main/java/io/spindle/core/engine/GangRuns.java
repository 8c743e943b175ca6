package io.spindle.core.engine;

import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.RequestRef;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every {@link GangRun}: what runs as one piece, by id and by member. The engine tells it every start and release;
 * preemption picks victims among its runs and marks them, a lost member restarts its run, and a failover regroups
 * recovered containers into the runs an earlier leader saved.
 *
 * <p>A start is tracked when something needs its grouping: a reclaim may pick it (preemption on, request
 * preemptible), or losing a member must stop the rest (a gang that restarts on member loss). The first kind are
 * numbered in start order and listed by {@link #all} in that order, so the same history gives the same answers.
 */
final class GangRuns {

  private final boolean preemptionEnabled;
  private final Clock clock;
  private final Map<Long, GangRun> byId = new LinkedHashMap<>();
  private final Map<Long, GangRun> ofMember = new HashMap<>();
  /** Recovered containers of one request form one run: after a restart nothing says which were one gang. */
  private final Map<RequestRef, GangRun> recoveredByOwner = new HashMap<>();
  /** Every elastic gang's core, by request, in start order: what {@link ElasticGrowth} grows. */
  private final Map<RequestRef, GangRun> elasticCores = new LinkedHashMap<>();
  private long nextId = 1;

  GangRuns(boolean preemptionEnabled, Clock clock) {
    this.preemptionEnabled = preemptionEnabled;
    this.clock = clock;
  }

  /** The members of {@code d} just started together; returns their run, or {@code null} when none is needed. */
  GangRun started(DemandState d, List<Long> members) {
    boolean preemptible = preemptionEnabled && d.spec.preemptible();
    boolean restarts = d.spec.gang() && d.spec.restartOnMemberLoss();
    boolean elastic = d.spec.elastic();
    if (!preemptible && !restarts && !elastic) {
      return null;
    }
    // Only runs a reclaim may pick are numbered: the numbers are what a failover saves, and a run that only
    // restarts on loss is not saved (the next leader regroups nothing for it).
    GangRun run = new GangRun(preemptible ? nextId++ : 0, d.app.id, d.key, d.shape, d.spec, d.unitCharge,
        d.requiredDepth, clock.nowMillis(), preemptible, restarts);
    if (preemptible) {
      byId.put(run.id, run);
    }
    for (long id : members) {
      join(id, run);
    }
    run.size = members.size();
    if (elastic) {
      run.wanted = d.growBy;
      elasticCores.remove(d.ref); // A core restarted or re-queued before is followed by this one, in start order.
      elasticCores.put(d.ref, run);
    }
    return run;
  }

  /** An elastic gang's core grew by {@code members}, placed together; returns their run. */
  GangRun grew(GangRun core, List<Long> members) {
    boolean preemptible = preemptionEnabled && core.spec.preemptible();
    GangRun group = new GangRun(preemptible ? nextId++ : 0, core.appId, core.requestKey, core.shape, core.spec,
        core.unitCharge, core.requiredDepth, clock.nowMillis(), preemptible, false);
    group.core = core;
    if (preemptible) {
      byId.put(group.id, group);
    }
    for (long id : members) {
      join(id, group);
    }
    group.size = members.size();
    core.grownBy.add(group);
    core.wanted = Math.max(0, core.wanted - members.size());
    return group;
  }

  /** The running core of the elastic gang of this request, or {@code null}: none runs, or it is restarting. */
  GangRun elasticCore(RequestRef request) {
    GangRun core = elasticCores.get(request);
    return core == null || core.members.isEmpty() || core.phase() == GangRun.Phase.RESTARTING ? null : core;
  }

  /** The elastic gangs that could grow now, in start order: running, asking at least one step more. */
  List<GangRun> growable() {
    List<GangRun> out = new ArrayList<>();
    for (GangRun core : elasticCores.values()) {
      if (core.phase() == GangRun.Phase.RUNNING && !core.members.isEmpty()
          && core.wanted >= core.spec.elasticity().step()) {
        out.add(core);
      }
    }
    return out;
  }

  /** A container recovered after a restart; the preemptible ones of a request form one run. */
  boolean recovered(AppId appId, String requestKey, Resources shape, ResourceVector charge, long allocationId,
      boolean preemptible) {
    if (!preemptionEnabled || !preemptible) {
      return false;
    }
    RequestRef owner = new RequestRef(appId, requestKey);
    GangRun run = recoveredByOwner.get(owner);
    if (run == null || byId.get(run.id) != run) {
      run = new GangRun(nextId++, appId, requestKey, shape, PlacementSpec.SINGLE, charge, -1, clock.nowMillis(),
          true, false);
      byId.put(run.id, run);
      recoveredByOwner.put(owner, run);
    }
    join(allocationId, run);
    run.size++;
    return true;
  }

  /** A run rebuilt from saved state; its members join with {@link #move}. */
  GangRun restored(long id, AppId appId, String requestKey, Resources shape, PlacementSpec spec,
      ResourceVector unitCharge, int requiredDepth, long startMillis, int size) {
    GangRun run = new GangRun(id, appId, requestKey, shape, spec, unitCharge, requiredDepth, startMillis, true,
        false);
    run.size = size;
    return run;
  }

  /**
   * The container is lost to the cluster. Returns its run when this loss must restart it (its first lost member),
   * else {@code null}.
   */
  GangRun lost(long allocationId) {
    GangRun run = ofMember.get(allocationId);
    return run != null && run.memberLost(allocationId) ? run : null;
  }

  /** A member's GPU left service. Returns its run when this must restart it (its first fault or loss), else null. */
  GangRun faulted(long allocationId) {
    GangRun run = ofMember.get(allocationId);
    return run != null && run.memberFaulted() ? run : null;
  }

  /**
   * A run lost members to the cluster: its survivors are stopped, and it waits again, whole, under its key, unless
   * the application already asks for that key again (its ask stands, as after a preemption). With {@code inDomain}
   * (hot swap) it is placed again inside the domain it held, once its stopped members have ended.
   */
  void restart(GangRun run, String why, EngineState state, boolean inDomain, List<Decision> decisions) {
    List<Long> survivors = new ArrayList<>(run.members.stream()
        .filter(id -> !run.lost.contains(id) && state.hasAllocation(id)).toList());
    for (GangRun grown : run.grownBy) {
      grown.members.stream().filter(state::hasAllocation).forEach(survivors::add);
    }
    int started = run.size;
    for (GangRun grown : run.grownBy) {
      started += grown.size;
    }
    int asked = run.elasticCore() ? run.asked() : run.size;
    String reason = run.lost.isEmpty()
        ? "gang of " + started + ": " + why + "; its members are stopped and it is re-queued whole"
        : "gang of " + started + " lost " + run.lost.size() + " member" + (run.lost.size() == 1 ? "" : "s")
            + " (" + why + "); its other members are stopped and it is re-queued whole";
    decisions.add(new Decision.RestartGang(run.appId, run.requestKey, survivors, run.lost, reason));
    AppState app = state.app(run.appId);
    if (app == null || app.demands.containsKey(run.requestKey)) {
      return;
    }
    DemandState d = DemandState.asked(app, run.requestKey, run.shape, run.unitCharge, asked, run.spec,
        run.requiredDepth);
    if (inDomain) {
      List<NodeId> held = state.nodesOf(survivors);
      d.restartNear = held.isEmpty() ? null : held;
      d.stopping = List.copyOf(survivors);
    }
    state.addDemand(d);
    app.leaf.waitingApps.add(app);
    d.reportedReason = "re-queued: " + reason;
    decisions.add(new Decision.Wait(app.id, d.key, d.reportedReason));
  }

  /** The engine released a container, for whatever reason. */
  void released(long allocationId) {
    GangRun run = ofMember.remove(allocationId);
    if (run != null) {
      run.members.remove(allocationId);
      dropIfDone(run);
    }
  }

  void appFinished(AppId appId) {
    recoveredByOwner.keySet().removeIf(owner -> owner.appId().equals(appId));
    elasticCores.keySet().removeIf(owner -> owner.appId().equals(appId));
  }

  GangRun get(long id) {
    return byId.get(id);
  }

  GangRun of(long allocationId) {
    return ofMember.get(allocationId);
  }

  /** Every run a reclaim may pick, in id order. */
  Collection<GangRun> all() {
    return byId.values();
  }

  /** Whether the run holding this container is one recovery made, still waiting for its saved run to claim it. */
  boolean heldByRecovery(GangRun run) {
    return recoveredByOwner.containsValue(run);
  }

  /** A reclaim is done with the run: it runs on, or leaves if nothing of it runs. */
  void letGo(GangRun run) {
    run.letGo();
    dropIfDone(run);
  }

  /** Adds a member that belonged to no run (its size, what it started with, is the caller's to set). */
  void join(long allocationId, GangRun run) {
    run.members.add(allocationId);
    ofMember.put(allocationId, run);
  }

  /** Moves a recovered container out of the run recovery put it in, into {@code to}. */
  void move(long allocationId, GangRun to) {
    GangRun from = ofMember.get(allocationId);
    if (from != null) {
      from.members.remove(allocationId);
      dropIfDone(from);
    }
    to.members.add(allocationId);
    ofMember.put(allocationId, to);
  }

  /**
   * Runs in id order, restored ones with their saved ids; runs this engine made before the restore (containers
   * recovered that the state does not name) are renumbered after them, being the youngest.
   */
  void renumber(Map<Long, GangRun> restored, long savedNextId) {
    long next = savedNextId;
    for (long id : restored.keySet()) {
      next = Math.max(next, id + 1);
    }
    List<GangRun> mine = new ArrayList<>(byId.values());
    byId.clear();
    for (GangRun run : restored.values()) {
      byId.put(run.id, run);
    }
    for (GangRun run : mine) {
      if (!restored.containsValue(run)) {
        run.id = next++;
        byId.put(run.id, run);
      }
    }
    nextId = next;
  }

  long nextId() {
    return nextId;
  }

  private void dropIfDone(GangRun run) {
    if (!run.done()) {
      return;
    }
    if (byId.get(run.id) == run) {
      byId.remove(run.id);
    }
    if (run.core != null) {
      run.core.grownBy.remove(run);
    } else if (run.spec.elastic()) {
      // What it still asked for goes with it: an application that ended its gang asks again (a new start) or is done.
      elasticCores.remove(new RequestRef(run.appId, run.requestKey), run);
    }
  }
}
