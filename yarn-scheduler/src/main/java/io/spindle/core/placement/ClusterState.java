package io.spindle.core.placement;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.RequestRef;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Free capacity of every node, indexed so that finding a node for a container costs a logarithmic lookup, not a
 * scan of the cluster.
 *
 * <p>Whole-GPU and CPU-only containers use ordered sets of nodes keyed by (free whole GPUs, free MIG memory slices,
 * free memory, free vcores): a ceiling lookup lands on the best fit (fewest free GPUs, then least free GPU capacity
 * in MIG mode, then least free memory that still holds the container) and skips every node that is too small. MIG
 * containers use one ordered set per profile name holding only the nodes that can place that profile now, fullest
 * first, so partly used MIG GPUs fill before fresh ones.
 */
public final class ClusterState {

  // Hand-written rather than Comparator.comparing chains: these run on every placement, in every TreeSet step.
  // Free MIG slices come second so that a container without GPUs goes where no GPU capacity is left to strand (a
  // CPU-only node, or GPUs all in use) even when every GPU is in MIG mode, where free whole GPUs are 0 everywhere.
  private static final Comparator<NodeState> BY_FREE_CAPACITY = (a, b) -> {
    if (a.freeWholeGpus != b.freeWholeGpus) {
      return Integer.compare(a.freeWholeGpus, b.freeWholeGpus);
    }
    if (a.freeMigSlices != b.freeMigSlices) {
      return Integer.compare(a.freeMigSlices, b.freeMigSlices);
    }
    if (a.freeMemoryMb != b.freeMemoryMb) {
      return Long.compare(a.freeMemoryMb, b.freeMemoryMb);
    }
    if (a.freeVcores != b.freeVcores) {
      return Integer.compare(a.freeVcores, b.freeVcores);
    }
    return Integer.compare(a.seq, b.seq);
  };
  private static final Comparator<NodeState> BY_FREE_MIG = (a, b) -> a.freeMigSlices != b.freeMigSlices
      ? Integer.compare(a.freeMigSlices, b.freeMigSlices) : Integer.compare(a.seq, b.seq);


  private final Topology topology;
  private final Map<NodeId, NodeState> nodes = new LinkedHashMap<>();
  /** Subtrees by path, each level's in first-seen order. */
  private final Map<String, Subtree> subtrees = new LinkedHashMap<>();
  private final Map<RequestRef, Reservation> reservations = new LinkedHashMap<>();
  /** Cordons by node, registered or not ({@link #cordons()}). */
  private final Map<NodeId, String> cordons = new HashMap<>();
  /** Whole-GPU and CPU-only containers' best fit: nodes by free capacity. */
  private final PerModelIndex<NodeState, BestFitIndex> free =
      new PerModelIndex<>(BestFitIndex::new, ClusterState::modelName);
  private final Map<String, TreeSet<NodeState>> byMigProfile = new HashMap<>();
  private final NodeShapes shapes = new NodeShapes();
  private final Set<NodeState> migNodes = new LinkedHashSet<>();
  /** GPUs being re-partitioned, with their nodes, in the order planned: the only ones a cycle must look at. */
  private final Map<MigGpuState, NodeState> inFlight = new LinkedHashMap<>();
  private ResourceVector capacity = ResourceVector.ZERO;
  /** Capacity by partition (node label), the default partition {@code ""} among them once it has a node. */
  private final Map<String, ResourceVector> partitionCapacity = new java.util.TreeMap<>();
  /** Nodes of non-exclusive labels, by label. */
  private final Map<String, Integer> lendingNodes = new HashMap<>();
  private long freeWholeGpus;
  private final SharePlacer shares;
  private int nextSeq;
  /** Changes whenever a node joins or leaves: answers about empty capacity stay valid while it does not. */
  private long nodeSetVersion;

  public ClusterState(Topology topology) {
    this(topology, DEFAULT_SHARE_CANDIDATES);
  }

  /**
   * @param shareCandidates how many nodes placement compares by fragmentation for one container on a cluster with
   *     shared GPUs (the tightest fits from the indexes)
   */
  public ClusterState(Topology topology, int shareCandidates) {
    this.topology = topology;
    this.shares = new SharePlacer(new GpuDemandMix(GpuDemandMix.DEFAULT_WINDOW, GpuDemandMix.DEFAULT_TYPES),
        shareCandidates);
  }

  /**
   * Places compared by fragmentation per placement when GPUs are shared, unless configured otherwise. On OpenB 8
   * already packs above FGD on every pod list; 16 adds under 0.1 point at about half the placement speed
   * (docs/benchmarks.md).
   */
  public static final int DEFAULT_SHARE_CANDIDATES = 8;

  /**
   * {@code containers} new containers of the shape were asked for: the demand mix that placement keeps shared GPUs
   * usable for follows.
   */
  public void asked(Resources shape, long containers) {
    shares.asked(shape, containers);
  }

  public Topology topology() {
    return topology;
  }

  public void addNode(Node node) {
    if (nodes.containsKey(node.id())) {
      throw new InvalidInputException("node.id", node.id(), "duplicate node: already registered");
    }
    topology.requireLocation(node);
    NodeState state = new NodeState(node, nextSeq++);
    List<Subtree> ancestors = new ArrayList<>();
    List<String> paths = Topology.ancestry(node.location());
    for (int depth = 0; depth < paths.size(); depth++) {
      int d = depth;
      Subtree sub = subtrees.computeIfAbsent(paths.get(depth), p -> new Subtree(p, d));
      sub.nodes.add(state);
      sub.add(state, 1);
      ancestors.add(sub);
    }
    state.ancestors = List.copyOf(ancestors);
    nodes.put(node.id(), state);
    nodeSetVersion++;
    if (state.hasMigGpus()) {
      migNodes.add(state);
    }
    shares.nodeAdded(state);
    free.registered(modelName(state), 1);
    state.cordonReason = cordons.get(node.id()); // Cordoned while away: it comes back cordoned.
    index(state);
    shapes.add(node);
    capacity = capacity.plus(node.capacity());
    morePartition(node);
    freeWholeGpus += state.freeWholeGpus;
  }

  /**
   * Removes a node; the caller owns the allocations that were on it. A reservation that held the node is released
   * whole (its gang can no longer count on it) and returned, else {@code null}.
   */
  public Reservation removeNode(NodeId nodeId) {
    NodeState state = nodes.get(nodeId);
    if (state == null) {
      throw new InvalidInputException("node.id", nodeId, "unknown node");
    }
    Reservation broken = state.reservation;
    if (broken != null) {
      releaseReservation(broken);
    }
    nodes.remove(nodeId);
    nodeSetVersion++;
    detach(state);
    shares.remove(state);
    for (Subtree sub : state.ancestors) {
      sub.nodes.remove(state);
    }
    migNodes.remove(state);
    shares.nodeRemoved(state);
    free.unregistered(modelName(state), 1);
    inFlight.values().removeIf(n -> n == state);
    shapes.remove(state.node);
    capacity = capacity.minus(state.node.capacity());
    lessPartition(state.node);
    freeWholeGpus -= state.freeWholeGpus;
    return broken;
  }

  public boolean hasNode(NodeId nodeId) {
    return nodes.containsKey(nodeId);
  }

  long nodeSetVersion() {
    return nodeSetVersion;
  }

  public int nodeCount() {
    return nodes.size();
  }

  public ResourceVector capacity() {
    return capacity;
  }

  /** What the nodes of one partition (node label; {@code ""} the default) hold together. */
  public ResourceVector capacity(String partition) {
    return partitionCapacity.getOrDefault(partition, ResourceVector.ZERO);
  }

  /** The labelled partitions that have nodes, in label order (the default partition not among them). */
  public List<String> labelledPartitions() {
    List<String> out = new ArrayList<>(partitionCapacity.keySet());
    out.remove(Node.DEFAULT_PARTITION);
    return out;
  }

  private void lessPartition(Node node) {
    partitionCapacity.computeIfPresent(node.partition(), (k, v) -> v.equals(node.capacity()) ? null
        : v.minus(node.capacity()));
    if (node.sharesIdle()) {
      lendingNodes.computeIfPresent(node.partition(), (k, v) -> v == 1 ? null : v - 1);
    }
  }

  private void morePartition(Node node) {
    partitionCapacity.merge(node.partition(), node.capacity(), ResourceVector::plus);
    if (node.sharesIdle()) {
      lendingNodes.merge(node.partition(), 1, Integer::sum);
    }
  }

  /** Whether the partition's label is non-exclusive: the default partition's requests may use what it leaves idle. */
  public boolean lendsIdle(String partition) {
    return lendingNodes.containsKey(partition);
  }

  /** The MIG instances that exist on a node's MIG GPUs, by GPU index. */
  public Map<Integer, MigLayout> migLayouts(NodeId nodeId) {
    NodeState state = nodes.get(nodeId);
    return state == null ? Map.of() : state.migLayouts();
  }

  /** Finds the best place for one container without taking it, or {@code null} when no node has room now. */
  public Placement find(Resources shape) {
    if (shape.wantsShare()) {
      return shares.findShare(shape);
    }
    if (shape.wantsMig()) {
      return findMig(shape);
    }
    return shares.active() ? findWholeByFragmentation(shape) : findWhole(shape);
  }

  /**
   * With GPUs shared, where a whole-GPU or CPU-only container goes decides which shares still fit: the best-fit
   * candidates are compared by fragmentation.
   */
  private Placement findWholeByFragmentation(Resources shape) {
    List<NodeState> options = new ArrayList<>();
    if (shape.models().isAny()) {
      collectWhole(free.all(), shape, options);
    } else {
      for (String model : shape.models().names()) {
        BestFitIndex set = free.ofModel(model);
        if (set != null) {
          collectWhole(set, shape, options);
        }
      }
    }
    NodeState best = shares.best(options, shape);
    if (best == null) {
      return null;
    }
    List<GpuSlot> gpus = shape.gpus() == 0 ? List.of() : best.chooseWholeGpus(shape.gpus());
    return new Placement(best.id(), gpus, shape.baseVector());
  }

  /** The first nodes of the index, in best-fit order, that hold the container now. */
  private void collectWhole(BestFitIndex set, Resources shape, List<NodeState> out) {
    walkBestFit(set, shape, out, shares.candidates());
  }

  /**
   * Walks the index in best-fit order from the container's size and returns the first node that holds it now;
   * with {@code out}, also adds the first {@code limit} such nodes to it.
   */
  private static NodeState walkBestFit(BestFitIndex set, Resources shape, List<NodeState> out, int limit) {
    NodeState first = null;
    int seen = 0;
    for (Iterator<NodeState> it = set.from(shape.gpus(), shape.memoryMb()); it.hasNext() && seen < limit; ) {
      NodeState candidate = it.next();
      if (candidate.fitsCpuAndMemory(shape) && (shape.models().isAny() || candidate.node.gpuModel() != null)) {
        first = first == null ? candidate : first;
        if (out == null) {
          return first;
        }
        out.add(candidate);
        seen++;
      }
    }
    return first;
  }

  private Placement findWhole(Resources shape) {
    if (shape.models().isAny()) {
      return findWholeIn(free.all(), shape);
    }
    // "One of" several models: the best fit within each model's nodes, then the best of those.
    Placement best = null;
    NodeState bestNode = null;
    for (String model : shape.models().names()) {
      BestFitIndex set = free.ofModel(model);
      Placement p = set == null ? null : findWholeIn(set, shape);
      if (p != null && (bestNode == null || BY_FREE_CAPACITY.compare(nodes.get(p.nodeId()), bestNode) < 0)) {
        best = p;
        bestNode = nodes.get(p.nodeId());
      }
    }
    return best;
  }

  private Placement findWholeIn(BestFitIndex set, Resources shape) {
    NodeState candidate = walkBestFit(set, shape, null, 1);
    if (candidate == null) {
      return null;
    }
    List<GpuSlot> gpus = shape.gpus() == 0 ? List.of() : candidate.chooseWholeGpus(shape.gpus());
    return new Placement(candidate.id(), gpus, shape.baseVector());
  }

  private Placement findMig(Resources shape) {
    TreeSet<NodeState> set = byMigProfile.get(shape.migProfile());
    if (set == null) {
      return null;
    }
    for (NodeState candidate : set) {
      GpuModel model = candidate.node.gpuModel();
      if (!candidate.fitsCpuAndMemory(shape)
          || !shape.models().accepts(model.name())) {
        continue;
      }
      List<GpuSlot> slots = candidate.chooseMigInstances(shape.migProfile(), shape.migInstances());
      if (slots != null) {
        long units = 0;
        for (GpuSlot s : slots) {
          units += s.mig().profile().gpuUnits();
        }
        return new Placement(candidate.id(), slots, shape.baseVector().plus(new ResourceVector(0, 0, units)));
      }
    }
    return null;
  }

  /**
   * A node's report of the MIG instances that exist on one of its GPUs. Until reported, a re-partitioned GPU's new
   * instances do not count.
   */
  public void reportMigLayout(NodeId nodeId, int gpuIndex, MigLayout layout) {
    NodeState state = requireNode(nodeId);
    MigGpuState gpu = state.migGpu(gpuIndex);
    if (!layout.model().sameModel(gpu.gpu.model())) {
      throw new InvalidInputException("gpu.migLayout", layout, "node " + nodeId + " GPU " + gpuIndex + " is a "
          + gpu.gpu.model().name());
    }
    detach(state);
    try {
      gpu.report(layout);
    } finally {
      attach(state);
    }
  }

  /**
   * Starts a MIG GPU's re-partition to {@code desired}, which keeps every instance in use. Until the node reported it
   * and {@code availableAtMillis} has come, only the instances it keeps are handed out.
   */
  public void beginReconfigure(NodeId nodeId, int gpuIndex, MigLayout desired, long availableAtMillis) {
    NodeState state = requireNode(nodeId);
    MigGpuState gpu = state.migGpu(gpuIndex);
    detach(state);
    try {
      gpu.beginReconfigure(desired, availableAtMillis);
    } finally {
      attach(state);
    }
    inFlight.put(gpu, state);
  }

  /** Puts re-partitioned GPUs whose report has arrived and whose time has come back into service. */
  public void activateReconfiguredGpus(long nowMillis) {
    if (inFlight.isEmpty()) {
      return;
    }
    for (Iterator<Map.Entry<MigGpuState, NodeState>> it = inFlight.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<MigGpuState, NodeState> e = it.next();
      if (e.getKey().due(nowMillis)) {
        detach(e.getValue());
        e.getKey().activate();
        attach(e.getValue());
        it.remove();
      }
    }
  }

  /** GPUs with a re-partition in flight, and their nodes, in the order the re-partitions were planned. */
  Map<MigGpuState, NodeState> gpusInFlight() {
    return Collections.unmodifiableMap(inFlight);
  }

  /** Nodes with at least one MIG-mode GPU, in registration order. */
  Collection<NodeState> migNodes() {
    return migNodes;
  }

  /** Nodes with a free instance of the profile now, fullest first (nodes held for gangs are not among them). */
  Collection<NodeState> nodesWithFreeInstance(String profileName) {
    TreeSet<NodeState> set = byMigProfile.get(profileName);
    return set == null ? List.of() : set;
  }

  /**
   * How many containers of a MIG shape, at most {@code limit}, the nodes could take now, each on one node with its
   * CPU and memory (nodes held for gangs aside): what free instances are worth to that shape, unlike
   * {@link #freeMigInstances}.
   */
  public int migContainersPlaceable(Resources shape, int limit) {
    int n = 0;
    for (NodeState state : nodesWithFreeInstance(shape.migProfile())) {
      if (n >= limit) {
        break;
      }
      n += state.capacityFor(shape, limit - n);
    }
    return n;
  }

  /**
   * Free instances of the profile over the cluster, wherever they are and whatever node CPU or GPU model a request
   * needs: a statistic, not an answer to whether a request can be served (see {@link #migContainersPlaceable}).
   */
  public int freeMigInstances(String profileName) {
    TreeSet<NodeState> set = byMigProfile.get(profileName);
    int n = 0;
    if (set != null) {
      for (NodeState state : set) {
        n += state.freeInstances(profileName);
      }
    }
    return n;
  }

  /** Free MIG instances over the cluster by profile name (every profile some node's layout holds), for metrics. */
  public Map<String, Integer> freeMigInstancesByProfile() {
    Map<String, Integer> out = new TreeMap<>();
    for (String profile : byMigProfile.keySet()) {
      out.put(profile, freeMigInstances(profile));
    }
    return out;
  }

  /** Slices of every MIG-mode GPU: all, held, and free on busy GPUs (see {@link MigSlices}), for metrics. */
  public MigSlices migSlices() {
    long total = 0;
    long used = 0;
    long unheldOnBusy = 0;
    for (NodeState n : nodes.values()) {
      for (MigGpuState g : n.migGpus()) {
        int slices = g.gpu.model().memorySlices();
        int held = g.usedSlices();
        total += slices;
        used += held;
        if (held > 0) {
          unheldOnBusy += slices - held;
        }
      }
    }
    return new MigSlices(total, used, unheldOnBusy);
  }

  /** Instances of the profile in the layouts of re-partitions not yet in force. */
  public int migInstancesInFlight(String profileName) {
    int n = 0;
    for (MigGpuState gpu : inFlight.keySet()) {
      for (MigPlacement p : gpu.pending().placements()) {
        if (p.profile().name().equals(profileName)) {
          n++;
        }
      }
    }
    return n;
  }

  /** Where one container of {@code shape} would go on this very node now (a recovered container), or null. */
  public Placement placeOn(NodeId nodeId, Resources shape) {
    NodeState state = nodes.get(nodeId);
    if (state == null || state.capacityFor(shape, 1) < 1) {
      return null;
    }
    List<Placement> p = GangPlacer.placeOnNode(state, shape, 1);
    return p == null ? null : p.get(0);
  }

  public void commit(Resources shape, Placement placement) {
    NodeState state = requireNode(placement.nodeId());
    change(state, () -> state.take(shape, placement.gpus()));
  }

  /** Changes a node's free capacity, with its indexes, subtree sums and the cluster's free whole GPUs around it. */
  private void change(NodeState state, Runnable change) {
    detach(state);
    long before = state.freeWholeGpus;
    change.run();
    freeWholeGpus += state.freeWholeGpus - before;
    attach(state);
  }

  public void release(Resources shape, Placement placement) {
    NodeState state = nodes.get(placement.nodeId());
    if (state == null) {
      return; // The node left; its capacity left with it.
    }
    change(state, () -> state.give(shape, placement.gpus()));
  }

  /**
   * Why no registered node could hold this container even when empty, or {@code null} if one could. Used to
   * reject impossible requests at once rather than leave them pending forever.
   */
  public String whyNever(Resources shape) {
    return shapes.whyNever(shape);
  }

  /**
   * Moves a node to partition {@code partition} (its YARN node label changed). What runs there keeps running; from now
   * on only requests of the new partition are placed on it. Returns the reservation holding the node, if any, for the
   * caller to give up.
   */
  public Reservation changePartition(NodeId nodeId, String partition, boolean sharesIdle) {
    NodeState state = requireNode(nodeId);
    Reservation held = state.reservation;
    shapes.remove(state.node);
    lessPartition(state.node);
    state.node = state.node.withPartition(partition, sharesIdle);
    shapes.add(state.node);
    morePartition(state.node);
    return held;
  }

  /** A registered node as it registered (its partition as it is now); {@code null} for one that is not. */
  public Node nodeOf(NodeId nodeId) {
    NodeState state = nodes.get(nodeId);
    return state == null ? null : state.node;
  }

  /** Why the container does not fit now, for the pending reason users read. */
  public String whyNotNow(Resources shape) {
    // The text stays the same while the situation does: drivers re-announce a request only when its reason changes.
    if (shape.wantsShare()) {
      return "waiting for a share of a GPU: no shared GPU with room for " + shape + " is free now";
    }
    if (shape.wantsMig()) {
      return migInstancesInFlight(shape.migProfile()) > 0
          ? "waiting for a MIG instance of " + shape.migProfile() + ": MIG GPUs are being re-partitioned for it"
          : "waiting for a MIG instance of " + shape.migProfile() + ": none is free on a node with room for it";
    }
    if (shape.gpus() > 0 && freeWholeGpus >= shape.gpus()) {
      return "waiting for capacity: enough GPUs are free in the cluster, but no node has " + shape.gpus()
          + " free together with " + shape.memoryMb() + " MB and " + shape.vcores() + " vcores (fragmentation)";
    }
    return "waiting for capacity: no node has room for " + shape + " now";
  }

  NodeState node(NodeId nodeId) {
    return nodes.get(nodeId);
  }

  private NodeState requireNode(NodeId nodeId) {
    NodeState state = nodes.get(nodeId);
    if (state == null) {
      throw new InvalidInputException("node.id", nodeId, "unknown node");
    }
    return state;
  }

  /** Takes a node out of the indexes and its subtrees' sums before it changes. */
  private void detach(NodeState state) {
    unindex(state);
    for (Subtree sub : state.ancestors) {
      sub.add(state, -1);
    }
  }

  /** Puts a changed node back into its subtrees' sums and (unless reserved) the indexes. */
  private void attach(NodeState state) {
    for (Subtree sub : state.ancestors) {
      sub.add(state, 1);
    }
    index(state);
  }

  private void index(NodeState state) {
    if (state.reservation != null || state.cordonReason != null) {
      return; // Out of the general search: reserved nodes are looked up by their gang and backfill, cordoned by none.
    }
    free.add(state);
    shares.index(state);
    GpuModel model = state.node.gpuModel();
    if (model != null) {
      if (state.hasMigGpus()) {
        Set<String> placeable = new LinkedHashSet<>();
        for (MigProfile p : model.profiles()) {
          if (state.hasFreeInstance(p.name())) {
            byMigProfile.computeIfAbsent(p.name(), k -> new TreeSet<>(BY_FREE_MIG)).add(state);
            placeable.add(p.name());
          }
        }
        state.migIndexedProfiles = placeable;
      }
    }
  }

  private void unindex(NodeState state) {
    free.remove(state);
    shares.unindex(state);
    Set<String> placeable = state.migIndexedProfiles;
    if (placeable != null) {
      state.migIndexedProfiles = null;
      for (String profile : placeable) {
        byMigProfile.get(profile).remove(state);
      }
    }
  }


  private static String modelName(NodeState n) {
    return n.node.gpuModel() == null ? null : n.node.gpuModel().name();
  }

  private static NodeState probe(int freeWholeGpus, int freeMigSlices, long freeMemoryMb) {
    return NodeState.probe(freeWholeGpus, freeMigSlices, freeMemoryMb);
  }

  /** Every node's state, in registration order (gang placement walks them when subtree sums allow). */
  Collection<NodeState> nodeStates() {
    return nodes.values();
  }

  /** Subtrees of one topology level, in first-seen order. */
  List<Subtree> subtreesAt(int depth) {
    List<Subtree> out = new ArrayList<>();
    for (Subtree sub : subtrees.values()) {
      if (sub.depth == depth) {
        out.add(sub);
      }
    }
    return out;
  }

  /**
   * The depth a gang may span up to: -1 for the whole cluster (no limit), 0.. for the topology's levels from the top,
   * {@code levels.size()} for a single node.
   */
  public int depthOf(String level) {
    if (level == null || level.isBlank() || level.equals("cluster")) {
      return -1;
    }
    if (level.equals("node")) {
      return topology.levels().size();
    }
    int i = topology.levels().indexOf(level);
    if (i < 0) {
      List<String> known = new ArrayList<>(topology.levels());
      known.add("node");
      throw new InvalidInputException("topology level", level, "unknown; levels are " + known + " (or cluster)");
    }
    return i;
  }

  /** Holds nodes for a gang: they leave the general search until {@link #releaseReservation}. */
  void reserve(Reservation r) {
    for (NodeState state : r.nodes()) {
      unindex(state);
      shares.remove(state);
      state.reservation = r;
    }
    reservations.put(r.owner(), r);
  }

  /**
   * Holds exactly {@code nodeIds} for a gang again, as reserved at {@code createdMillis} by an earlier leader, so
   * that its timeout runs on rather than restarts. Refused, with nothing held, when a node is unknown or held
   * already, or the owner holds a reservation.
   */
  public Reservation reserveAgain(RequestRef owner, String subtree, List<NodeId> nodeIds, long createdMillis) {
    if (reservations.containsKey(owner)) {
      throw new InvalidInputException("reservation", owner, "already holds nodes");
    }
    List<NodeState> held = new ArrayList<>();
    for (NodeId id : nodeIds) {
      NodeState state = nodes.get(id);
      if (state == null) {
        throw new InvalidInputException("node.id", id, "not registered");
      }
      if (state.reservation != null) {
        throw new InvalidInputException("node.id", id, "held for " + state.reservation.owner());
      }
      held.add(state);
    }
    Reservation r = new Reservation(owner, subtree, held, createdMillis);
    reserve(r);
    return r;
  }

  /**
   * Takes new work off a node, for {@code reason}, until {@link #uncordon}: what runs there runs on, and its capacity
   * still counts in queue shares. Returns the reservation it held, released, for its gang to be told.
   */
  public Reservation cordon(NodeId nodeId, String reason) {
    NodeState state = requireNode(nodeId);
    Reservation held = state.reservation;
    if (held != null) {
      releaseReservation(held);
    }
    unindex(state);
    state.cordonReason = reason;
    cordons.put(nodeId, reason);
    return held;
  }

  /** Puts one GPU in or out of service ({@code null}: fully in service); see {@link NodeState#setService}. */
  public void setGpuService(NodeId nodeId, int gpuIndex, GpuService service) {
    NodeState state = requireNode(nodeId);
    change(state, () -> state.setService(gpuIndex, service));
  }

  public void uncordon(NodeId nodeId) {
    NodeState state = requireNode(nodeId);
    cordons.remove(nodeId);
    if (state.cordonReason != null) {
      state.cordonReason = null;
      index(state);
    }
  }

  /**
   * Every cordon, by node: kept while a node is away, so a cordoned node that re-registers (after a restart or a
   * failover) is still cordoned.
   */
  public Map<NodeId, String> cordons() {
    return new TreeMap<>(cordons);
  }

  /** Cordons a node now if it is registered, else when it registers: a new leader restoring its predecessor's. */
  public void restoreCordon(NodeId nodeId, String reason) {
    if (nodes.containsKey(nodeId)) {
      cordon(nodeId, reason);
    } else {
      cordons.put(nodeId, reason);
    }
  }

  public void releaseReservation(Reservation r) {
    if (reservations.remove(r.owner()) == null) {
      return;
    }
    for (NodeState state : r.nodes()) {
      if (state.reservation == r) {
        state.reservation = null;
        if (nodes.containsKey(state.id())) {
          index(state);
        }
      }
    }
  }

  public Reservation reservation(RequestRef owner) {
    return reservations.get(owner);
  }

  public Collection<Reservation> reservations() {
    return reservations.values();
  }

  /** Free whole GPUs per node, for tests and snapshots. */
  public Map<NodeId, Integer> freeWholeGpusByNode() {
    Map<NodeId, Integer> out = new TreeMap<>();
    nodes.forEach((id, n) -> out.put(id, n.freeWholeGpus));
    return out;
  }

  /** Every node as it stands, in registration order. */
  public List<NodeView> nodeViews() {
    List<NodeView> out = new ArrayList<>(nodes.size());
    for (NodeState n : nodes.values()) {
      out.add(n.view());
    }
    return out;
  }

  /** Ids of all nodes, in registration order. */
  public List<NodeId> nodeIds() {
    return new ArrayList<>(nodes.keySet());
  }
}
