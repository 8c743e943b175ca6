package io.spindle.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.spindle.bench.OpenbPackingBenchmark;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueConfigParser;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** Builds a {@link ClusterSpec}: from a JSON cluster file, from flags, from Philly's VC sizes, from OpenB's node list. */
public final class ClusterSpecs {

  /** The GPU model of clusters that do not name one (Philly and HeliosArtifact model no GPU types). */
  public static final String PLAIN_GPU = "GPU";

  private ClusterSpecs() {}

  /**
   * A cluster of {@code nodes} identical nodes on one rack, with the queues given as {@code name:percent,...} (each
   * a leaf under root, maximum-capacity 100, no user limit) or one queue {@code default}.
   */
  public static ClusterSpec uniform(int nodes, int gpusPerNode, String model, int vcores, long memoryMb,
      String queues) {
    GpuModelCatalog catalog = catalogWith(Set.of(model));
    GpuModel m = gpusPerNode == 0 ? null : catalog.require("model", model);
    List<Node> list = new ArrayList<>();
    int width = Integer.toString(Math.max(1, nodes - 1)).length();
    for (int i = 0; i < nodes; i++) {
      list.add(node(String.format(Locale.ROOT, "n%0" + width + "d", i), Topology.DEFAULT_RACK, memoryMb, vcores, m,
          gpusPerNode, gpusPerNode, null));
    }
    Map<String, String> conf = new LinkedHashMap<>();
    if (queues == null || queues.isBlank()) {
      conf.put(key("root.queues"), "default");
      conf.put(key("root.default.capacity"), "100");
      conf.put(key("root.default.user-limit-factor"), "-1");
    } else {
      List<String> names = new ArrayList<>();
      for (String part : queues.split(",")) {
        String[] nv = part.split(":");
        if (nv.length != 2) {
          throw new IllegalArgumentException("--queues is name:percent,...; got '" + part + "'");
        }
        names.add(nv[0].strip());
        conf.put(key("root." + nv[0].strip() + ".capacity"), nv[1].strip());
        conf.put(key("root." + nv[0].strip() + ".user-limit-factor"), "-1");
      }
      conf.put(key("root.queues"), String.join(",", names));
    }
    return new ClusterSpec("uniform " + nodes + " x " + gpusPerNode + " " + model, catalog, Topology.singleRack(),
        list, conf, Map.of());
  }

  /**
   * The HeliosArtifact layout of Philly: one group of 8-GPU nodes per virtual cluster (columns {@code vc} and
   * {@code node num} of {@code vc-sizes.csv}), each VC a leaf queue guaranteed exactly its own GPUs
   * ({@code [yarn.io/gpu=N]}), maximum-capacity 100 (policies that forbid borrowing lower it), no user limit (the
   * trace has one user per VC). Every node belongs to its VC's partition, for policies that isolate VCs.
   *
   * @param scale node-count factor (0.5: the reference's half-size sensitivity case); each VC keeps at least one
   *     node
   */
  public static ClusterSpec fromVcSizes(Path csv, int gpusPerNode, double scale) {
    CsvTable t = CsvTable.read(csv);
    GpuModelCatalog catalog = catalogWith(Set.of(PLAIN_GPU));
    GpuModel m = catalog.require("model", PLAIN_GPU);
    List<Node> nodes = new ArrayList<>();
    Map<String, String> partitions = new LinkedHashMap<>();
    Map<String, String> conf = new LinkedHashMap<>();
    List<String> vcs = new ArrayList<>();
    for (int i = 0; i < t.size(); i++) {
      String vc = t.get(i, "vc");
      long count = Math.max(1, Math.round(t.getLong(i, "node num") * scale));
      vcs.add(vc);
      for (int k = 0; k < count; k++) {
        String id = String.format(Locale.ROOT, "%s-%03d", vc, k);
        nodes.add(node(id, Topology.DEFAULT_RACK, 0, 0, m, gpusPerNode, gpusPerNode, null));
        partitions.put(id, vc);
      }
      conf.put(key("root." + vc + ".capacity"), "[yarn.io/gpu=" + count * gpusPerNode + "]");
      conf.put(key("root." + vc + ".user-limit-factor"), "-1");
    }
    conf.put(key("root.queues"), String.join(",", vcs));
    String label = csv.getFileName() + (scale == 1 ? "" : " x " + scale);
    return new ClusterSpec(label + ": " + nodes.size() + " nodes x " + gpusPerNode + " GPUs", catalog,
        Topology.singleRack(), nodes, conf, partitions);
  }

  /**
   * OpenB's node list ({@code sn, cpu_milli, memory_mib, gpu, model}; one vcore per milli-CPU, MiB as MB) with one
   * queue {@code default}. With {@code mig}, every GPU is in MIG mode with an empty layout, on the synthetic
   * eight-slice models of the OpenB packing benchmark (OpenB's GPU types have no MIG).
   */
  public static ClusterSpec fromOpenbNodes(Path csv, boolean mig) {
    CsvTable t = CsvTable.read(csv);
    Set<String> types = new LinkedHashSet<>();
    for (int i = 0; i < t.size(); i++) {
      if (t.getLong(i, "gpu") > 0) {
        types.add(t.get(i, "model"));
      }
    }
    GpuModelCatalog catalog = OpenbPackingBenchmark.catalog(types, mig);
    List<Node> nodes = new ArrayList<>();
    for (int i = 0; i < t.size(); i++) {
      int gpus = (int) t.getLong(i, "gpu");
      GpuModel model = gpus == 0 ? null : catalog.require("model", t.get(i, "model"));
      List<Gpu> list = new ArrayList<>();
      for (int g = 0; g < gpus; g++) {
        list.add(new Gpu(g, model, 0, mig));
      }
      nodes.add(new Node(NodeId.of(t.get(i, "sn")), Topology.DEFAULT_RACK, t.getLong(i, "memory_mib"),
          Math.toIntExact(t.getLong(i, "cpu_milli")), list));
    }
    Map<String, String> conf = new LinkedHashMap<>();
    conf.put(key("root.queues"), "default");
    conf.put(key("root.default.capacity"), "100");
    conf.put(key("root.default.user-limit-factor"), "-1");
    return new ClusterSpec(csv.getFileName() + (mig ? " (synthetic MIG)" : ""), catalog, Topology.singleRack(),
        nodes, conf, Map.of());
  }

  /**
   * A JSON cluster file (format: docs/simulator.md):
   * <pre>
   * {"name": "...", "topology": ["spine", "rack"],
   *  "gpuModels": [{"name": "V100", "memoryGb": 32}],
   *  "nodeGroups": [{"name": "a", "count": 4, "gpus": 8, "model": "H100-80GB", "vcores": 128, "memoryMb": 1048576,
   *                  "location": "/s1/r1", "nvlinkIslandSize": 8, "mig": "none" | "empty" | ["3g.40gb@0", ...],
   *                  "partition": "a"}],
   *  "queues": {"root.queues": "a,b", "root.a.capacity": "50", ...}}
   * </pre>
   */
  public static ClusterSpec fromFile(Path file) {
    JsonNode root;
    try {
      root = new ObjectMapper().readTree(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read cluster file " + file, e);
    }
    try {
      return fromJson(file.getFileName().toString(), root);
    } catch (IllegalArgumentException bad) {
      throw new IllegalArgumentException(file + ": " + bad.getMessage(), bad);
    }
  }

  static ClusterSpec fromJson(String source, JsonNode root) {
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("a cluster file is one JSON object");
    }
    rejectUnknown(root, "cluster", Set.of("name", "topology", "gpuModels", "nodeGroups", "queues"));
    List<String> levels = new ArrayList<>();
    if (root.has("topology")) {
      for (JsonNode l : array(root, "topology")) {
        levels.add(l.asText());
      }
    } else {
      levels.add("rack");
    }
    List<GpuModel> extra = new ArrayList<>();
    if (root.has("gpuModels")) {
      for (JsonNode g : array(root, "gpuModels")) {
        rejectUnknown(g, "gpuModels[]", Set.of("name", "memoryGb"));
        extra.add(new GpuModel(text(g, "name", null), (int) number(g, "memoryGb", 0), 0, 0, List.of(), List.of()));
      }
    }
    List<GpuModel> all = new ArrayList<>(GpuModelCatalog.builtIn().models());
    all.addAll(extra);
    GpuModelCatalog catalog = GpuModelCatalog.of(all);

    List<Node> nodes = new ArrayList<>();
    Map<String, String> partitions = new LinkedHashMap<>();
    Set<String> locations = new LinkedHashSet<>();
    String defaultLocation = "/" + String.join("/", levels.stream().map(l -> "default-" + l).toList());
    for (JsonNode g : array(root, "nodeGroups")) {
      rejectUnknown(g, "nodeGroups[]", Set.of("name", "count", "gpus", "model", "vcores", "memoryMb", "location",
          "nvlinkIslandSize", "mig", "partition"));
      String name = text(g, "name", null);
      int count = (int) number(g, "count", 1);
      int gpus = (int) number(g, "gpus", 0);
      GpuModel model = gpus == 0 ? null : catalog.require("nodeGroups[" + name + "].model", text(g, "model", null));
      String location = text(g, "location", defaultLocation);
      locations.add(location);
      int island = (int) number(g, "nvlinkIslandSize", Math.max(1, gpus));
      MigLayout layout = migLayout(g.get("mig"), model, name);
      String partition = text(g, "partition", "");
      for (int i = 0; i < count; i++) {
        String id = count == 1 ? name : name + "-" + i;
        nodes.add(node(id, location, (long) number(g, "memoryMb", 0), (int) number(g, "vcores", 0), model, gpus,
            island, layout));
        if (!partition.isEmpty()) {
          partitions.put(id, partition);
        }
      }
    }
    Topology topology = new Topology(levels, locations);
    Map<String, String> conf = new LinkedHashMap<>();
    JsonNode q = root.get("queues");
    if (q == null || !q.isObject()) {
      throw new IllegalArgumentException("'queues' (an object of CapacityScheduler keys) is required");
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = q.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      conf.put(key(e.getKey()), e.getValue().asText());
    }
    return new ClusterSpec(text(root, "name", source), catalog, topology, nodes, conf, partitions);
  }

  /** {@code null}/"none": whole GPUs; "empty": MIG mode, no instances yet; a list: MIG mode with those instances. */
  private static MigLayout migLayout(JsonNode mig, GpuModel model, String group) {
    if (mig == null || mig.isNull() || mig.asText().equals("none")) {
      return null;
    }
    if (model == null || !model.migCapable()) {
      throw new IllegalArgumentException("nodeGroups[" + group + "].mig: model " + (model == null ? "(none)"
          : model.name()) + " has no MIG");
    }
    MigLayout layout = MigLayout.empty(model);
    if (mig.isTextual() && mig.asText().equals("empty")) {
      return layout;
    }
    if (!mig.isArray()) {
      throw new IllegalArgumentException("nodeGroups[" + group + "].mig is \"none\", \"empty\" or a list such as "
          + "[\"3g.40gb@0\", \"3g.40gb@4\"]");
    }
    for (JsonNode inst : mig) {
      String[] ps = inst.asText().split("@");
      MigProfile p = model.profile(ps[0]).orElseThrow(() -> new IllegalArgumentException("nodeGroups[" + group
          + "].mig: " + model.name() + " has no profile '" + ps[0] + "'"));
      layout = layout.with(new MigPlacement(p, ps.length > 1 ? Integer.parseInt(ps[1]) : layout.firstFreeStart(p)));
    }
    return layout;
  }

  static Node node(String id, String location, long memoryMb, int vcores, GpuModel model, int gpus, int islandSize,
      MigLayout layout) {
    List<Gpu> list = new ArrayList<>();
    for (int i = 0; i < gpus; i++) {
      int island = i / Math.max(1, islandSize);
      list.add(layout == null ? new Gpu(i, model, island, false) : Gpu.mig(i, model, island, layout));
    }
    return new Node(NodeId.of(id), location, memoryMb, vcores, list);
  }

  /** The built-in catalog plus a plain (no MIG) model for each name it lacks. */
  static GpuModelCatalog catalogWith(Set<String> names) {
    List<GpuModel> all = new ArrayList<>(GpuModelCatalog.builtIn().models());
    for (String n : names) {
      if (GpuModelCatalog.builtIn().find(n).isEmpty()) {
        all.add(new GpuModel(n, 0, 0, 0, List.of(), List.of()));
      }
    }
    return GpuModelCatalog.of(all);
  }

  /** A queue key in full: {@code root.a.capacity} becomes {@code yarn.scheduler.capacity.root.a.capacity}. */
  static String key(String k) {
    return k.startsWith(QueueConfigParser.PREFIX) ? k : QueueConfigParser.PREFIX + k;
  }

  private static void rejectUnknown(JsonNode n, String where, Set<String> known) {
    for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      if (!known.contains(f)) {
        throw new IllegalArgumentException(where + ": unknown field '" + f + "'; known: " + known);
      }
    }
  }

  private static JsonNode array(JsonNode n, String field) {
    JsonNode a = n.get(field);
    if (a == null || !a.isArray()) {
      throw new IllegalArgumentException("'" + field + "' must be a list");
    }
    return a;
  }

  private static String text(JsonNode n, String field, String dflt) {
    JsonNode v = n.get(field);
    if (v == null || v.isNull()) {
      if (dflt == null) {
        throw new IllegalArgumentException("'" + field + "' is required");
      }
      return dflt;
    }
    return v.asText();
  }

  private static double number(JsonNode n, String field, double dflt) {
    JsonNode v = n.get(field);
    if (v == null || v.isNull()) {
      return dflt;
    }
    if (!v.isNumber()) {
      throw new IllegalArgumentException("'" + field + "' must be a number; was " + v);
    }
    return v.asDouble();
  }
}
