package io.spindle.local;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuResourceNames;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * The fake GPU nodes of the local cluster, read from {@code conf/local-cluster.properties}: per node its rack, memory,
 * vcores, GPU model, whole GPUs and the MIG layout of each MIG-mode GPU. Every value is checked against Spindle's GPU
 * catalog (a MIG layout must be legal on its model); an error names the key and the reason, and an unknown key is an
 * error too, so a typo never silently changes the cluster.
 *
 * <p>What a node advertises to YARN is what Spindle's NodeManager plugin would advertise for the same hardware:
 * {@code gpu-resource} = its whole GPUs, and per declared MIG profile {@code nvidia.com/mig-<profile>} = every place
 * an instance of the profile may start on its MIG-mode GPUs ({@code mig-advertise = places}, see
 * docs/nodemanager-plugin.md), or the instances that exist ({@code mig-advertise = instances}).
 */
public record LocalClusterSpec(
    String gpuResource, List<String> migProfiles, MigAdvertise migAdvertise, List<NodeSpec> nodes,
    Map<String, String> schedulerSettings) {

  /** How MIG resources are counted in a node's YARN capacity. */
  public enum MigAdvertise {
    /** Every legal start of the profile on every MIG-mode GPU: what Spindle's NodeManager plugin advertises. */
    PLACES,
    /** The instances that exist in the configured layouts. */
    INSTANCES
  }

  /**
   * One fake NodeManager. GPU indices: whole GPUs first (0..gpus-1), then the MIG-mode GPUs in the order listed.
   *
   * @param sharedGpus how many of its whole GPUs (the first ones) are time-sliced for shares of a GPU; such a node
   *     has no agent: it advertises {@code nvidia.com/gpu-milli} = 1000 per shared GPU and is modelled from that
   * @param nvlinkIslands the NVLink island of each GPU, by index; empty: every GPU in island 0
   */
  public record NodeSpec(String name, String rack, long memoryMb, int vcores, GpuModel model, int wholeGpus,
      List<MigLayout> migGpus, int sharedGpus, List<Integer> nvlinkIslands) {

    public NodeSpec(String name, String rack, long memoryMb, int vcores, GpuModel model, int wholeGpus,
        List<MigLayout> migGpus) {
      this(name, rack, memoryMb, vcores, model, wholeGpus, migGpus, 0, List.of());
    }

    public int totalGpus() {
      return wholeGpus + migGpus.size();
    }

    /** The NVLink island GPU {@code index} reports. */
    public int nvlinkIsland(int index) {
      return nvlinkIslands.isEmpty() ? 0 : nvlinkIslands.get(index);
    }

    /** Instances of {@code profile} that exist on this node's MIG GPUs. */
    public int instances(String profile) {
      int n = 0;
      for (MigLayout layout : migGpus) {
        for (MigPlacement p : layout.placements()) {
          if (p.profile().name().equals(profile)) {
            n++;
          }
        }
      }
      return n;
    }

    /** Places where an instance of {@code profile} may start, over all MIG GPUs (0 if the model lacks it). */
    public int places(String profile) {
      return model.profile(profile).map(p -> p.legalStarts().size() * migGpus.size()).orElse(0);
    }
  }

  public static final String GPU_MODEL = "gpu-model";
  public static final String GPU_RESOURCE = "gpu-resource";
  public static final String MIG_PROFILES = "mig-profiles";
  public static final String MIG_ADVERTISE = "mig-advertise";
  public static final String NODES = "nodes";
  static final List<String> NODE_KEYS = List.of("rack", "memory-mb", "vcores", "gpu-model", "gpus", "mig",
      "shared-gpus", "nvlink-islands");
  /**
   * Keys passed to the ResourceManager as they are: Spindle's scheduler settings (preemption, say) and YARN's
   * highest application priority, the ones a demo cluster may need beyond what the launcher sets itself.
   */
  static final String SCHEDULER_PREFIX = "yarn.scheduler.spindle.";
  static final String MAX_PRIORITY = "yarn.cluster.max-application-priority";
  /** Spindle keys the launcher sets from the node file or its options; a node file may not set them. */
  static final List<String> LAUNCHER_KEYS = List.of("yarn.scheduler.spindle.topology.levels",
      "yarn.scheduler.spindle.node.gpu-model", "yarn.scheduler.spindle.zk.address",
      "yarn.scheduler.spindle.zk.auth", "yarn.scheduler.spindle.http.port", "yarn.scheduler.spindle.http.bind-address");

  /** YARN resources each node advertises, beyond memory and vcores: name to amount. */
  public Map<String, Long> advertised(NodeSpec node) {
    Map<String, Long> out = new LinkedHashMap<>();
    out.put(gpuResource, (long) node.wholeGpus());
    for (String profile : migProfiles) {
      long n = migAdvertise == MigAdvertise.PLACES ? node.places(profile) : node.instances(profile);
      out.put(GpuResourceNames.mig(profile), n);
    }
    if (sharesGpus()) {
      // The memory too, or YARN's maximum allocation (the largest node's) would refuse every gpu-mem-mb ask.
      out.put(GpuResourceNames.GPU_MILLI, (long) node.sharedGpus() * 1000);
      out.put(GpuResourceNames.GPU_MEMORY_MB, node.sharedGpus() * node.model().memoryMb());
    }
    return out;
  }

  /** Whether some node has GPUs in a sharing mode (then the share resource types are declared). */
  public boolean sharesGpus() {
    return nodes.stream().anyMatch(n -> n.sharedGpus() > 0);
  }

  /** The value of {@code yarn.resource-types}: the whole-GPU resource and one type per declared MIG profile. */
  public List<String> resourceTypes() {
    List<String> out = new ArrayList<>();
    out.add(gpuResource);
    for (String p : migProfiles) {
      out.add(GpuResourceNames.mig(p));
    }
    if (sharesGpus()) {
      out.add(GpuResourceNames.GPU_MILLI);
      out.add(GpuResourceNames.GPU_MEMORY_MB);
    }
    return out;
  }

  /** The one GPU model of every node, or null when nodes differ. */
  public GpuModel commonModel() {
    Set<String> names = new LinkedHashSet<>();
    for (NodeSpec n : nodes) {
      names.add(n.model().name());
    }
    return names.size() == 1 ? nodes.get(0).model() : null;
  }

  /** Number of segments of every rack path ({@code /spine1/rack1}: 2), or -1 when racks differ in depth. */
  public int rackDepth() {
    int depth = -1;
    for (NodeSpec n : nodes) {
      int d = n.rack().substring(1).split("/").length;
      if (depth >= 0 && d != depth) {
        return -1;
      }
      depth = d;
    }
    return depth;
  }

  public static LocalClusterSpec read(Path file, GpuModelCatalog catalog) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(r);
    }
    try {
      return parse(p, catalog);
    } catch (InvalidInputException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
    }
  }

  /** Parses the properties; errors are {@link InvalidInputException}s naming the key. */
  public static LocalClusterSpec parse(Properties p, GpuModelCatalog catalog) {
    Map<String, String> props = new LinkedHashMap<>();
    for (String k : p.stringPropertyNames()) {
      props.put(k.strip(), p.getProperty(k).strip());
    }
    String gpuResource = props.getOrDefault(GPU_RESOURCE, GpuResourceNames.WHOLE_GPU);
    if (!GpuResourceNames.isWholeGpu(gpuResource)) {
      throw new InvalidInputException(GPU_RESOURCE, gpuResource,
          "must be " + GpuResourceNames.WHOLE_GPU + " or " + GpuResourceNames.NVIDIA_GPU);
    }
    List<String> migProfiles = list(props.getOrDefault(MIG_PROFILES, ""), ",");
    for (String profile : migProfiles) {
      catalog.requireProfile(MIG_PROFILES, profile);
      if (profile.contains("+")) {
        throw new InvalidInputException(MIG_PROFILES, profile, "YARN resource names may not contain '+'");
      }
    }
    MigAdvertise advertise;
    try {
      advertise = MigAdvertise.valueOf(props.getOrDefault(MIG_ADVERTISE, "places").toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new InvalidInputException(MIG_ADVERTISE, props.get(MIG_ADVERTISE), "must be places or instances");
    }
    String defaultModel = props.get(GPU_MODEL);
    List<String> names = list(props.getOrDefault(NODES, ""), ",");
    if (names.isEmpty()) {
      throw new InvalidInputException(NODES, "", "list at least one node");
    }
    if (new LinkedHashSet<>(names).size() != names.size()) {
      throw new InvalidInputException(NODES, names, "node names must differ");
    }
    Map<String, String> settings = new java.util.TreeMap<>();
    for (String key : props.keySet()) {
      if (List.of(GPU_MODEL, GPU_RESOURCE, MIG_PROFILES, MIG_ADVERTISE, NODES).contains(key)) {
        continue;
      }
      if (key.startsWith(SCHEDULER_PREFIX) || key.equals(MAX_PRIORITY)) {
        if (LAUNCHER_KEYS.contains(key)) {
          throw new InvalidInputException(key, props.get(key), "set by spindle-local itself (see"
              + " docs/local-cluster.md)");
        }
        settings.put(key, props.get(key));
        continue;
      }
      String[] parts = key.split("\\.", 3);
      if (parts.length != 3 || !parts[0].equals("node") || !names.contains(parts[1])
          || !NODE_KEYS.contains(parts[2])) {
        throw new InvalidInputException(key, props.get(key), "unknown key; known: " + GPU_MODEL + ", " + GPU_RESOURCE
            + ", " + MIG_PROFILES + ", " + MIG_ADVERTISE + ", " + NODES + ", node.<name>.{"
            + String.join(",", NODE_KEYS)
            + "} for a node listed in " + NODES + ", " + SCHEDULER_PREFIX + "*, " + MAX_PRIORITY);
      }
    }
    List<NodeSpec> nodes = new ArrayList<>();
    for (String name : names) {
      String prefix = "node." + name + ".";
      String rack = props.getOrDefault(prefix + "rack", "/default-rack");
      if (!rack.matches("(/[A-Za-z0-9_.-]+)+")) {
        throw new InvalidInputException(prefix + "rack", rack, "needs a path such as /spine1/rack1");
      }
      long memory = number(props, prefix + "memory-mb", 65536, 1024);
      int vcores = (int) number(props, prefix + "vcores", 32, 1);
      String modelName = props.getOrDefault(prefix + "gpu-model", defaultModel);
      if (modelName == null) {
        throw new InvalidInputException(prefix + "gpu-model", "", "no GPU model: set " + GPU_MODEL + " or this key");
      }
      GpuModel model = catalog.require(props.containsKey(prefix + "gpu-model") ? prefix + "gpu-model" : GPU_MODEL,
          modelName);
      int gpus = (int) number(props, prefix + "gpus", 0, 0);
      List<MigLayout> mig = new ArrayList<>();
      String migKey = prefix + "mig";
      for (String gpu : list(props.getOrDefault(migKey, ""), ";")) {
        mig.add(layout(migKey, model, gpu));
      }
      int shared = (int) number(props, prefix + "shared-gpus", 0, 0);
      if (shared > gpus) {
        throw new InvalidInputException(prefix + "shared-gpus", shared, "more than the node's " + gpus
            + " whole GPUs (" + prefix + "gpus)");
      }
      if (shared > 0 && !mig.isEmpty()) {
        // Such a node is modelled from what it advertises, and advertised MIG instances are not modelled.
        throw new InvalidInputException(prefix + "shared-gpus", shared, "a node with shared GPUs has no agent, so it"
            + " cannot have MIG GPUs (" + migKey + ")");
      }
      List<Integer> islands = islands(prefix + "nvlink-islands", props.get(prefix + "nvlink-islands"),
          gpus + mig.size());
      nodes.add(new NodeSpec(name, rack, memory, vcores, model, gpus, List.copyOf(mig), shared, islands));
    }
    return new LocalClusterSpec(gpuResource, List.copyOf(migProfiles), advertise, List.copyOf(nodes),
        java.util.Collections.unmodifiableMap(settings));
  }

  /**
   * One MIG GPU's layout: comma-separated instances, each {@code profile}, {@code profile@start} or
   * {@code profile*count}; {@code empty} for a MIG-mode GPU without instances. Instances without a start go to the
   * first legal free start, in the order written.
   */
  static MigLayout layout(String key, GpuModel model, String text) {
    if (!model.migCapable()) {
      throw new InvalidInputException(key, text, model.name() + " does not support MIG");
    }
    MigLayout layout = MigLayout.empty(model);
    if (text.equalsIgnoreCase("empty")) {
      return layout;
    }
    for (String item : list(text, ",")) {
      int count = 1;
      String spec = item;
      int star = item.indexOf('*');
      if (star >= 0) {
        spec = item.substring(0, star).strip();
        count = parseInt(key, item.substring(star + 1).strip(), 1);
      }
      Integer start = null;
      int at = spec.indexOf('@');
      if (at >= 0) {
        start = parseInt(key, spec.substring(at + 1).strip(), 0);
        spec = spec.substring(0, at).strip();
      }
      String profileName = spec;
      MigProfile profile = model.profile(profileName).orElseThrow(() -> new InvalidInputException(key, profileName,
          model.name() + " offers no such MIG profile; it offers " + model.profilesByName().keySet()));
      for (int i = 0; i < count; i++) {
        int s = start != null ? start : layout.firstFreeStart(profile);
        if (s < 0) {
          throw new InvalidInputException(key, text, "no room left for " + profileName + " on " + model.name()
              + " after " + layout.placements());
        }
        MigPlacement placement = new MigPlacement(profile, s);
        String why = layout.whyNot(placement);
        if (why != null) {
          throw new InvalidInputException(key, text, why);
        }
        layout = layout.with(placement);
        start = null;
      }
    }
    return layout;
  }

  /** One island number per GPU, as {@code nvidia-smi topo -m} yields them; absent: none (all in island 0). */
  private static List<Integer> islands(String key, String value, int gpus) {
    if (value == null) {
      return List.of();
    }
    List<String> items = list(value, ",");
    if (items.size() != gpus) {
      throw new InvalidInputException(key, value, "needs one island number per GPU of the node (" + gpus
          + "), in GPU index order");
    }
    List<Integer> out = new ArrayList<>();
    for (String item : items) {
      out.add(parseInt(key, item, 0));
    }
    return List.copyOf(out);
  }

  private static long number(Map<String, String> props, String key, long dflt, long min) {
    String v = props.get(key);
    if (v == null) {
      return dflt;
    }
    try {
      long n = Long.parseLong(v);
      if (n >= min) {
        return n;
      }
    } catch (NumberFormatException e) {
      // Reported below.
    }
    throw new InvalidInputException(key, v, "needs a whole number of at least " + min);
  }

  private static int parseInt(String key, String v, int min) {
    try {
      int n = Integer.parseInt(v);
      if (n >= min) {
        return n;
      }
    } catch (NumberFormatException e) {
      // Reported below.
    }
    throw new InvalidInputException(key, v, "needs a whole number of at least " + min);
  }

  private static List<String> list(String value, String separator) {
    List<String> out = new ArrayList<>();
    for (String s : value.split(java.util.regex.Pattern.quote(separator))) {
      if (!s.isBlank()) {
        out.add(s.strip());
      }
    }
    return out;
  }
}
