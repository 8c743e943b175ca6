package io.spindle.bench;

import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.ManualClock;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuIsolation;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuResourceNames;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.placement.FirstFitSlots;
import io.spindle.core.placement.FragmentationAwareSlots;
import io.spindle.core.placement.GpuDemandMix;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.placement.MigSlotPolicy;
import io.spindle.core.placement.RandomSlots;
import io.spindle.sim.CsvTable;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;

/**
 * Static packing of the Alibaba OpenB GPU-sharing trace the way the FGD paper (Weng et al., ATC'23) measures it,
 * with Spindle's real {@link Engine} doing the placement.
 *
 * <p>Method (the paper's): sample tasks with replacement from a pod list, submit them one by one, never let one end,
 * until the GPU demand that has arrived reaches 130% of the cluster's GPUs; a task that cannot be placed when it
 * arrives is dropped. Report the GPU allocation ratio — GPUs requested by placed tasks
 * ({@code num_gpu * gpu_milli / 1000}) over the cluster's GPUs — when arrived demand first reaches 80, 90, 100, 110
 * and 130% of capacity; mean over 10 seeds.
 *
 * <p>MIG on a trace whose GPUs have none: OpenB's GPU types (G2, G3, T4, P100, V100M16, V100M32, A10) are not
 * MIG-capable. To measure Spindle's MIG packing on this trace, the harness builds a catalog with one synthetic
 * MIG model per OpenB type, each with the 8-memory-slice / 7-compute-slice geometry of A100/H100 (profiles
 * {@code 1g.1s 1g.1s+me 1g.2s 2g.2s 3g.4s 4g.4s 7g.8s}: compute slices "g", memory slices "s"). A fractional task
 * ({@code num_gpu = 1, gpu_milli < 1000}) asks for the smallest profile whose GPU-equivalent charge
 * ({@code gpuUnits / 840}) is at least {@code gpu_milli / 1000}; a whole-GPU task asks for {@code num_gpu}
 * instances of the full profile {@code 7g.8s} (one GPU-equivalent each) in one container. Every GPU is in MIG mode
 * with an empty layout at the start ({@link Mode#MIG}); {@link Mode#WHOLE} runs the same trace with no MIG at all
 * (a fractional task takes a whole GPU) as the floor MIG must beat.
 *
 * <p>Re-partitions are applied at once: the engine runs with {@code migReconfigureMillis = 0} and the harness feeds
 * every {@code ReconfigureMig} straight back as {@code MigLayoutReported} and runs another cycle, until the task is
 * placed, rejected, or the engine plans nothing more.
 *
 * <p>Run: {@code scripts/bench-openb [--key=value ...]}; see {@link Config#parse}.
 */
public final class OpenbPackingBenchmark {

  static final String QUEUE = "default";
  static final String WHOLE_PROFILE = "7g.8s";
  /** Profile names of the synthetic MIG models, in the built-in eight-slice geometry's slot order. */
  static final List<String> PROFILES = List.of("1g.1s", "1g.1s+me", "1g.2s", "2g.2s", "3g.4s", "4g.4s", "7g.8s");
  static final int[] CHECKPOINTS = {80, 90, 100, 110, 130};
  static final String PUBLISHED = "fgd-published-alloc-ratio.csv";
  static final String NODES = "openb_node_list_all_node.csv";
  static final List<String> ALL_WORKLOADS = List.of("openb_pod_list_default", "openb_pod_list_gpushare40",
      "openb_pod_list_multigpu20");
  /** Re-partition rounds per task at most (each is one cycle); the engine plans at most 16 GPUs per cycle. */
  static final int MAX_ROUNDS = 20;

  /**
   * MIG: every GPU in MIG mode. WHOLE: no sharing, a fractional task takes a whole GPU. SHARE: every GPU time-sliced,
   * a fractional task asks {@code gpu_milli} of one GPU (FGD's model), a whole-GPU task whole GPUs.
   */
  enum Mode { MIG, WHOLE, SHARE }

  record Variant(String name, Mode mode, Supplier<MigSlotPolicy> policy) {}

  /**
   * Spindle's slot policy and the whole-GPU floor; with {@code allPolicies} also the first-fit and random slot
   * baselines. (One task at a time gives the slot policy nothing to choose between — every re-partition serves one
   * profile — so the baselines give the same numbers; they are off by default to keep the run short.)
   */
  static List<Variant> variants(boolean allPolicies) {
    List<Variant> out = new ArrayList<>();
    out.add(new Variant("Spindle shared GPUs (gpu-milli)", Mode.SHARE, FragmentationAwareSlots::new));
    out.add(new Variant("Spindle MIG, FragmentationAwareSlots", Mode.MIG, FragmentationAwareSlots::new));
    if (allPolicies) {
      out.add(new Variant("Spindle MIG, FirstFitSlots", Mode.MIG, FirstFitSlots::new));
      out.add(new Variant("Spindle MIG, RandomSlots", Mode.MIG, null)); // seeded per run
    }
    out.add(new Variant("Spindle whole GPUs only (no MIG)", Mode.WHOLE, FragmentationAwareSlots::new));
    return out;
  }

  record Config(Path shared, List<String> workloads, int seeds, long firstSeed, int threads, boolean allPolicies,
      boolean shareOnly, int shareCandidates) {

    /**
     * Keys: {@code --shared=DIR} (default: {@code ../shared} of the repository root, found from the working
     * directory upwards), {@code --workloads=openb_pod_list_default} (comma-separated pod lists, or {@code all} for
     * default, gpushare40 and multigpu20),
     * {@code --seeds=10}, {@code --first-seed=1}, {@code --threads=N} (default: the CPUs),
     * {@code --policies=spindle|all|share} (all: also the first-fit and random slot baselines; share: only the
     * shared-GPU row), {@code --share-candidates=N} (the engine's
     * {@code yarn.scheduler.spindle.placement.share-candidates}; default its default).
     */
    static Config parse(String[] args) {
      Path shared = null;
      List<String> workloads = List.of("openb_pod_list_default");
      int seeds = 10;
      long firstSeed = 1;
      int threads = Runtime.getRuntime().availableProcessors();
      boolean allPolicies = false;
      boolean shareOnly = false;
      int shareCandidates = EngineSettings.DEFAULT_SHARE_CANDIDATES;
      for (String arg : args) {
        int eq = arg.indexOf('=');
        if (!arg.startsWith("--") || eq < 0) {
          throw new IllegalArgumentException("arguments are --key=value; got '" + arg + "'");
        }
        String v = arg.substring(eq + 1);
        switch (arg.substring(2, eq)) {
          case "shared" -> shared = Paths.get(v);
          case "workloads" -> workloads = v.equals("all") ? ALL_WORKLOADS : List.of(v.split(","));
          case "seeds" -> seeds = Integer.parseInt(v);
          case "first-seed" -> firstSeed = Long.parseLong(v);
          case "threads" -> threads = Integer.parseInt(v);
          case "share-candidates" -> shareCandidates = Integer.parseInt(v);
          case "policies" -> {
            if (!v.equals("spindle") && !v.equals("all") && !v.equals("share")) {
              throw new IllegalArgumentException("--policies is spindle, all or share, not " + v);
            }
            allPolicies = v.equals("all");
            shareOnly = v.equals("share");
          }
          default -> throw new IllegalArgumentException("unknown key " + arg.substring(0, eq));
        }
      }
      if (shared == null) {
        shared = findShared(Paths.get("").toAbsolutePath());
      }
      if (seeds <= 0 || threads <= 0 || shareCandidates <= 0) {
        throw new IllegalArgumentException("--seeds, --threads and --share-candidates must be positive");
      }
      return new Config(shared, workloads, seeds, firstSeed, threads, allPolicies, shareOnly, shareCandidates);
    }
  }

  /**
   * The {@code shared/} folder beside the repository: from {@code start} upwards, the first folder that holds a
   * {@code pom.xml} and whose parent holds {@code shared/traces/openb}.
   */
  public static Path findShared(Path start) {
    for (Path dir = start; dir != null; dir = dir.getParent()) {
      Path parent = dir.getParent();
      if (parent != null && Files.exists(dir.resolve("pom.xml"))
          && Files.isDirectory(parent.resolve("shared").resolve("traces").resolve("openb"))) {
        return parent.resolve("shared");
      }
    }
    throw new IllegalArgumentException("no ../shared/traces/openb beside a repository root above " + start
        + "; pass --shared=DIR");
  }

  // ------------------------------------------------------------------ trace

  /** One row of the node list. */
  record OpenbNode(String name, long cpuMilli, long memoryMib, int gpus, String model) {}

  /** One row of a pod list; {@code gpuSpec} lists allowed GPU types ({@code |}-separated), empty = any. */
  record Task(String name, long cpuMilli, long memoryMib, int numGpu, int gpuMilli, String gpuSpec) {

    /** GPU demand in thousandths of a GPU, as FGD counts it. */
    long gpuMilliTotal() {
      return (long) numGpu * gpuMilli;
    }

    boolean cpuOnly() {
      return numGpu == 0 || gpuMilli == 0;
    }

    boolean fractional() {
      return !cpuOnly() && gpuMilli < 1000;
    }
  }

  static List<OpenbNode> readNodes(CsvTable t) {
    List<OpenbNode> out = new ArrayList<>();
    for (int i = 0; i < t.size(); i++) {
      int gpus = (int) t.getLong(i, "gpu");
      String model = t.get(i, "model");
      if (gpus > 0 && model.isEmpty()) {
        throw new IllegalArgumentException(t.source() + " row " + (i + 1) + ": " + gpus + " GPUs without a model");
      }
      out.add(new OpenbNode(t.get(i, "sn"), t.getLong(i, "cpu_milli"), t.getLong(i, "memory_mib"), gpus,
          gpus == 0 ? null : model));
    }
    return out;
  }

  static List<Task> readTasks(CsvTable t) {
    boolean hasSpec = t.has("gpu_spec");
    List<Task> out = new ArrayList<>();
    for (int i = 0; i < t.size(); i++) {
      int milli = (int) t.getLong(i, "gpu_milli");
      int num = (int) t.getLong(i, "num_gpu");
      if (milli > 1000 || milli < 0 || num < 0) {
        throw new IllegalArgumentException(t.source() + " row " + (i + 1) + ": num_gpu " + num + ", gpu_milli "
            + milli + " out of range");
      }
      out.add(new Task(t.get(i, "name"), t.getLong(i, "cpu_milli"), t.getLong(i, "memory_mib"), num, milli,
          hasSpec ? t.get(i, "gpu_spec") : ""));
    }
    return out;
  }

  /** The paper's published means: workload -> policy -> ratio (%) at each checkpoint, columns by name. */
  static Map<String, Map<String, double[]>> readPublished(CsvTable t) {
    Map<String, Map<String, double[]>> out = new LinkedHashMap<>();
    for (int i = 0; i < t.size(); i++) {
      double[] v = new double[CHECKPOINTS.length];
      for (int k = 0; k < CHECKPOINTS.length; k++) {
        v[k] = t.getDouble(i, "alloc_pct_at_" + CHECKPOINTS[k]);
      }
      out.computeIfAbsent(t.get(i, "workload"), w -> new LinkedHashMap<>()).put(t.get(i, "policy"), v);
    }
    return out;
  }

  // ------------------------------------------------------------------ MIG mapping

  /** One synthetic 8-slice MIG model per OpenB GPU type, in the catalog text format. */
  static String catalogText(Set<String> types) {
    StringBuilder s = new StringBuilder();
    s.append("# Synthetic: OpenB GPU types are not MIG-capable; each gets the A100/H100 eight-slice geometry.\n");
    s.append("geometry eight-slice 8 7\n");
    s.append("slot eight-slice 19 1 1 0,1,2,3,4,5,6 7\n");
    s.append("slot eight-slice 20 1 1 0,1,2,3,4,5,6 1\n");
    s.append("slot eight-slice 15 1 2 0,2,4,6 4\n");
    s.append("slot eight-slice 14 2 2 0,2,4 3\n");
    s.append("slot eight-slice 9 3 4 0,4 2\n");
    s.append("slot eight-slice 5 4 4 0 1\n");
    s.append("slot eight-slice 0 7 8 0 1\n");
    for (String type : types) {
      // Memory size is informational only (placement never reads it); 0 where OpenB does not disclose it.
      s.append("model ").append(type).append(" eight-slice ").append(memoryGb(type)).append(' ')
          .append(String.join(" ", PROFILES)).append('\n');
    }
    return s.toString();
  }

  private static int memoryGb(String type) {
    return switch (type) {
      case "T4", "P100", "V100M16" -> 16;
      case "V100M32" -> 32;
      case "A10" -> 24;
      default -> 0; // G2, G3: undisclosed internal codes
    };
  }

  public static GpuModelCatalog catalog(Set<String> types, boolean mig) {
    try {
      if (mig) {
        return GpuModelCatalog.parse(new StringReader(catalogText(types)));
      }
      List<GpuModel> models = new ArrayList<>();
      for (String type : types) {
        models.add(new GpuModel(type, memoryGb(type), 0, 0, List.of(), List.of()));
      }
      return GpuModelCatalog.of(models);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The smallest profile (by GPU-equivalent charge, media-extension variants excluded) whose charge
   * {@code gpuUnits / 840} is at least {@code gpuMilli / 1000}, compared exactly in integers.
   */
  public static MigProfile profileFor(int gpuMilli, GpuModel model) {
    MigProfile best = null;
    for (MigProfile p : model.profiles()) {
      if (p.mediaExtension() || p.gpuUnits() * 1000 < (long) gpuMilli * ResourceVector.GPU_UNITS) {
        continue;
      }
      if (best == null || p.gpuUnits() < best.gpuUnits()) {
        best = p;
      }
    }
    if (best == null) {
      throw new IllegalArgumentException("no profile of " + model.name() + " holds " + gpuMilli + " milli-GPU");
    }
    return best;
  }

  /** What the task asks the engine for. CPU: 1 vcore = 1 milli-CPU (exact); memory: MiB as MB. */
  static Resources shape(Task t, Mode mode, GpuModel anyModel) {
    Resources base = Resources.of(t.memoryMib(), Math.toIntExact(t.cpuMilli()));
    if (t.cpuOnly()) {
      return base;
    }
    Resources r;
    if (mode == Mode.WHOLE || (mode == Mode.SHARE && !t.fractional())) {
      r = base.withGpus(t.numGpu());
    } else if (mode == Mode.SHARE) {
      r = base.withShare(t.gpuMilli(), 0, GpuIsolation.ANY);
    } else if (t.fractional()) {
      r = base.withMig(profileFor(t.gpuMilli(), anyModel).name(), t.numGpu());
    } else {
      r = base.withMig(WHOLE_PROFILE, t.numGpu());
    }
    // gpu_spec lists the acceptable types, '|'-separated: a model set, a hard constraint as in the trace.
    return t.gpuSpec().isBlank() ? r : r.withGpuModel(t.gpuSpec());
  }

  // ------------------------------------------------------------------ packing

  /** What one seeded run measured. */
  record RunResult(double[] allocPct, double[] chargedPct, long tasks, long placed, long rejected, long dropped,
      long droppedFeasible, long droppedCounted, long roundsExhausted, Map<String, long[]> byClass,
      long repartitions, long multiTypeSpecs) {}

  /** Task classes for the failure breakdown: arrived, placed, dropped, dropped though a node could hold it. */
  static String taskClass(Task t) {
    if (t.cpuOnly()) {
      return "CPU only";
    }
    if (t.fractional()) {
      return "fractional";
    }
    return t.numGpu() == 1 ? "1 GPU" : "multi-GPU";
  }

  static final List<String> CLASSES = List.of("CPU only", "fractional", "1 GPU", "multi-GPU");

  /** The NodeManager's side of a re-partition: applied at once and reported; the mirror follows. */
  private static EngineEvent applyReconfigure(Decision.ReconfigureMig rc, Map<NodeId, OpenbNodeMirror> mirrors) {
    OpenbNodeMirror m = mirrors.get(rc.nodeId());
    MigLayout before = m.layouts[rc.gpuIndex()];
    if (rc.layout().equals(before)) {
      throw new IllegalStateException("re-partition to the layout the GPU has: " + rc);
    }
    for (MigPlacement inst : before.placements()) {
      if ((m.heldMask[rc.gpuIndex()] & inst.sliceMask()) != 0 && !rc.layout().placements().contains(inst)) {
        throw new IllegalStateException("re-partition destroys " + inst + ", which a container holds: " + rc);
      }
    }
    m.layouts[rc.gpuIndex()] = rc.layout();
    return new EngineEvent.MigLayoutReported(rc.nodeId(), rc.gpuIndex(), rc.layout());
  }

  static RunResult run(List<OpenbNode> nodes, List<Task> tasks, Variant variant, long seed) {
    return run(nodes, tasks, variant, seed, EngineSettings.DEFAULT_SHARE_CANDIDATES);
  }

  static RunResult run(List<OpenbNode> nodes, List<Task> tasks, Variant variant, long seed, int shareCandidates) {
    Set<String> types = new LinkedHashSet<>();
    for (OpenbNode n : nodes) {
      if (n.model() != null) {
        types.add(n.model());
      }
    }
    boolean mig = variant.mode() == Mode.MIG;
    boolean share = variant.mode() == Mode.SHARE;
    GpuModelCatalog catalog = catalog(types, mig);
    ManualClock clock = new ManualClock(0);
    EngineSettings settings = EngineSettings.defaults()
        .withMigReconfigureMillis(0).withRegistrationSettleMillis(0) // Nodes known up front.
        .withShareCandidates(shareCandidates);
    Engine engine = new Engine(catalog, MigPackingBenchmark.queues(), Topology.singleRack(), clock, settings,
        variant.policy().get());

    List<EngineEvent> setup = new ArrayList<>();
    Map<NodeId, OpenbNodeMirror> mirrors = new LinkedHashMap<>();
    long totalGpus = 0;
    for (OpenbNode n : nodes) {
      GpuModel model = n.model() == null ? null : catalog.require("model", n.model());
      List<Gpu> gpus = new ArrayList<>();
      for (int g = 0; g < n.gpus(); g++) {
        gpus.add(share ? Gpu.shared(g, model, 0, GpuSharing.TIME_SLICE) : new Gpu(g, model, 0, mig));
      }
      totalGpus += n.gpus();
      setup.add(new EngineEvent.NodeAdded(new Node(NodeId.of(n.name()), Topology.DEFAULT_RACK, n.memoryMib(),
          Math.toIntExact(n.cpuMilli()), gpus)));
      mirrors.put(NodeId.of(n.name()), new OpenbNodeMirror(n, model, variant.mode()));
    }
    engine.cycle(setup);
    GpuModel anyModel = catalog.models().get(0);

    long capacityMilli = totalGpus * 1000;
    Random rnd = new Random(seed);
    long arrivedMilli = 0;
    long allocMilli = 0;
    long chargedUnits = 0;
    double[] allocPct = new double[CHECKPOINTS.length];
    double[] chargedPct = new double[CHECKPOINTS.length];
    int nextCheckpoint = 0;
    long count = 0;
    long placed = 0;
    long rejected = 0;
    long dropped = 0;
    long droppedFeasible = 0;
    long droppedCounted = 0;
    long roundsExhausted = 0;
    long repartitions = 0;
    long multiTypeSpecs = 0;
    Map<String, long[]> byClass = new LinkedHashMap<>();
    for (String c : CLASSES) {
      byClass.put(c, new long[4]);
    }
    while (nextCheckpoint < CHECKPOINTS.length) {
      Task t = tasks.get(rnd.nextInt(tasks.size()));
      if (t.gpuSpec().contains("|")) {
        multiTypeSpecs++;
      }
      Resources shape = shape(t, variant.mode(), anyModel);
      AppId app = AppId.of("t" + count++);
      long[] cls = byClass.get(taskClass(t));
      cls[0]++;
      clock.advance(1_000);
      List<EngineEvent> events = List.of(new EngineEvent.AppSubmitted(app, QUEUE, "user", 0),
          new EngineEvent.Demand(app, "task", shape, 1));
      Decision.Allocate allocation = null;
      boolean reject = false;
      List<EngineEvent> reports = List.of();
      for (int round = 0; ; round++) {
        CycleResult r = engine.cycle(events);
        reports = new ArrayList<>();
        for (Decision d : r.decisions()) {
          if (d instanceof Decision.Allocate a) {
            if (!a.appId().equals(app) || allocation != null) {
              throw new IllegalStateException("unexpected allocation " + a);
            }
            allocation = a;
          } else if (d instanceof Decision.Reject) {
            reject = true;
          } else if (d instanceof Decision.ReconfigureMig rc) {
            reports.add(applyReconfigure(rc, mirrors));
            repartitions++;
          }
        }
        if (allocation != null || reject || reports.isEmpty()) {
          break;
        }
        if (round == MAX_ROUNDS) {
          roundsExhausted++; // the engine kept re-partitioning without placing the task: give up on it
          break;
        }
        events = reports;
      }
      // Every re-partition the engine asked for is reported, also those of a round the task did not wait for, so no
      // GPU is left out of service; the same goes for the cycle that cancels a dropped task.
      List<EngineEvent> closing = new ArrayList<>(reports);
      if (allocation == null) {
        closing.add(new EngineEvent.Demand(app, "task", shape, 0));
        closing.add(new EngineEvent.AppFinished(app));
      }
      while (!closing.isEmpty()) {
        CycleResult r = engine.cycle(closing);
        closing = new ArrayList<>();
        for (Decision d : r.decisions()) {
          if (d instanceof Decision.ReconfigureMig rc) {
            closing.add(applyReconfigure(rc, mirrors));
            repartitions++;
          } else if (d instanceof Decision.Allocate a) {
            throw new IllegalStateException("allocation after the task was settled: " + a);
          }
        }
      }
      if (allocation != null) {
        placed++;
        cls[1]++;
        allocMilli += t.gpuMilliTotal();
        chargedUnits += allocation.charge().gpuUnits();
        OpenbNodeMirror m = mirrors.get(allocation.nodeId());
        m.freeCpu -= shape.vcores();
        m.freeMem -= shape.memoryMb();
        for (GpuSlot s : allocation.gpus()) {
          if (s.share()) {
            if (m.freeMilli[s.gpuIndex()] == 1000) {
              m.freeWhole--;
            }
            m.freeMilli[s.gpuIndex()] -= shape.gpuMilli();
            if (m.freeMilli[s.gpuIndex()] < 0) {
              throw new IllegalStateException("allocation beyond a GPU's compute: " + allocation);
            }
          } else if (s.mig() == null) {
            if (m.freeMilli[s.gpuIndex()] != 1000) {
              throw new IllegalStateException("whole GPU given that holds shares: " + allocation);
            }
            m.freeMilli[s.gpuIndex()] = 0;
            m.freeWhole--;
          } else {
            if ((m.heldMask[s.gpuIndex()] & s.mig().sliceMask()) != 0
                || !m.layouts[s.gpuIndex()].placements().contains(s.mig())) {
              throw new IllegalStateException("allocation on an instance the harness sees taken or absent: "
                  + allocation);
            }
            m.heldMask[s.gpuIndex()] |= s.mig().sliceMask();
          }
        }
      } else {
        if (reject) {
          rejected++;
        } else {
          dropped++;
        }
        cls[2]++;
        // Dropped, as in the paper: a task still pending was cancelled above (count 0), so it takes no later
        // capacity.
        if (!reject) {
          boolean feasible = false;
          for (OpenbNodeMirror m : mirrors.values()) {
            GpuModel model = m.node.model() == null ? null : catalog.require("model", m.node.model());
            if (m.couldHold(shape, model)) {
              feasible = true;
              break;
            }
          }
          if (feasible) {
            droppedFeasible++;
            cls[3]++;
          }
          // Free instances that exist somewhere but not where this task can use them (nodes without its CPU or
          // memory, or spread over several nodes for a multi-instance container): what fooled an engine counting
          // instances cluster-wide.
          if (shape.wantsMig() && engine.cluster().freeMigInstances(shape.migProfile()) >= shape.migInstances()) {
            droppedCounted++;
          }
        }
      }
      arrivedMilli += t.gpuMilliTotal();
      while (nextCheckpoint < CHECKPOINTS.length && arrivedMilli * 100 >= CHECKPOINTS[nextCheckpoint] * capacityMilli) {
        allocPct[nextCheckpoint] = 100.0 * allocMilli / capacityMilli;
        chargedPct[nextCheckpoint] = 100.0 * chargedUnits / (totalGpus * ResourceVector.GPU_UNITS);
        nextCheckpoint++;
      }
    }
    return new RunResult(allocPct, chargedPct, count, placed, rejected, dropped, droppedFeasible, droppedCounted,
        roundsExhausted, byClass, repartitions, multiTypeSpecs);
  }

  // ------------------------------------------------------------------ main and report

  public static void main(String[] args) throws Exception {
    Config c = Config.parse(args);
    Path openb = c.shared().resolve("traces").resolve("openb");
    long t0 = System.nanoTime();
    List<OpenbNode> nodes = readNodes(CsvTable.read(openb.resolve(NODES)));
    Map<String, Map<String, double[]>> published = readPublished(CsvTable.read(openb.resolve(PUBLISHED)));
    ExecutorService pool = Executors.newFixedThreadPool(c.threads(), r -> {
      Thread t = new Thread(r);
      t.setDaemon(true);
      return t;
    });
    StringBuilder out = new StringBuilder();
    out.append(header(c, nodes));
    // Every run is submitted at once (the MIG runs are much slower than the whole-GPU ones), then reported in order.
    List<Variant> variants = c.shareOnly() ? variants(false).subList(0, 1) : variants(c.allPolicies());
    Map<String, List<Task>> tasksOf = new LinkedHashMap<>();
    Map<String, List<List<Future<RunResult>>>> futuresOf = new LinkedHashMap<>();
    for (String workload : c.workloads()) {
      // A bundled pod list by name, or any file (FILE.csv or FILE) with the same columns.
      Path list = openb.resolve(workload.endsWith(".csv") ? workload : workload + ".csv");
      List<Task> tasks = readTasks(CsvTable.read(list));
      tasksOf.put(workload, tasks);
      List<List<Future<RunResult>>> futures = new ArrayList<>();
      for (Variant v : variants) {
        List<Future<RunResult>> perSeed = new ArrayList<>();
        for (int s = 0; s < c.seeds(); s++) {
          long seed = c.firstSeed() + s;
          Variant seeded = v.policy() == null ? new Variant(v.name(), v.mode(), () -> new RandomSlots(seed)) : v;
          perSeed.add(pool.submit(() -> {
            long st = System.nanoTime();
            RunResult r = run(nodes, tasks, seeded, seed, c.shareCandidates());
            System.err.printf(Locale.ROOT, "[timing] %s, %s, seed %d: %.1f s%n", workload, seeded.name(), seed,
                (System.nanoTime() - st) / 1e9);
            return r;
          }));
        }
        futures.add(perSeed);
      }
      futuresOf.put(workload, futures);
    }
    for (String workload : c.workloads()) {
      List<List<RunResult>> results = new ArrayList<>();
      for (List<Future<RunResult>> perSeed : futuresOf.get(workload)) {
        List<RunResult> rs = new ArrayList<>();
        for (Future<RunResult> f : perSeed) {
          rs.add(f.get());
        }
        results.add(rs);
      }
      out.append(report(workload, tasksOf.get(workload), variants, results,
          published.getOrDefault(workload, Map.of()), c));
      System.out.print(out);
      out.setLength(0);
      System.err.printf(Locale.ROOT, "[timing] %s: %.1f s wall so far%n", workload, (System.nanoTime() - t0) / 1e9);
    }
    pool.shutdown();
  }

  static String header(Config c, List<OpenbNode> nodes) {
    Map<String, long[]> byType = new LinkedHashMap<>();
    long gpus = 0;
    long cpuOnly = 0;
    for (OpenbNode n : nodes) {
      if (n.model() == null) {
        cpuOnly++;
      } else {
        long[] v = byType.computeIfAbsent(n.model(), k -> new long[2]);
        v[0]++;
        v[1] += n.gpus();
        gpus += n.gpus();
      }
    }
    StringBuilder s = new StringBuilder();
    s.append("Spindle on the OpenB trace (FGD method: tasks sampled with replacement, placed one by one, no departures,"
        + " until arrived GPU demand reaches 130% of capacity; unplaceable tasks dropped)\n");
    s.append(String.format(Locale.ROOT, "cluster: %s: %d nodes, %d GPUs (", NODES, nodes.size(), gpus));
    List<String> parts = new ArrayList<>();
    byType.forEach((k, v) -> parts.add(k + " " + v[1] + " on " + v[0] + " nodes"));
    s.append(String.join(", ", parts)).append(String.format(Locale.ROOT, "), %d CPU-only nodes%n", cpuOnly));
    s.append("  vcores = cpu_milli (1 vcore = 1 milli-CPU, exact); memory MB = memory_mib\n");
    s.append("SYNTHETIC MIG: OpenB's GPU types are not MIG-capable. Each type is given the A100/H100 MIG geometry (8 "
        + "memory / 7 compute slices; profiles " + String.join(" ", PROFILES) + ") so that Spindle's MIG packing can "
        + "run on this trace.\n");
    s.append("  'Spindle MIG' rows: every GPU in MIG mode, empty layout at start; whole-GPU tasks ask num_gpu x "
        + WHOLE_PROFILE + " (1 GPU-equivalent each) in one container; fractional tasks ask the smallest profile whose"
        + " charge >= gpu_milli/1000:\n");
    GpuModel m = catalog(Set.of("X"), true).models().get(0);
    int lo = 1;
    for (MigProfile p : m.profiles().stream().filter(p -> !p.mediaExtension())
        .sorted(Comparator.comparingLong(MigProfile::gpuUnits)).toList()) {
      int hi = (int) Math.min(999, p.gpuUnits() * 1000 / ResourceVector.GPU_UNITS);
      if (hi >= lo) {
        s.append(String.format(Locale.ROOT, "    gpu_milli %3d..%3d -> %-6s (charge %d/840 = %.4f GPU; %d compute, "
            + "%d memory slices)%n", lo, hi, p.name(), p.gpuUnits(), p.gpuUnits() / 840.0, p.computeSlices(),
            p.memorySlices()));
        lo = hi + 1;
      }
    }
    s.append("  'whole GPUs only' row: no MIG; a fractional task takes one whole GPU.\n");
    s.append("  'shared GPUs' row: no MIG; every GPU time-sliced; a fractional task asks gpu_milli of one GPU "
        + GpuResourceNames.GPU_MILLI + " (FGD's model), a whole-GPU task num_gpu whole GPUs; placement sees no "
        + "durations, only the demand mix of the last " + GpuDemandMix.DEFAULT_WINDOW + " tasks asked; "
        + c.shareCandidates() + " candidates compared per task.\n");
    s.append("  re-partitions are applied at once (migReconfigureMillis = 0, layout reported immediately).\n");
    s.append("  allocation ratio = GPUs requested by placed tasks (num_gpu * gpu_milli / 1000) / cluster GPUs, as FGD;"
        + " 'charged' = GPU-equivalents the engine charged placed tasks (MIG rounding up included) / cluster GPUs.\n");
    s.append(String.format(Locale.ROOT, "  seeds %d..%d (mean over %d); checkpoint = first task at which arrived "
        + "demand >= x%% of capacity%n%n", c.firstSeed(), c.firstSeed() + c.seeds() - 1, c.seeds()));
    return s.toString();
  }

  static String report(String workload, List<Task> tasks, List<Variant> variants, List<List<RunResult>> results,
      Map<String, double[]> published, Config c) {
    StringBuilder s = new StringBuilder();
    long frac = tasks.stream().filter(Task::fractional).count();
    long cpu = tasks.stream().filter(Task::cpuOnly).count();
    long milli = tasks.stream().mapToLong(Task::gpuMilliTotal).sum();
    s.append(String.format(Locale.ROOT, "== %s: %,d tasks (%,d CPU only, %,d fractional, %,d whole-GPU), mean %.3f "
        + "GPU per task%n", workload, tasks.size(), cpu, frac, tasks.size() - cpu - frac,
        milli / 1000.0 / tasks.size()));
    String h = String.format(Locale.ROOT, "| %-38s | %7s | %7s | %7s | %7s | %7s |%n", "GPU allocation ratio (%) at "
        + "arrived", "80%", "90%", "100%", "110%", "130%");
    s.append(h);
    s.append(h.replaceAll("[^|\n]", "-"));
    List<double[]> charged = new ArrayList<>();
    for (int v = 0; v < variants.size(); v++) {
      double[] mean = new double[CHECKPOINTS.length];
      double[] meanCharged = new double[CHECKPOINTS.length];
      for (RunResult r : results.get(v)) {
        for (int k = 0; k < CHECKPOINTS.length; k++) {
          mean[k] += r.allocPct()[k] / results.get(v).size();
          meanCharged[k] += r.chargedPct()[k] / results.get(v).size();
        }
      }
      charged.add(meanCharged);
      s.append(row(variants.get(v).name(), mean));
    }
    for (Map.Entry<String, double[]> e : published.entrySet()) {
      s.append(row("FGD paper: " + e.getKey(), e.getValue()));
    }
    s.append("\n");
    String h2 = String.format(Locale.ROOT, "| %-38s | %7s | %7s | %7s | %7s | %7s |%n", "charged GPU-eq (%) at arrived",
        "80%", "90%", "100%", "110%", "130%");
    s.append(h2);
    s.append(h2.replaceAll("[^|\n]", "-"));
    for (int v = 0; v < variants.size(); v++) {
      s.append(row(variants.get(v).name(), charged.get(v)));
    }
    s.append("\nper run, mean over seeds (to 130% arrived): tasks; placed; rejected by the engine as impossible; dropped"
        + " (left pending, then cancelled); of the dropped, 'feasible' = some node had the CPU and memory and could hold"
        + " the instances after re-partitioning its GPUs without touching an instance in use, 'counted' = at least as"
        + " many free instances of the profile as the task needs existed somewhere in the cluster (an engine counting"
        + " cluster-wide would plan no re-partition), 'looping' = the engine was still re-partitioning"
        + " after " + MAX_ROUNDS + " rounds; re-partitions\n");
    for (int v = 0; v < variants.size(); v++) {
      List<RunResult> rs = results.get(v);
      double n = rs.size();
      s.append(String.format(Locale.ROOT, "  %-38s tasks %8.1f  placed %8.1f  rejected %6.1f  dropped %7.1f  "
          + "(feasible %6.1f, counted %6.1f, looping %4.1f)  re-partitions %7.1f%n", variants.get(v).name(),
          rs.stream().mapToLong(RunResult::tasks).sum() / n, rs.stream().mapToLong(RunResult::placed).sum() / n,
          rs.stream().mapToLong(RunResult::rejected).sum() / n, rs.stream().mapToLong(RunResult::dropped).sum() / n,
          rs.stream().mapToLong(RunResult::droppedFeasible).sum() / n,
          rs.stream().mapToLong(RunResult::droppedCounted).sum() / n,
          rs.stream().mapToLong(RunResult::roundsExhausted).sum() / n,
          rs.stream().mapToLong(RunResult::repartitions).sum() / n));
      List<String> parts = new ArrayList<>();
      for (String cls : CLASSES) {
        double[] a = new double[4];
        for (RunResult r : rs) {
          for (int i = 0; i < 4; i++) {
            a[i] += r.byClass().get(cls)[i] / n;
          }
        }
        parts.add(String.format(Locale.ROOT, "%s %.1f/%.1f dropped (%.1f feasible)", cls, a[2], a[0], a[3]));
      }
      s.append("      ").append(String.join("; ", parts)).append('\n');
      long multi = rs.stream().mapToLong(RunResult::multiTypeSpecs).sum();
      if (multi > 0) {
        s.append(String.format(Locale.ROOT, "      %d sampled tasks allowed several GPU types: placed without a type "
            + "constraint%n", multi));
      }
    }
    s.append('\n');
    return s.toString();
  }

  private static String row(String name, double[] v) {
    StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "| %-38s |", name));
    for (double x : v) {
      s.append(String.format(Locale.ROOT, " %7.2f |", x));
    }
    return s.append('\n').toString();
  }
}
