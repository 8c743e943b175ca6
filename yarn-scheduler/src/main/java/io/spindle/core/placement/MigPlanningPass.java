package io.spindle.core.placement;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One planning pass over the requests a cycle left waiting for MIG instances. Each container is given instances on
 * one node that has its CPU and memory: instances that are free, on their way or planned earlier in the pass if
 * such a node has enough, else new ones. What the pass gives a container is promised to it, and the node's CPU and
 * memory with it, so no later container of the pass counts them again.
 *
 * <p>New instances go where the {@link MigSlotPolicy} puts them among the GPUs that can take them beside what
 * already exists: first GPUs already planned in the pass (no further GPU disturbed), then GPUs with work on them
 * (their free slices are otherwise stranded; idle GPUs stay whole for large instances), then idle ones. Only when no
 * GPU can do that are unused instances in the way destroyed; instances in use never are. A GPU with a re-partition
 * in flight is left alone until it is in force.
 */
final class MigPlanningPass {

  /** A GPU planned in this pass and the layout it gets. */
  static final class Target {
    final NodeState node;
    final MigGpuState gpu;
    MigLayout layout;

    Target(NodeState node, MigGpuState gpu, MigLayout layout) {
      this.node = node;
      this.gpu = gpu;
      this.layout = layout;
    }
  }

  /**
   * A place a new instance may go: a GPU's layout as it stands ({@code base}; for a GPU already planned, its planned
   * layout), or with the unused instances in the way removed.
   */
  /**
   * One GPU the instance could go on. {@code rank} orders options of different GPU models (lower first): planned in
   * this pass, then with work on it, then idle (by the idle GPUs of its node), then only by destroying instances.
   */
  private record Option(NodeState node, MigGpuState gpu, Target target, MigLayout base, long destroyedUnits,
      long rank) {}

  private static final long IN_PASS = 0;
  private static final long BUSY = 1L << 32;
  private static final long IDLE = 2L << 32;
  private static final long DESTRUCTIVE = 3L << 32;

  private final ClusterState cluster;
  private final MigSlotPolicy policy;
  private int budget;
  /** Memory (MB) and vcores promised to containers planned onto each node in this pass. */
  private final Map<NodeState, long[]> promisedCpu = new HashMap<>();
  /** Per GPU, the memory-slice starts of instances promised in this pass (a start names one instance). */
  private final Map<MigGpuState, Integer> promisedStarts = new HashMap<>();
  private final Map<MigGpuState, Target> planned = new LinkedHashMap<>();
  private final List<GpuModel> models = new ArrayList<>();
  /** Per profile name, nodes that had ready instances of it; see {@link #nodesWithReady}. */
  private final Map<String, List<NodeState>> readyNodes = new HashMap<>();

  /**
   * @param maxGpus how many GPUs not yet being re-partitioned the pass may change
   */
  MigPlanningPass(ClusterState cluster, MigSlotPolicy policy, int maxGpus) {
    this.cluster = cluster;
    this.policy = policy;
    this.budget = maxGpus;
    for (NodeState node : cluster.migNodes()) {
      GpuModel m = node.node.gpuModel();
      if (models.stream().noneMatch(m::sameModel)) {
        models.add(m);
      }
    }
  }

  /** Whether the pass may still change a GPU it has not planned yet. */
  boolean budgetLeft() {
    return budget > 0;
  }

  Collection<Target> planned() {
    return planned.values();
  }

  /** Finds or plans the instances of one container; false when no node can have them now. */
  boolean serve(Resources shape) {
    NodeState node = serveFromReady(shape);
    if (node == null) {
      node = shape.migInstances() == 1 ? createOne(shape, null) : createOnOneNode(shape);
    }
    if (node == null) {
      return false;
    }
    long[] c = promisedCpu.computeIfAbsent(node, k -> new long[2]);
    c[0] += shape.memoryMb();
    c[1] += shape.vcores();
    return true;
  }

  // ---------------------------------------------------------------- instances that exist or are on their way

  /** A node whose ready instances (free, on their way, planned in the pass) cover the container; they are promised. */
  private NodeState serveFromReady(Resources shape) {
    List<NodeState> nodes = readyNodes.computeIfAbsent(shape.migProfile(), this::nodesWithReady);
    for (int i = 0; i < nodes.size(); i++) {
      NodeState node = nodes.get(i);
      if (!eligible(node, shape) || readySupply(node, shape.migProfile()) < shape.migInstances()) {
        continue;
      }
      promiseReady(node, shape.migProfile(), shape.migInstances());
      if (readySupply(node, shape.migProfile()) == 0) {
        nodes.remove(i);
      }
      return node;
    }
    return null;
  }

  /**
   * Nodes with ready instances of the profile, GPUs in flight first. Promises only ever take ready instances away
   * within a pass (a new instance is promised as it is planned), so the list is built once per profile.
   */
  private List<NodeState> nodesWithReady(String profileName) {
    Set<NodeState> nodes = new LinkedHashSet<>(cluster.gpusInFlight().values());
    for (Target t : planned.values()) {
      nodes.add(t.node);
    }
    nodes.addAll(cluster.nodesWithFreeInstance(profileName));
    List<NodeState> out = new ArrayList<>();
    for (NodeState node : nodes) {
      if (readySupply(node, profileName) > 0) {
        out.add(node);
      }
    }
    return out;
  }

  /** The layout a GPU has or is getting: planned in this pass, else in flight, else as reported. */
  private MigLayout effective(MigGpuState gpu) {
    Target t = planned.get(gpu);
    if (t != null) {
      return t.layout;
    }
    return gpu.pending() != null ? gpu.pending() : gpu.configured();
  }

  private boolean ready(MigGpuState gpu, MigPlacement p, String profileName) {
    return p.profile().name().equals(profileName) && (gpu.inUse().usedSliceMask() & p.sliceMask()) == 0
        && (promisedStarts.getOrDefault(gpu, 0) & (1 << p.start())) == 0;
  }

  private int readySupply(NodeState node, String profileName) {
    int n = 0;
    for (MigGpuState gpu : node.migGpus()) {
      for (MigPlacement p : effective(gpu).placements()) {
        if (ready(gpu, p, profileName)) {
          n++;
        }
      }
    }
    return n;
  }

  private void promiseReady(NodeState node, String profileName, int count) {
    for (MigGpuState gpu : node.migGpus()) {
      for (MigPlacement p : effective(gpu).placements()) {
        if (count > 0 && ready(gpu, p, profileName)) {
          promise(gpu, p);
          count--;
        }
      }
    }
  }

  private void promise(MigGpuState gpu, MigPlacement p) {
    promisedStarts.merge(gpu, 1 << p.start(), (a, b) -> a | b);
  }

  // ---------------------------------------------------------------- new instances

  /**
   * Plans one new instance for a container of {@code shape}, on {@code onlyNode} or on any node that can hold the
   * container; returns the node, or null.
   */
  private NodeState createOne(Resources shape, NodeState onlyNode) {
    // Every accepted model's best option, then the best of those: taking the first model with any option put all
    // small instances on the first-registered model's GPUs, breaking its 8-GPU nodes while 2-GPU nodes of other
    // models stayed idle.
    Option best = null;
    MigPlacement bestPlacement = null;
    for (GpuModel model : models) {
      if ((onlyNode != null && !onlyNode.node.gpuModel().sameModel(model))
          || !shape.models().accepts(model.name())) {
        continue;
      }
      MigProfile profile = model.profile(shape.migProfile()).orElse(null);
      if (profile == null) {
        continue;
      }
      Iterable<NodeState> nodes = onlyNode != null ? List.of(onlyNode) : cluster.migNodes();
      List<Option> options = additiveOptions(shape, profile, model, nodes);
      if (options.isEmpty()) {
        options = destructiveOptions(shape, profile, model, nodes);
      }
      if (options.isEmpty()) {
        continue;
      }
      List<MigLayout> layouts = new ArrayList<>(options.size());
      for (Option o : options) {
        layouts.add(o.base());
      }
      MigSlotPolicy.Choice choice = policy.choose(profile, layouts);
      if (choice == null) {
        continue;
      }
      Option o = options.get(choice.option());
      if (best == null || o.rank() < best.rank()) {
        best = o;
        bestPlacement = new MigPlacement(profile, choice.start());
      }
    }
    if (best == null) {
      return null;
    }
    Option o = best;
    MigPlacement placement = bestPlacement;
    MigLayout before = effective(o.gpu());
    MigLayout layout = o.base().with(placement);
    if (o.base() != before) {
      // Unused instances that are not in the way stay: destroying them would gain nothing.
      for (MigPlacement old : before.placements()) {
        if (!layout.placements().contains(old) && layout.canAdd(old)) {
          layout = layout.with(old);
        }
      }
    }
    if (o.target() != null) {
      o.target().layout = layout;
    } else {
      planned.put(o.gpu(), new Target(o.node(), o.gpu(), layout));
      budget--;
    }
    promise(o.gpu(), placement);
    return o.node();
  }

  /**
   * GPUs that can take the instance beside what they have, one option per distinct layout (the slot policy's choice
   * depends on the layout alone): GPUs planned in the pass first, then GPUs with work on them, then idle ones. Of the
   * GPUs with one layout, the one on the node with the fewest idle GPUs stands for it (then registration order):
   * the best fit of whole-GPU placement, so that nodes with many idle GPUs stay whole for multi-GPU containers.
   * (Taking the first node in registration order broke 8-GPU nodes for small instances while 1- and 2-GPU nodes
   * had idle GPUs: on an OpenB pod list with half of the GPU tasks asking 2-8 GPUs, MIG placed 91.1% of the GPUs at
   * 100% arrived against 95.3% with whole GPUs only.)
   */
  private List<Option> additiveOptions(Resources shape, MigProfile profile, GpuModel model,
      Iterable<NodeState> nodes) {
    Map<MigLayout, Option> inPass = new LinkedHashMap<>();
    Map<MigLayout, Option> busy = new LinkedHashMap<>();
    Map<MigLayout, Option> idle = new LinkedHashMap<>();
    for (NodeState node : nodes) {
      if (!node.node.gpuModel().sameModel(model) || !eligible(node, shape)) {
        continue;
      }
      int idleHere = 0;
      for (MigGpuState gpu : node.migGpus()) {
        idleHere += gpu.inUse().isEmpty() && !planned.containsKey(gpu) ? 1 : 0;
      }
      for (MigGpuState gpu : node.migGpus()) {
        Target t = planned.get(gpu);
        if (t != null) {
          if (t.layout.placeable(profile) > 0) {
            inPass.putIfAbsent(t.layout, new Option(node, gpu, t, t.layout, 0, IN_PASS));
          }
        } else if (changeable(gpu) && gpu.configured().placeable(profile) > 0) {
          Option o = new Option(node, gpu, null, gpu.configured(), 0,
              gpu.inUse().isEmpty() ? IDLE + idleHere : BUSY + idleHere);
          (gpu.inUse().isEmpty() ? idle : busy).merge(gpu.configured(), o,
              (kept, next) -> next.rank() < kept.rank() ? next : kept); // Fewer idle GPUs on its node.
        }
      }
    }
    List<Option> out = new ArrayList<>(inPass.values());
    out.addAll(busy.values());
    out.addAll(idle.values());
    return out;
  }

  /**
   * GPUs that can take the instance once unused instances in the way are destroyed, one option per distinct
   * resulting layout, the one destroying least first (so the slot policy's ties destroy least).
   */
  private List<Option> destructiveOptions(Resources shape, MigProfile profile, GpuModel model,
      Iterable<NodeState> nodes) {
    Map<MigLayout, Option> byLayout = new LinkedHashMap<>();
    for (NodeState node : nodes) {
      if (!node.node.gpuModel().sameModel(model) || !eligible(node, shape)) {
        continue;
      }
      for (MigGpuState gpu : node.migGpus()) {
        Target t = planned.get(gpu);
        if ((t == null && !changeable(gpu)) || mustKeep(gpu).placeable(profile) == 0) {
          continue;
        }
        MigLayout current = effective(gpu);
        for (int start : profile.legalStarts()) {
          MigLayout base = withoutWhatIsInTheWay(gpu, new MigPlacement(profile, start));
          if (base != null) {
            long destroyed = 0;
            for (MigPlacement old : current.placements()) {
              if (!base.placements().contains(old)) {
                destroyed += old.profile().gpuUnits();
              }
            }
            Option o = new Option(node, gpu, t, base, destroyed, DESTRUCTIVE + destroyed);
            byLayout.merge(base, o, (a, b) -> b.destroyedUnits() < a.destroyedUnits() ? b : a);
          }
        }
      }
    }
    List<Option> out = new ArrayList<>(byLayout.values());
    out.sort(Comparator.comparingLong(Option::destroyedUnits));
    return out;
  }

  /**
   * Whether the pass may change this GPU now. Work running on it is no obstacle: MIG creates and destroys instances
   * beside running ones, and a plan never destroys an instance in use ({@link #mustKeep}).
   */
  private boolean changeable(MigGpuState gpu) {
    return budget > 0 && gpu.available();
  }

  /** The instances of a GPU nothing may destroy: those in use and those promised in this pass. */
  private MigLayout mustKeep(MigGpuState gpu) {
    int promised = promisedStarts.getOrDefault(gpu, 0);
    if (promised == 0) {
      return gpu.inUse();
    }
    MigLayout keep = gpu.inUse();
    for (MigPlacement p : effective(gpu).placements()) {
      if ((promised & (1 << p.start())) != 0 && !keep.placements().contains(p)) {
        keep = keep.with(p);
      }
    }
    return keep;
  }

  /**
   * The GPU's layout (as planned so far) without the unused instances that keep {@code add} out (those overlapping
   * it, then, if the compute budget or an instance limit still refuses it, more of them, smallest first); null if
   * what must stay refuses it.
   */
  private MigLayout withoutWhatIsInTheWay(MigGpuState gpu, MigPlacement add) {
    MigLayout keep = mustKeep(gpu);
    if (!keep.canAdd(add)) {
      return null;
    }
    List<MigPlacement> stay = new ArrayList<>(keep.placements());
    List<MigPlacement> removable = new ArrayList<>();
    for (MigPlacement p : effective(gpu).placements()) {
      if (!keep.placements().contains(p) && (p.sliceMask() & add.sliceMask()) == 0) {
        stay.add(p);
        removable.add(p);
      }
    }
    stay.sort(Comparator.comparingInt(MigPlacement::start));
    removable.sort(Comparator.comparingLong((MigPlacement p) -> p.profile().gpuUnits())
        .thenComparingInt(MigPlacement::start));
    MigLayout base = MigLayout.of(gpu.gpu.model(), stay);
    while (!base.canAdd(add)) {
      if (removable.isEmpty()) {
        return null;
      }
      base = base.without(removable.remove(0));
    }
    return base;
  }

  /**
   * A container of several instances: the node that holds it with the least room to spare (best fit) among those
   * whose ready instances plus what their GPUs could still make cover it; its instances are then planned there one
   * by one. If the slot policy's choices leave that node short, the node's part of the pass is undone and the next
   * node tried.
   */
  private NodeState createOnOneNode(Resources shape) {
    int k = shape.migInstances();
    String name = shape.migProfile();
    List<NodeState> nodes = new ArrayList<>();
    Map<NodeState, Integer> slack = new HashMap<>();
    for (NodeState node : cluster.migNodes()) {
      if (!eligible(node, shape)) {
        continue;
      }
      MigProfile profile = node.node.gpuModel().profile(name).orElseThrow();
      int total = readySupply(node, name) + creatable(node, profile);
      if (total >= k) {
        nodes.add(node);
        slack.put(node, total - k);
      }
    }
    nodes.sort(Comparator.comparingInt(slack::get));
    for (NodeState node : nodes) {
      NodeSnapshot before = snapshot(node);
      int fromReady = Math.min(k, readySupply(node, name));
      promiseReady(node, name, fromReady);
      boolean ok = true;
      for (int i = fromReady; i < k && ok; i++) {
        ok = createOne(shape, node) != null;
      }
      if (ok) {
        return node;
      }
      restore(node, before);
    }
    return null;
  }

  /** What the pass holds on one node's GPUs (promised starts, planned layouts) and its budget, to undo an attempt. */
  private record NodeSnapshot(Map<MigGpuState, Integer> starts, Map<MigGpuState, MigLayout> layouts, int budget) {}

  private NodeSnapshot snapshot(NodeState node) {
    Map<MigGpuState, Integer> starts = new HashMap<>();
    Map<MigGpuState, MigLayout> layouts = new HashMap<>();
    for (MigGpuState gpu : node.migGpus()) {
      starts.put(gpu, promisedStarts.get(gpu));
      Target t = planned.get(gpu);
      layouts.put(gpu, t == null ? null : t.layout);
    }
    return new NodeSnapshot(starts, layouts, budget);
  }

  private void restore(NodeState node, NodeSnapshot before) {
    for (MigGpuState gpu : node.migGpus()) {
      Integer starts = before.starts().get(gpu);
      if (starts == null) {
        promisedStarts.remove(gpu);
      } else {
        promisedStarts.put(gpu, starts);
      }
      MigLayout layout = before.layouts().get(gpu);
      if (layout == null) {
        planned.remove(gpu);
      } else {
        planned.get(gpu).layout = layout;
      }
    }
    budget = before.budget();
  }

  /** How many more instances of the profile the node's GPUs could be given in this pass, within its budget. */
  private int creatable(NodeState node, MigProfile profile) {
    int n = 0;
    List<Integer> fresh = new ArrayList<>();
    for (MigGpuState gpu : node.migGpus()) {
      if (planned.containsKey(gpu)) {
        n += mustKeep(gpu).placeable(profile);
      } else if (changeable(gpu)) {
        fresh.add(mustKeep(gpu).placeable(profile));
      }
    }
    fresh.sort(Comparator.reverseOrder());
    for (int i = 0; i < Math.min(budget, fresh.size()); i++) {
      n += fresh.get(i);
    }
    return n;
  }

  /**
   * Whether the node may get this container: not held for a gang, its GPUs offer the profile (of the model asked
   * for), and its CPU and memory, less what the pass promised, hold it.
   */
  boolean eligible(NodeState node, Resources shape) {
    GpuModel model = node.node.gpuModel();
    if (node.reservation != null || node.cordonReason != null || !node.inPartition(shape) || model == null || model.profile(shape.migProfile()).isEmpty()
        || !shape.models().accepts(model.name())) {
      return false;
    }
    long[] c = promisedCpu.get(node);
    long memory = c == null ? 0 : c[0];
    long vcores = c == null ? 0 : c[1];
    return node.freeMemoryMb - memory >= shape.memoryMb() && node.freeVcores - vcores >= shape.vcores();
  }
}
