package io.spindle.core.engine;

import io.spindle.core.engine.EngineStatus.ExpectedStart;
import io.spindle.core.engine.EngineStatus.StartConfidence;
import io.spindle.core.model.NodeId;
import io.spindle.core.placement.DrainForecast;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Expected start times of waiting requests, for status views ({@code why}, the status API, the CLI, the GPU map):
 * taken with a status snapshot, between cycles; nothing the engine decides reads them.
 *
 * <p>Each leaf's waiting requests, in the leaf's order (priority, then age), are forecast by {@link DrainForecast}
 * twice: once with declared run times only ({@code spindle.max-runtime}: the running containers' declared ends and the
 * waiting requests' own run times), once with learned ones where nothing is declared — the median run time of the
 * application's user and kind where the engine learns them ({@link RuntimeEstimates}), else of its queue and kind,
 * else of its queue ({@link QueueRuntimes}), counting only runs longer than what it has run. The answer is the
 * earlier of the two that is known: from declared run times alone it is {@code EXACT}, with a learned one
 * {@code ESTIMATED}; neither known, {@code UNKNOWN}.
 *
 * <p>The cost is bounded: one pass over the allocations, then per leaf one sweep over their ends and, per request,
 * one pass over the nodes, for at most {@link #MAX_PER_QUEUE} requests of a leaf (those behind are unknown).
 */
final class StartEstimates {

  static final int MAX_PER_QUEUE = 256;

  private final EngineState state;
  private final Clock clock;

  StartEstimates(EngineState state, Clock clock) {
    this.state = state;
    this.clock = clock;
  }

  /** The expected start of every waiting request (outstanding containers) of {@code leaves}. */
  Map<DemandState, ExpectedStart> of(List<QueueState> leaves) {
    long now = clock.nowMillis();
    Map<QueueState, List<DemandState>> waiting = waitingByLeaf(leaves);
    Map<DemandState, ExpectedStart> out = new IdentityHashMap<>();
    if (waiting.isEmpty()) {
      return out;
    }
    Map<NodeId, List<DrainForecast.Ending>> declared = new HashMap<>();
    Map<NodeId, List<DrainForecast.Ending>> learned = new HashMap<>();
    for (Allocation a : state.allocations()) {
      NodeId node = a.placement().nodeId();
      declared.computeIfAbsent(node, k -> new ArrayList<>())
          .add(new DrainForecast.Ending(a.shape(), a.placement(), a.endsAtMillis()));
      learned.computeIfAbsent(node, k -> new ArrayList<>())
          .add(new DrainForecast.Ending(a.shape(), a.placement(), learnedEnd(a, now)));
    }
    DrainForecast byDeclared = new DrainForecast(state.cluster(), declared);
    DrainForecast byLearned = new DrainForecast(state.cluster(), learned);
    waiting.forEach((leaf, requests) -> {
      List<DrainForecast.Ask> exact = new ArrayList<>(requests.size());
      List<DrainForecast.Ask> guessed = new ArrayList<>(requests.size());
      for (DemandState d : requests) {
        long declaredRun = d.spec.maxRuntimeMillis() > 0 ? d.spec.maxRuntimeMillis() : Long.MAX_VALUE;
        exact.add(new DrainForecast.Ask(d.shape, d.outstanding, declaredRun, d.reservation));
        long learnedRun = declaredRun != Long.MAX_VALUE ? declaredRun : learnedRunMillis(d.app, 0);
        guessed.add(new DrainForecast.Ask(d.shape, d.outstanding, learnedRun <= 0 ? Long.MAX_VALUE : learnedRun,
            d.reservation));
      }
      long[] e = byDeclared.startTimes(exact, now);
      long[] g = byLearned.startTimes(guessed, now);
      for (int i = 0; i < requests.size(); i++) {
        out.put(requests.get(i), combine(e[i], g[i]));
      }
    });
    return out;
  }

  /** The earlier known of the two forecasts, with how sure it is. */
  static ExpectedStart combine(long fromDeclared, long fromLearned) {
    if (fromLearned < fromDeclared) {
      return new ExpectedStart(fromLearned, StartConfidence.ESTIMATED);
    }
    return fromDeclared == Long.MAX_VALUE ? ExpectedStart.UNKNOWN
        : new ExpectedStart(fromDeclared, StartConfidence.EXACT);
  }

  /** Each leaf's waiting requests in its order, at most {@link #MAX_PER_QUEUE} a leaf. */
  private Map<QueueState, List<DemandState>> waitingByLeaf(List<QueueState> leaves) {
    Map<QueueState, List<AppState>> apps = new LinkedHashMap<>();
    for (QueueState leaf : leaves) {
      apps.put(leaf, new ArrayList<>());
    }
    for (AppState app : state.apps()) {
      List<AppState> list = apps.get(app.leaf);
      if (list != null) {
        list.add(app);
      }
    }
    Map<QueueState, List<DemandState>> out = new LinkedHashMap<>();
    apps.forEach((leaf, list) -> {
      list.sort(AppState.ORDER);
      List<DemandState> requests = new ArrayList<>();
      for (AppState app : list) {
        for (DemandState d : app.demands.values()) {
          if (d.outstanding > 0 && requests.size() < MAX_PER_QUEUE) {
            requests.add(d);
          }
        }
      }
      if (!requests.isEmpty()) {
        out.put(leaf, requests);
      }
    });
    return out;
  }

  /** The declared end, else now plus the learned run time left; {@code Long.MAX_VALUE} when neither is known. */
  private long learnedEnd(Allocation a, long now) {
    if (a.endsAtMillis() != Long.MAX_VALUE) {
      return a.endsAtMillis();
    }
    AppState app = state.app(a.appId());
    if (app == null) {
      return Long.MAX_VALUE;
    }
    long ran = app.attained.ranMillis(now);
    long expected = learnedRunMillis(app, ran);
    return expected > ran ? now + (expected - ran) : Long.MAX_VALUE;
  }

  /** The learned whole run time of an application that has run {@code ranMillis}; {@code 0} when none is known. */
  private long learnedRunMillis(AppState app, long ranMillis) {
    long byUser = state.estimates().expectedMillis(app);
    if (byUser > ranMillis) {
      return byUser;
    }
    return state.queueRuntimes().expectedMillis(app.leaf.path(), app.kind, ranMillis);
  }
}
