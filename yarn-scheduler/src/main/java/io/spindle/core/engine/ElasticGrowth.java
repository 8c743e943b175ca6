package io.spindle.core.engine;

import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.placement.GangPlacer;
import io.spindle.core.placement.Placement;
import io.spindle.core.queue.QueueShare;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Grows running elastic gangs into what a cycle's placement left idle, one step (a group of members placed together)
 * at a time, the gang whose queue is furthest below its fair share first (docs/architecture.md, "Elastic gangs").
 *
 * <p>Growth comes after every waiting request had its turn, so it only takes capacity none of them could use in this
 * cycle, and it is never a reason to reclaim anything. It is held back where it would have to be given back at once:
 * while any reclaim is in flight (its capacity is spoken for), and in a partition where a request that waits for room
 * may reclaim running work now (it starved; with preemption off, any request that waits for room, as nothing would
 * ever give the members back). A step stays within the gang's queue maximum and user limit, and goes as close to the
 * gang as it fits ({@link GangPlacer#placeNear}).
 */
final class ElasticGrowth {

  private final EngineState state;
  private final GangPlacer placer;
  private final GangRuns runs;
  private final EnginePreemption preemption;
  private final Clock clock;

  ElasticGrowth(EngineState state, GangPlacer placer, GangRuns runs, EnginePreemption preemption, Clock clock) {
    this.state = state;
    this.placer = placer;
    this.runs = runs;
    this.preemption = preemption;
    this.clock = clock;
  }

  /**
   * @param pass this cycle's placement: its limits and why each waiting request waited
   * @param waiting the requests that could not be placed in this cycle
   */
  void run(PlacementPass pass, List<DemandState> waiting, List<Decision> decisions) {
    List<GangRun> cores = runs.growable();
    if (cores.isEmpty() || preemption.reclaiming()) {
      return;
    }
    Set<String> held = new HashSet<>();
    for (DemandState d : waiting) {
      if (d.outstanding > 0 && pass.waitedForRoom(d) && preemption.mayReclaimFor(d)) {
        held.add(d.shape.partition());
      }
    }
    List<GangRun> order = new ArrayList<>(cores);
    order.sort(Comparator.comparingDouble(this::standing).thenComparing(c -> state.app(c.appId), AppState.ORDER));
    // Round robin, one step each, so the gang furthest below its share does not take every idle GPU at once.
    boolean grew = true;
    while (grew) {
      grew = false;
      for (GangRun core : order) {
        if (core.wanted >= core.spec.elasticity().step() && !held.contains(core.shape.partition())
            && growOnce(pass, core, decisions)) {
          grew = true;
        }
      }
    }
  }

  /** The core's queue's usage over its fair share, in its partition; lower grows first. */
  private double standing(GangRun core) {
    AppState app = state.app(core.appId);
    String partition = core.shape.partition();
    QueueShare share = app.leaf.share(partition);
    ResourceVector capacity = state.cluster().capacity(partition);
    double usage = app.leaf.usage(partition).dominantShare(capacity);
    double fair = share == null ? 0 : share.fairShare().dominantShare(capacity);
    return fair > 0 ? usage / fair : Double.MAX_VALUE;
  }

  private boolean growOnce(PlacementPass pass, GangRun core, List<Decision> decisions) {
    AppState app = state.app(core.appId);
    int step = core.spec.elasticity().step();
    List<NodeId> near = new ArrayList<>();
    near.addAll(state.nodesOf(core.members));
    for (GangRun grown : core.grownBy) {
      near.addAll(state.nodesOf(grown.members));
    }
    List<Placement> places = placer.placeNear(core.shape, step, core.requiredDepth, near);
    if (places == null) {
      return false;
    }
    if (pass.overLimits(app, core.shape.partition(), places).isPresent()) {
      return false;
    }
    List<Long> ids = addGroup(core, places, decisions);
    int after = core.gangSize();
    decisions.add(new Decision.Resize(app.id, core.requestKey, after - ids.size(), after, ids,
        "grew by " + ids.size() + " into idle capacity; " + core.wanted + " more asked"));
    return true;
  }

  /**
   * Starts members of a running elastic gang at {@code places}, as groups of its step (what a reclaim takes back one
   * at a time); returns their allocation ids.
   */
  List<Long> addGroup(GangRun core, List<Placement> places, List<Decision> decisions) {
    AppState app = state.app(core.appId);
    int step = core.spec.elasticity().step();
    long endsAt = core.spec.maxRuntimeMillis() > 0 ? clock.nowMillis() + core.spec.maxRuntimeMillis()
        : Long.MAX_VALUE;
    List<Long> ids = new ArrayList<>(places.size());
    for (Placement p : places) {
      long id = state.newAllocationId();
      state.charge(app, new Allocation(id, app.id, core.requestKey, core.shape, p, endsAt));
      decisions.add(new Decision.Allocate(id, app.id, core.requestKey, p.nodeId(), core.shape, p.gpus(), p.charge()));
      ids.add(id);
    }
    if (endsAt != Long.MAX_VALUE) {
      state.durableChange();
    }
    for (int i = 0; i < ids.size(); i += step) {
      preemption.started(runs.grew(core, ids.subList(i, Math.min(ids.size(), i + step))));
    }
    return ids;
  }
}
