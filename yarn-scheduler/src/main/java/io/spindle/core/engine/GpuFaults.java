package io.spindle.core.engine;

import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.HealthEvidence;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.placement.ClusterState;
import io.spindle.core.placement.GpuService;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.placement.Reservation;
import io.spindle.core.reliability.HealthSettings;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Each GPU's health as its node reports it, what the engine makes of it, and what that costs the work on it.
 *
 * <p>A GPU is out of service while its node reports it {@link GpuHealth.State#FAILED}, while it is quarantined
 * (it failed {@link HealthSettings#quarantineFailures} times within the window: it stays out for
 * {@link HealthSettings#quarantineMillis} after the last failure, whatever it reports, because a GPU that fails
 * again after each reset fails every gang put on it), and while an admin has it cordoned. Out of service it takes
 * nothing new, and what runs on it is stopped: a gang that restarts on member loss restarts whole (its replacement
 * placed by {@link GangRuns}' rule, inside the domain it held), any other container is stopped and its application
 * told why. A {@link GpuHealth.State#DEGRADED} GPU keeps what it runs and takes new work, but no gang member.
 *
 * <p>A node with {@link HealthSettings#drainFailedGpus} GPUs out for failures is cordoned (drained: what runs there
 * ends, nothing new starts) until fewer are out; a cordon an admin set is never lifted here.
 *
 * <p>Failures and quarantines are kept across a failover ({@link DurableState.GpuFaultState}); the health itself is
 * not: every node reports it again to a new leader.
 */
final class GpuFaults {

  /** One GPU, by node and index. */
  record GpuKey(NodeId node, int gpuIndex) {}

  private static final Comparator<GpuKey> ORDER =
      Comparator.comparing((GpuKey k) -> k.node().value()).thenComparingInt(GpuKey::gpuIndex);
  private static final String DRAIN_PREFIX = "drained by Spindle: ";

  private static final class Gpu {
    GpuHealth health = GpuHealth.HEALTHY;
    String cordon;
    final Deque<Long> failures = new ArrayDeque<>();
    long quarantinedUntil;
    GpuService applied;
  }

  private final ClusterState cluster;
  private final EngineState state;
  private final GangRuns gangRuns;
  private final HealthSettings settings;
  private final Map<GpuKey, Gpu> gpus = new TreeMap<>(ORDER);

  GpuFaults(ClusterState cluster, EngineState state, GangRuns gangRuns, HealthSettings settings) {
    this.cluster = cluster;
    this.state = state;
    this.gangRuns = gangRuns;
    this.settings = settings;
  }

  /** A node reported a GPU's health. */
  void reported(NodeId node, int gpuIndex, GpuHealth health, long now, Broken broken, List<Decision> decisions) {
    requireGpu(node, gpuIndex);
    if (health.healthy() && !gpus.containsKey(new GpuKey(node, gpuIndex))) {
      return; // Nothing known against it: no entry for the healthy many.
    }
    Gpu g = gpus.computeIfAbsent(new GpuKey(node, gpuIndex), k -> new Gpu());
    boolean failsNow = health.state() == GpuHealth.State.FAILED && g.health.state() != GpuHealth.State.FAILED;
    if (health.state() != g.health.state()) {
      state.durableChange(); // The state (not the evidence) is saved for a new leader.
    }
    g.health = health;
    if (failsNow) {
      state.failures().gpuFailed(now); // What the checkpoint interval advice learns the failure rate from.
      g.failures.addLast(now);
      while (!g.failures.isEmpty() && g.failures.peekFirst() < now - settings.quarantineWindowMillis()) {
        g.failures.removeFirst();
      }
      if (settings.quarantineFailures() > 0 && g.failures.size() >= settings.quarantineFailures()) {
        g.quarantinedUntil = now + settings.quarantineMillis();
      }
    }
    apply(new GpuKey(node, gpuIndex), g, now, broken, decisions);
  }

  /** An admin took a GPU out of service ({@code reason}) or put it back ({@code null}). */
  void cordon(NodeId node, int gpuIndex, String reason, long now, Broken broken, List<Decision> decisions) {
    requireGpu(node, gpuIndex);
    Gpu g = gpus.computeIfAbsent(new GpuKey(node, gpuIndex), k -> new Gpu());
    g.cordon = reason;
    state.durableChange();
    apply(new GpuKey(node, gpuIndex), g, now, broken, decisions);
  }

  /** Ends the quarantines due by {@code now}. */
  void expire(long now, Broken broken, List<Decision> decisions) {
    for (Map.Entry<GpuKey, Gpu> e : gpus.entrySet()) {
      Gpu g = e.getValue();
      if (g.quarantinedUntil != 0 && g.quarantinedUntil <= now) {
        g.quarantinedUntil = 0;
        state.durableChange();
        apply(e.getKey(), g, now, broken, decisions);
      }
    }
  }

  /** A node (re-)registered: its GPUs are as this class last knew them, until it reports again. */
  void nodeAdded(NodeId node, long now, Broken broken, List<Decision> decisions) {
    for (Map.Entry<GpuKey, Gpu> e : gpus.entrySet()) {
      if (e.getKey().node().equals(node)) {
        e.getValue().applied = null;
        apply(e.getKey(), e.getValue(), now, broken, decisions);
      }
    }
  }

  EngineStats.GpuServiceCounts counts(long now) {
    int out = 0;
    int degraded = 0;
    int quarantined = 0;
    for (Gpu g : gpus.values()) {
      if (g.applied != null) {
        out += g.applied.out() ? 1 : 0;
        degraded += g.applied.out() ? 0 : 1;
      }
      quarantined += g.quarantinedUntil > now ? 1 : 0;
    }
    return new EngineStats.GpuServiceCounts(out, degraded, quarantined, state.failures().failures());
  }

  /** Health and service of every GPU that is not simply healthy and in service, in node and index order. */
  List<GpuFaultView> views(long now) {
    List<GpuFaultView> out = new ArrayList<>();
    gpus.forEach((k, g) -> {
      GpuService s = serviceOf(g, now);
      if (s != null || !g.health.healthy() || !g.failures.isEmpty()) {
        out.add(new GpuFaultView(k.node(), k.gpuIndex(), g.health, s, g.failures.size(), g.quarantinedUntil));
      }
    });
    return out;
  }

  /** Where a reservation given up for a drained node goes: the engine re-queues its gang. */
  @FunctionalInterface
  interface Broken {
    void reservationBroken(Reservation broken, String why, List<Decision> decisions);
  }

  // ---------------------------------------------------------------- failover

  List<DurableState.GpuFaultState> export() {
    List<DurableState.GpuFaultState> out = new ArrayList<>();
    gpus.forEach((k, g) -> {
      if (!g.health.healthy() || !g.failures.isEmpty() || g.quarantinedUntil != 0 || g.cordon != null) {
        out.add(new DurableState.GpuFaultState(k.node(), k.gpuIndex(), g.health.state(), List.copyOf(g.failures),
            g.quarantinedUntil, g.cordon));
      }
    });
    return out;
  }

  /**
   * A new leader takes its predecessor's view of each GPU: health (until the node reports again), failures,
   * quarantines and GPU cordons.
   */
  void restore(List<DurableState.GpuFaultState> saved, long now, Broken broken, List<Decision> decisions) {
    for (DurableState.GpuFaultState s : saved) {
      Gpu g = gpus.computeIfAbsent(new GpuKey(s.nodeId(), s.gpuIndex()), k -> new Gpu());
      if (g.health.state() != s.health()) {
        g.health = s.health() == GpuHealth.State.HEALTHY ? GpuHealth.HEALTHY : new GpuHealth(s.health(), List.of());
      }
      g.failures.clear();
      g.failures.addAll(s.failureMillis());
      g.quarantinedUntil = s.quarantinedUntilMillis();
      g.cordon = s.cordonReason();
      apply(new GpuKey(s.nodeId(), s.gpuIndex()), g, now, broken, decisions);
    }
  }

  // ---------------------------------------------------------------- internals

  /** A registered node must have the GPU; an unregistered one's GPUs are taken on trust until it registers. */
  private void requireGpu(NodeId node, int gpuIndex) {
    if (cluster.hasNode(node) && !hasGpu(node, gpuIndex)) {
      throw new InvalidInputException("gpu.index", node + "/gpu" + gpuIndex, "node has no such GPU");
    }
  }

  private boolean hasGpu(NodeId node, int gpuIndex) {
    Node n = cluster.nodeOf(node);
    return n != null && n.gpus().stream().anyMatch(g -> g.index() == gpuIndex);
  }

  private GpuService serviceOf(Gpu g, long now) {
    if (g.health.state() == GpuHealth.State.FAILED) {
      return new GpuService(GpuService.Level.OUT, "failed: " + evidence(g.health));
    }
    if (g.quarantinedUntil > now) {
      return new GpuService(GpuService.Level.OUT, "quarantined until " + Instant.ofEpochMilli(g.quarantinedUntil)
          + " after " + g.failures.size() + " failures within " + settings.quarantineWindowMillis() / 1000 + " s");
    }
    if (g.cordon != null) {
      return new GpuService(GpuService.Level.OUT, "cordoned: " + g.cordon);
    }
    if (g.health.state() == GpuHealth.State.DEGRADED) {
      return new GpuService(GpuService.Level.DEGRADED, "degraded: " + evidence(g.health));
    }
    return null;
  }

  private static String evidence(GpuHealth health) {
    List<String> parts = new ArrayList<>();
    for (HealthEvidence e : health.evidence()) {
      parts.add(e.detail());
    }
    return parts.isEmpty() ? health.state().name().toLowerCase(java.util.Locale.ROOT) : String.join("; ", parts);
  }

  private void apply(GpuKey key, Gpu g, long now, Broken broken, List<Decision> decisions) {
    GpuService next = serviceOf(g, now);
    if (java.util.Objects.equals(next, g.applied) || !hasGpu(key.node(), key.gpuIndex())) {
      return;
    }
    boolean wasOut = g.applied != null && g.applied.out();
    g.applied = next;
    cluster.setGpuService(key.node(), key.gpuIndex(), next);
    if (next != null && next.out() && !wasOut) {
      stopWorkOn(key, next.reason(), decisions);
    }
    drainOrUndrain(key.node(), broken, decisions);
  }

  /** Stops what runs on a GPU that just left service. */
  private void stopWorkOn(GpuKey key, String reason, List<Decision> decisions) {
    String why = "GPU " + key.gpuIndex() + " of node " + key.node() + " " + reason;
    List<GangRun> restarting = new ArrayList<>();
    for (long id : state.onNode(key.node())) {
      Allocation a = state.allocation(id);
      if (a == null || a.placement().gpus().stream().noneMatch(s -> onGpu(s, key.gpuIndex()))) {
        continue;
      }
      GangRun run = gangRuns.of(id);
      if (run != null && run.restartsOnLoss) {
        if (gangRuns.faulted(id) != null) {
          restarting.add(run);
        }
        continue; // Stopped with its gang; a gang already restarting stops it anyway.
      }
      decisions.add(new Decision.StopContainers(a.appId(), List.of(id), why));
    }
    for (GangRun run : restarting) {
      gangRuns.restart(run, why, state, settings.restartInDomain(), decisions);
    }
  }

  private static boolean onGpu(GpuSlot slot, int gpuIndex) {
    return slot.gpuIndex() == gpuIndex;
  }

  private void drainOrUndrain(NodeId node, Broken broken, List<Decision> decisions) {
    if (settings.drainFailedGpus() == 0) {
      return;
    }
    int out = 0;
    for (Map.Entry<GpuKey, Gpu> e : gpus.entrySet()) {
      Gpu g = e.getValue();
      if (e.getKey().node().equals(node) && g.applied != null && g.applied.out() && g.cordon == null) {
        out++;
      }
    }
    String cordon = cluster.cordons().get(node);
    if (out >= settings.drainFailedGpus() && cordon == null) {
      String why = DRAIN_PREFIX + out + " GPUs out of service";
      broken.reservationBroken(cluster.cordon(node, why), "node " + node + " of it was drained (" + why + ")",
          decisions);
      state.durableChange();
    } else if (out < settings.drainFailedGpus() && cordon != null && cordon.startsWith(DRAIN_PREFIX)) {
      cluster.uncordon(node);
      state.durableChange();
    }
  }
}
