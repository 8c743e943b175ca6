package io.spindle.core.placement;

import io.spindle.core.model.Gpu;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What is free on one node right now. Mutable, owned by {@link ClusterState}, which re-indexes the node around
 * every change (the index orders nodes by these very fields).
 */
final class NodeState {

  /** Replaced only when the node's partition changes ({@link ClusterState#changePartition}). */
  Node node;
  final int seq;
  long freeMemoryMb;
  int freeVcores;
  /** Per GPU position in {@code node.gpus()}: taken by a whole-GPU container (non-MIG GPUs only). */
  private final boolean[] wholeTaken;
  int freeWholeGpus;
  /** GPUs not in MIG mode, free or not. */
  private final int wholeGpuCount;
  /** Per GPU position: state of a MIG-mode GPU, {@code null} for a whole GPU. */
  private final MigGpuState[] mig;
  /** The non-null entries of {@code mig}, built once: planning walks them for every node, every cycle. */
  private final List<MigGpuState> migList;
  /**
   * Memory slices of MIG-mode GPUs that no container holds; orders nodes fullest first for MIG placement, and keeps
   * containers without GPUs off nodes whose MIG GPUs still have room.
   */
  int freeMigSlices;
  /** Topology subtrees holding this node, top level first; set by {@link ClusterState}. */
  List<Subtree> ancestors = List.of();
  /** The gang reservation holding this node, or {@code null}. */
  Reservation reservation;
  /** Why an admin took new work off this node ({@link ClusterState#cordon}), or {@code null}: it takes new work. */
  String cordonReason;
  /** Per GPU position: why it is not fully in service, {@code null} when it is. */
  private final GpuService[] service;
  /** Whole GPUs counted in {@code freeWholeGpus} that are degraded: what a gang may not take. */
  private int freeDegraded;
  /** Per GPU position: its NVLink island id. */
  private final int[] islandIds;
  /** Per GPU position: state of a GPU in a sharing mode, {@code null} otherwise. */
  private final SharedGpu[] shared;
  /** The non-null entries of {@code shared}. */
  private final List<SharedGpu> sharedList;
  /** Counts every take and give: what {@link FragmentationScore} checks its remembered measure against. */
  int changes;
  /** The MIG profiles under which {@link ClusterState} indexed this node; {@code null} when in none. */
  java.util.Set<String> migIndexedProfiles;
  /** The fragmentation measure of this node for {@code measuredFor} at {@code measuredAt} changes. */
  double measure;
  GpuDemandMix.Table measuredFor;
  int measuredAt;

  /** A key-only instance for ceiling lookups in {@link ClusterState}'s ordered sets. */
  static NodeState probe(int freeWholeGpus, int freeMigSlices, long freeMemoryMb) {
    return new NodeState(freeWholeGpus, freeMigSlices, freeMemoryMb);
  }

  private NodeState(int freeWholeGpus, int freeMigSlices, long freeMemoryMb) {
    this.node = null;
    this.seq = Integer.MIN_VALUE;
    this.freeWholeGpus = freeWholeGpus;
    this.freeMigSlices = freeMigSlices;
    this.freeMemoryMb = freeMemoryMb;
    this.freeVcores = Integer.MIN_VALUE;
    this.wholeTaken = new boolean[0];
    this.service = new GpuService[0];
    this.mig = new MigGpuState[0];
    this.islandIds = new int[0];
    this.wholeGpuCount = 0;
    this.migList = List.of();
    this.shared = new SharedGpu[0];
    this.sharedList = List.of();
  }

  NodeState(Node node, int seq) {
    this.node = node;
    this.seq = seq;
    this.freeMemoryMb = node.memoryMb();
    this.freeVcores = node.vcores();
    List<Gpu> gpus = node.gpus();
    this.wholeTaken = new boolean[gpus.size()];
    this.service = new GpuService[gpus.size()];
    this.mig = new MigGpuState[gpus.size()];
    this.islandIds = gpus.stream().mapToInt(Gpu::nvlinkIsland).toArray();
    this.shared = new SharedGpu[gpus.size()];
    List<SharedGpu> sharing = new ArrayList<>();
    for (int i = 0; i < gpus.size(); i++) {
      Gpu g = gpus.get(i);
      if (g.sharesBelowWhole()) {
        shared[i] = new SharedGpu(g, this, i);
        sharing.add(shared[i]);
      }
      if (g.migEnabled()) {
        mig[i] = new MigGpuState(g);
        freeMigSlices += g.model().memorySlices();
      } else {
        freeWholeGpus++;
      }
    }
    this.wholeGpuCount = freeWholeGpus;
    List<MigGpuState> list = new ArrayList<>();
    for (MigGpuState g : mig) {
      if (g != null) {
        list.add(g);
      }
    }
    this.migList = List.copyOf(list);
    this.sharedList = List.copyOf(sharing);
  }

  NodeId id() {
    return node.id();
  }

  boolean hasMigGpus() {
    return !migList.isEmpty();
  }

  /** The GPUs of this node in a sharing mode, in GPU order. */
  List<SharedGpu> sharedGpus() {
    return sharedList;
  }

  /** How many containers of the shape fit here now, at most {@code limit}. */
  int capacityFor(Resources shape, int limit) {
    return capacityFor(shape, limit, false);
  }

  /** {@link #capacityFor} for members of a gang, which take no degraded GPU. */
  int gangCapacityFor(Resources shape, int limit) {
    return capacityFor(shape, limit, true);
  }

  private int capacityFor(Resources shape, int limit, boolean gang) {
    if (!inPartition(shape) || cordonReason != null) {
      return 0;
    }
    long c = limit;
    if (shape.memoryMb() > 0) {
      c = Math.min(c, freeMemoryMb / shape.memoryMb());
    }
    if (shape.vcores() > 0) {
      c = Math.min(c, freeVcores / shape.vcores());
    }
    if (shape.wantsGpu()) {
      if (!shape.models().accepts(node.gpuModel())) {
        return 0;
      }
      if (shape.wantsShare()) {
        long room = 0;
        for (SharedGpu g : sharedList) {
          room += g.capacity(shape);
        }
        c = Math.min(c, room);
      } else {
        c = shape.gpus() > 0 ? Math.min(c, (freeWholeGpus - (gang ? freeDegraded : 0)) / shape.gpus())
            : Math.min(c, freeInstances(shape.migProfile()) / shape.migInstances());
      }
    }
    return (int) Math.max(0, c);
  }

  /**
   * How many containers of a shape that asks for whole GPUs (or none) would fit here once containers holding {@code
   * memoryMb}, {@code vcores} and {@code wholeGpus} more have ended, at most {@code limit}: {@link #capacityFor}'s
   * count, with the freed room added.
   */
  int capacityWithFreed(Resources shape, int limit, long memoryMb, long vcores, long wholeGpus) {
    if (!inPartition(shape) || cordonReason != null || (shape.wantsGpu() && !shape.models().accepts(node.gpuModel()))) {
      return 0;
    }
    long c = limit;
    if (shape.memoryMb() > 0) {
      c = Math.min(c, (freeMemoryMb + memoryMb) / shape.memoryMb());
    }
    if (shape.vcores() > 0) {
      c = Math.min(c, (freeVcores + vcores) / shape.vcores());
    }
    if (shape.gpus() > 0) {
      c = Math.min(c, (freeWholeGpus + wholeGpus) / shape.gpus());
    }
    return (int) Math.max(0, c);
  }

  /** How many containers of the shape would fit on this node if it were empty, at most {@code limit}. */
  int emptyCapacityFor(Resources shape, int limit) {
    if (!inPartition(shape)) {
      return 0;
    }
    long c = limit;
    if (shape.memoryMb() > 0) {
      c = Math.min(c, node.memoryMb() / shape.memoryMb());
    }
    if (shape.vcores() > 0) {
      c = Math.min(c, node.vcores() / shape.vcores());
    }
    if (shape.wantsGpu()) {
      if (!shape.models().accepts(node.gpuModel())) {
        return 0;
      }
      if (shape.wantsShare()) {
        long room = 0;
        for (SharedGpu g : sharedList) {
          room += g.emptyCapacity(shape);
        }
        c = Math.min(c, room);
      } else if (shape.gpus() > 0) {
        c = Math.min(c, wholeGpuCount / shape.gpus());
      } else {
        int room = 0;
        for (MigGpuState g : mig) {
          if (g != null) {
            room += g.gpu.model().profile(shape.migProfile())
                .map(p -> MigLayout.empty(g.gpu.model()).placeable(p)).orElse(0);
          }
        }
        c = Math.min(c, room / shape.migInstances());
      }
    }
    return (int) Math.max(0, c);
  }

  boolean fitsCpuAndMemory(Resources shape) {
    return inPartition(shape) && cordonReason == null && freeMemoryMb >= shape.memoryMb()
        && freeVcores >= shape.vcores();
  }

  /** Whether the shape may be placed here at all: only on nodes of its own partition (exclusive node labels). */
  boolean inPartition(Resources shape) {
    return node.partition().equals(shape.partition());
  }

  /** Chooses whole GPUs by {@link NvlinkIslands}' rule; {@code null} if not enough are free. */
  List<GpuSlot> chooseWholeGpus(int count) {
    return chooseWholeGpus(count, false);
  }

  /** {@link #chooseWholeGpus}; for a gang's members ({@code gang}) no degraded GPU. */
  List<GpuSlot> chooseWholeGpus(int count, boolean gang) {
    int[] positions = chooseWholePositions(count, gang);
    if (positions == null) {
      return null;
    }
    List<GpuSlot> slots = new ArrayList<>(count);
    for (int position : positions) {
      slots.add(GpuSlot.whole(node.gpus().get(position).index()));
    }
    return slots;
  }

  /** {@link #chooseWholeGpus} as positions in the node's GPU list: what scoring a candidate needs, made for less. */
  int[] chooseWholePositions(int count) {
    return chooseWholePositions(count, false);
  }

  private int[] chooseWholePositions(int count, boolean gang) {
    if (count > freeWholeGpus - (gang ? freeDegraded : 0)) {
      return null;
    }
    // GPUs that cannot be shared go first: idle shared GPUs are worth more to the shares that may come. Degraded GPUs
    // go last, so that work which may use them leaves the healthy ones to gangs.
    boolean[] free = new boolean[wholeTaken.length];
    int found = 0;
    for (int pass = 0; pass < 3 && found < count; pass++) {
      found = 0;
      for (int i = 0; i < free.length; i++) {
        boolean degraded = service[i] != null;
        free[i] = wholeFree(i) && (pass >= 1 || shared[i] == null) && (!degraded || (pass == 2 && !gang));
        found += free[i] ? 1 : 0;
      }
    }
    return found < count ? null : NvlinkIslands.choose(islandIds, free, count);
  }

  /**
   * Chooses {@code count} free instances of {@code profileName}: each from the GPU whose containers hold the most
   * memory slices (fill busy GPUs first, so idle ones stay whole for large instances), lowest start first. {@code null}
   * if they are not all free.
   */
  List<GpuSlot> chooseMigInstances(String profileName, int count) {
    List<GpuSlot> slots = new ArrayList<>(count);
    for (int n = 0; n < count; n++) {
      int best = -1;
      MigPlacement bestInstance = null;
      for (int i = 0; i < mig.length; i++) {
        if (mig[i] == null) {
          continue;
        }
        MigPlacement free = freeInstanceExcluding(mig[i], node.gpus().get(i).index(), profileName, slots);
        if (free != null && (best < 0 || mig[i].usedSlices() > mig[best].usedSlices())) {
          best = i;
          bestInstance = free;
        }
      }
      if (best < 0) {
        return null;
      }
      slots.add(new GpuSlot(node.gpus().get(best).index(), bestInstance));
    }
    return slots;
  }

  /**
   * Chooses GPUs for {@code count} shares of the shape, each on the GPU it fits most tightly (the least compute left
   * after it, then the lowest index): partly used GPUs fill before idle ones, which stay whole. {@code null} if they
   * do not all fit.
   */
  List<GpuSlot> chooseShares(Resources shape, int count) {
    int[] milli = new int[sharedList.size()];
    long[] memory = new long[sharedList.size()];
    List<GpuSlot> slots = new ArrayList<>(count);
    for (int n = 0; n < count; n++) {
      int best = bestShareGpu(shape, milli, memory);
      if (best < 0) {
        return null;
      }
      SharedGpu g = sharedList.get(best);
      milli[best] += shape.shareMilli(g.gpu.model());
      memory[best] += shape.gpuMemoryMb();
      slots.add(GpuSlot.shareOf(g.gpu.index()));
    }
    return slots;
  }

  /**
   * The GPU one more share would go to, by {@link #chooseShares}' rule, with {@code extraMilli}/{@code extraMemory}
   * already planned on each shared GPU; -1 when none has room.
   */
  int bestShareGpu(Resources shape, int[] extraMilli, long[] extraMemory) {
    int best = -1;
    int bestLeft = Integer.MAX_VALUE;
    for (int i = 0; i < sharedList.size(); i++) {
      SharedGpu g = sharedList.get(i);
      int need = shape.shareMilli(g.gpu.model());
      int left = g.freeMilli() - extraMilli[i] - need;
      if (g.takenWhole || !shape.isolation().offeredBy(g.gpu.sharing()) || left < 0
          || g.freeMemoryMb() - extraMemory[i] < shape.gpuMemoryMb()) {
        continue;
      }
      if (left < bestLeft) {
        best = i;
        bestLeft = left;
      }
    }
    return best;
  }

  /** A free instance not yet chosen; chosen instances are told apart by GPU, since every GPU may have a 7g@0. */
  private static MigPlacement freeInstanceExcluding(MigGpuState gpu, int gpuIndex, String profileName,
      List<GpuSlot> chosen) {
    for (MigPlacement p : gpu.configured().placements()) {
      if (p.profile().name().equals(profileName) && gpu.allocatable(p) && !chosen.contains(new GpuSlot(gpuIndex, p))) {
        return p;
      }
    }
    return null;
  }

  /** Whether at least one free instance of the profile exists now. */
  boolean hasFreeInstance(String profileName) {
    for (MigGpuState g : mig) {
      if (g != null && g.freeInstance(profileName) != null) {
        return true;
      }
    }
    return false;
  }

  int freeInstances(String profileName) {
    int n = 0;
    for (MigGpuState g : mig) {
      if (g != null) {
        n += g.freeInstances(profileName);
      }
    }
    return n;
  }

  void take(Resources shape, List<GpuSlot> slots) {
    changes++;
    freeMemoryMb -= shape.memoryMb();
    freeVcores -= shape.vcores();
    for (GpuSlot s : slots) {
      int position = position(s.gpuIndex());
      if (s.share()) {
        SharedGpu g = requireShared(position);
        if (g.idle()) {
          countFree(position, -1);
        }
        g.shares++;
        g.usedMilli += shape.shareMilli(g.gpu.model());
        g.usedMemoryMb += shape.gpuMemoryMb();
      } else if (s.mig() == null) {
        countFree(position, -1);
        wholeTaken[position] = true;
        if (shared[position] != null) {
          shared[position].takenWhole = true;
        }
      } else {
        mig[position].take(s.mig());
        freeMigSlices -= s.mig().profile().memorySlices();
      }
    }
  }

  void give(Resources shape, List<GpuSlot> slots) {
    changes++;
    freeMemoryMb += shape.memoryMb();
    freeVcores += shape.vcores();
    for (GpuSlot s : slots) {
      int position = position(s.gpuIndex());
      if (s.share()) {
        SharedGpu g = requireShared(position);
        g.shares--;
        g.usedMilli -= shape.shareMilli(g.gpu.model());
        g.usedMemoryMb -= shape.gpuMemoryMb();
        if (g.idle()) {
          countFree(position, 1);
        }
      } else if (s.mig() == null) {
        wholeTaken[position] = false;
        if (shared[position] != null) {
          shared[position].takenWhole = false;
        }
        countFree(position, 1);
      } else {
        mig[position].give(s.mig());
        freeMigSlices += s.mig().profile().memorySlices();
      }
    }
  }

  /** The MIG-mode GPUs of this node, in GPU order (one unmodifiable list, not a copy per call). */
  List<MigGpuState> migGpus() {
    return migList;
  }

  MigGpuState migGpu(int gpuIndex) {
    MigGpuState g = mig[position(gpuIndex)];
    if (g == null) {
      throw new InvalidInputException("gpu.index", node.id() + "/gpu" + gpuIndex, "GPU is not in MIG mode");
    }
    return g;
  }

  /** The instances that exist on each MIG GPU, by GPU index (for snapshots and tests). */
  Map<Integer, MigLayout> migLayouts() {
    Map<Integer, MigLayout> out = new LinkedHashMap<>();
    for (int i = 0; i < mig.length; i++) {
      if (mig[i] != null) {
        out.put(node.gpus().get(i).index(), mig[i].configured());
      }
    }
    return out;
  }

  /** The layout each GPU being re-partitioned is going to, by GPU index. */
  Map<Integer, MigLayout> reconfiguringTo() {
    Map<Integer, MigLayout> out = new LinkedHashMap<>();
    for (int i = 0; i < mig.length; i++) {
      if (mig[i] != null && mig[i].pending() != null) {
        out.put(node.gpus().get(i).index(), mig[i].pending());
      }
    }
    return out;
  }

  NodeView view() {
    return new NodeView(node, reservation == null ? null : reservation.owner().toString(), migLayouts(),
        reconfiguringTo(), shareUse(), cordonReason, gpuService());
  }

  /**
   * Whether a hot spare may be this node: nothing runs on it, no admin or drain took it out, and every GPU is fully in
   * service (a spare with a bad GPU would fail the gang it is kept for).
   */
  boolean idleAndSound() {
    if (cordonReason != null || freeMemoryMb != node.memoryMb() || freeVcores != node.vcores()
        || freeWholeGpus != wholeGpuCount) {
      return false;
    }
    for (int i = 0; i < service.length; i++) {
      if (service[i] != null || (mig[i] != null && !mig[i].idle())) {
        return false;
      }
    }
    return true;
  }

  /** Whether the GPU at {@code position} is outside MIG, in service, and no container holds it at all. */
  boolean wholeFree(int position) {
    return mig[position] == null && !wholeTaken[position] && (shared[position] == null || shared[position].idle())
        && (service[position] == null || !service[position].out());
  }

  /** A GPU at {@code position} became free ({@code +1}) or was taken ({@code -1}) as a whole. */
  private void countFree(int position, int delta) {
    if (service[position] != null && service[position].out()) {
      return;
    }
    freeWholeGpus += delta;
    if (service[position] != null) {
      freeDegraded += delta;
    }
  }

  /**
   * Puts the GPU at {@code gpuIndex} in or out of service ({@code null}: fully in service). Out of service, it counts
   * as free nowhere: nothing new goes on it, MIG instances and shares included, until it is back; what runs on it is
   * the engine's to stop.
   */
  void setService(int gpuIndex, GpuService next) {
    int position = position(gpuIndex);
    changes++;
    boolean wasFree = wholeFree(position);
    if (wasFree) {
      countFree(position, -1);
    }
    service[position] = next;
    boolean out = next != null && next.out();
    if (shared[position] != null) {
      shared[position].out = out;
    }
    if (mig[position] != null) {
      mig[position].out = out;
    }
    if (wholeFree(position)) {
      countFree(position, 1);
    }
  }

  /** Why each GPU not fully in service is not, by GPU index. */
  Map<Integer, GpuService> gpuService() {
    Map<Integer, GpuService> out = new LinkedHashMap<>();
    for (int i = 0; i < service.length; i++) {
      if (service[i] != null) {
        out.put(node.gpus().get(i).index(), service[i]);
      }
    }
    return out;
  }

  int positionOf(int gpuIndex) {
    return position(gpuIndex);
  }

  private SharedGpu requireShared(int position) {
    SharedGpu g = shared[position];
    if (g == null) {
      throw new InvalidInputException("gpu.index", node.id() + "/gpu" + node.gpus().get(position).index(),
          "GPU is not in a sharing mode");
    }
    return g;
  }

  /** What is taken of each shared GPU, by GPU index (for snapshots and the GPU map). */
  Map<Integer, GpuShareUse> shareUse() {
    Map<Integer, GpuShareUse> out = new LinkedHashMap<>();
    for (SharedGpu g : sharedList) {
      out.put(g.gpu.index(), new GpuShareUse(g.usedMilli, g.usedMemoryMb, g.shares, g.takenWhole));
    }
    return out;
  }

  private int position(int gpuIndex) {
    List<Gpu> gpus = node.gpus();
    for (int i = 0; i < gpus.size(); i++) {
      if (gpus.get(i).index() == gpuIndex) {
        return i;
      }
    }
    throw new InvalidInputException("gpu.index", node.id() + "/gpu" + gpuIndex, "node has no such GPU");
  }
}
