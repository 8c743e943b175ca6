package io.spindle.nm;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import io.spindle.nm.NvidiaSmiParser.GpuInstance;
import io.spindle.nm.NvidiaSmiParser.ListedGpu;
import io.spindle.nm.NvidiaSmiParser.ListedMig;
import io.spindle.nm.NvidiaSmiParser.SmiGpu;
import io.spindle.nm.NvidiaSmiParser.SmiMigDevice;
import io.spindle.nm.NvidiaSmiParser.SmiProcess;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds this node's GPUs and MIG instances by running nvidia-smi. Never throws: when the tool fails or prints
 * something unreadable the answer is an empty inventory and an error log line naming the command and the problem;
 * a single GPU that cannot be understood (unknown product, illegal MIG layout) is left out with an error, and the
 * others are still advertised.
 *
 * <p>Errors are logged when they first appear and once more when they clear, not on every discovery, so a node that
 * is polled keeps a readable log.
 */
public final class GpuDiscovery {

  private static final Logger LOG = LoggerFactory.getLogger(GpuDiscovery.class);

  static final List<String> QUERY = List.of("-q", "-x");
  static final List<String> LIST = List.of("-L");
  static final List<String> TOPOLOGY = List.of("topo", "-m");
  static final List<String> GPU_INSTANCES = List.of("mig", "-lgi");

  private final NvidiaSmi smi;
  private final GpuModelCatalog catalog;
  private final GpuSharingSettings sharing;
  private Set<String> lastProblems = Set.of();
  private GpuInventory lastInventory;

  public GpuDiscovery(NvidiaSmi smi, GpuModelCatalog catalog) {
    this(smi, catalog, GpuSharingSettings.exclusive());
  }

  /** @param sharing the admin's sharing modes, applied to the GPUs found outside MIG mode */
  public GpuDiscovery(NvidiaSmi smi, GpuModelCatalog catalog, GpuSharingSettings sharing) {
    this.smi = smi;
    this.catalog = catalog;
    this.sharing = sharing;
  }

  /** Runs nvidia-smi and returns what it found; empty (never {@code null}) when the GPUs cannot be read. */
  public synchronized GpuInventory discover() {
    List<String> problems = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    GpuInventory inventory;
    try {
      inventory = discover(problems, notes);
    } catch (RuntimeException e) {
      // A bug here must cost the node its GPUs, not the NodeManager its life.
      problems.add("GPU discovery failed unexpectedly: " + e);
      inventory = GpuInventory.empty();
    }
    report(problems, notes, inventory);
    return inventory;
  }

  private GpuInventory discover(List<String> problems, List<String> notes) {
    List<SmiGpu> smiGpus;
    NvidiaSmi.Result query = smi.run(QUERY);
    if (!query.ok()) {
      problems.add(NvidiaSmi.describe(QUERY) + " failed (" + query.failure() + "); no GPU is advertised");
      return GpuInventory.empty();
    }
    try {
      smiGpus = NvidiaSmiParser.parseQuery(query.stdout());
    } catch (NvidiaSmiFormatException e) {
      problems.add(NvidiaSmi.describe(QUERY) + " printed unreadable output (" + e.getMessage()
          + "); no GPU is advertised");
      return GpuInventory.empty();
    }
    if (smiGpus.isEmpty()) {
      problems.add(NvidiaSmi.describe(QUERY) + " lists no GPU; no GPU is advertised");
      return GpuInventory.empty();
    }
    List<ListedGpu> listed = run(LIST, problems, NvidiaSmiParser::parseList, "MIG instances cannot be named");
    Map<Integer, Integer> islands = run(TOPOLOGY, problems, NvidiaSmiParser::parseTopology,
        "every GPU is treated as its own NVLink island");
    List<GpuInstance> instances = null;
    if (smiGpus.stream().anyMatch(SmiGpu::migEnabled)) {
      instances = run(GPU_INSTANCES, problems, NvidiaSmiParser::parseGpuInstances,
          "MIG-mode GPUs are not advertised");
    }
    Map<String, ListedGpu> listedByUuid = new HashMap<>();
    if (listed != null) {
      listed.forEach(l -> listedByUuid.put(l.uuid(), l));
    }
    List<DiscoveredGpu> found = new ArrayList<>();
    for (int position = 0; position < smiGpus.size(); position++) {
      SmiGpu g = smiGpus.get(position);
      ListedGpu l = listedByUuid.get(g.uuid());
      // nvidia-smi -L names the index; without it, -q -x lists GPUs in index order.
      int index = l != null ? l.index() : position;
      DiscoveredGpu gpu = describe(index, g, l, islands, instances, problems, notes);
      if (gpu != null) {
        found.add(gpu);
      }
    }
    if (islands == null) {
      List<DiscoveredGpu> alone = new ArrayList<>();
      for (int i = 0; i < found.size(); i++) {
        alone.add(found.get(i).inIsland(i));
      }
      found = alone;
    }
    for (int index : sharing.perGpu().keySet()) {
      if (found.stream().noneMatch(g -> g.index() == index)) {
        notes.add("GPU " + index + " has a sharing mode configured but is not among the GPUs advertised");
      }
    }
    return new GpuInventory(found);
  }

  private DiscoveredGpu describe(int index, SmiGpu g, ListedGpu listed, Map<Integer, Integer> islands,
      List<GpuInstance> instances, List<String> problems, List<String> notes) {
    String name = "GPU " + index + " (" + g.uuid() + ")";
    GpuModel model = catalog.find(g.productName()).orElse(null);
    if (model == null) {
      problems.add(name + ": unknown product '" + g.productName() + "'; not advertised (known models: "
          + catalog.models().stream().map(GpuModel::name).toList() + ")");
      return null;
    }
    if (g.migEnabled() != g.migPending()) {
      notes.add(name + ": MIG mode change to " + (g.migPending() ? "enabled" : "disabled")
          + " is pending a GPU reset; using the current mode");
    }
    int island = islands == null ? 0 : islands.getOrDefault(index, -1);
    if (island < 0) {
      problems.add(name + ": missing from " + NvidiaSmi.describe(TOPOLOGY) + "; not advertised");
      return null;
    }
    boolean busy = !g.processes().isEmpty();
    if (!g.migEnabled()) {
      return new DiscoveredGpu(index, g.uuid(), model, false, island, g.minorNumber(), g.busId(), busy, List.of(),
          g.memoryMb(), sharing.modeOf(index));
    }
    GpuSharing configured = sharing.perGpu().get(index);
    if (configured != null && configured.shares()) {
      notes.add(name + ": MIG mode is on, so its configured sharing mode " + configured + " is ignored (its MIG "
          + "instances are how it is shared)");
    }
    if (!model.migCapable()) {
      problems.add(name + ": MIG mode is on but " + model.name() + " has no MIG profiles in the catalog; "
          + "not advertised");
      return null;
    }
    if (listed == null || instances == null) {
      problems.add(name + ": its MIG instances cannot be read (see the error above); not advertised");
      return null;
    }
    List<DiscoveredMigInstance> mig = new ArrayList<>();
    try {
      for (GpuInstance gi : instances) {
        if (gi.gpuIndex() == index) {
          mig.add(instance(index, name, model, gi, g, listed));
        }
      }
      MigLayout.of(model, mig.stream().map(DiscoveredMigInstance::placement).toList());
    } catch (InvalidInputException | IllegalStateException e) {
      problems.add(name + ": reported MIG layout is not usable (" + e.getMessage() + "); not advertised");
      return null;
    }
    return new DiscoveredGpu(index, g.uuid(), model, true, island, g.minorNumber(), g.busId(), busy, mig,
        g.memoryMb(), GpuSharing.EXCLUSIVE);
  }

  private static DiscoveredMigInstance instance(int index, String name, GpuModel model, GpuInstance gi, SmiGpu g,
      ListedGpu listed) {
    MigProfile profile = model.profile(gi.profileName()).orElseThrow(() -> new IllegalStateException(
        "GPU instance " + gi.instanceId() + " has profile " + gi.profileName() + ", which " + model.name()
            + " does not offer"));
    if (profile.nvmlProfileId() != gi.profileId() || profile.memorySlices() != gi.size()) {
      throw new IllegalStateException("GPU instance " + gi.instanceId() + " is " + gi.profileName() + " (ID "
          + gi.profileId() + ", " + gi.size() + " memory slices); the catalog says ID " + profile.nvmlProfileId()
          + ", " + profile.memorySlices() + " memory slices");
    }
    List<SmiMigDevice> devices = g.migDevices().stream().filter(d -> d.gpuInstanceId() == gi.instanceId()).toList();
    if (devices.size() > 1) {
      throw new IllegalStateException("GPU instance " + gi.instanceId() + " has " + devices.size()
          + " compute instances; Spindle hands out whole GPU instances with one compute instance each");
    }
    String uuid = null;
    int computeInstance = -1;
    if (devices.size() == 1) {
      SmiMigDevice device = devices.get(0);
      computeInstance = device.computeInstanceId();
      uuid = listed.migDevices().stream().filter(m -> m.deviceIndex() == device.index()).map(ListedMig::uuid)
          .findFirst().orElseThrow(() -> new IllegalStateException("MIG device " + device.index() + " of "
              + name + " is missing from nvidia-smi -L"));
    }
    boolean busy = g.processes().stream().map(SmiProcess::gpuInstanceId).anyMatch(id -> id == gi.instanceId());
    return new DiscoveredMigInstance(index, uuid, new MigPlacement(profile, gi.start()), gi.instanceId(),
        computeInstance, busy);
  }

  private interface Parser<T> {
    T parse(String output) throws NvidiaSmiFormatException;
  }

  private <T> T run(List<String> args, List<String> problems, Parser<T> parser, String consequence) {
    NvidiaSmi.Result result = smi.run(args);
    String output = result.stdout();
    if (!result.ok()) {
      // A MIG GPU without instances makes `mig -lgi` exit non-zero with "No GPU instances found": not a failure.
      String both = result.stdout() + "\n" + result.stderr();
      if (!args.equals(GPU_INSTANCES) || !both.contains("No GPU instances found")) {
        problems.add(NvidiaSmi.describe(args) + " failed (" + result.failure() + "); " + consequence);
        return null;
      }
      output = both;
    }
    try {
      return parser.parse(output);
    } catch (NvidiaSmiFormatException e) {
      problems.add(NvidiaSmi.describe(args) + " printed unreadable output (" + e.getMessage() + "); "
          + consequence);
      return null;
    }
  }

  /** The problems the last discovery logged as errors (empty when it went cleanly). */
  public synchronized List<String> lastProblems() {
    return List.copyOf(lastProblems);
  }

  private void report(List<String> problems, List<String> notes, GpuInventory inventory) {
    Set<String> now = new LinkedHashSet<>(problems);
    for (String p : now) {
      if (!lastProblems.contains(p)) {
        LOG.error("GPU discovery: {}", p);
      }
    }
    if (now.isEmpty() && !lastProblems.isEmpty()) {
      LOG.info("GPU discovery: earlier nvidia-smi problems are resolved");
    }
    if (!inventory.equals(lastInventory)) {
      for (String note : notes) {
        LOG.warn("GPU discovery: {}", note);
      }
      LOG.info("GPU discovery: {} GPU(s) advertised: {}", inventory.gpus().size(), summary(inventory));
    }
    lastProblems = now;
    lastInventory = inventory;
  }

  private static String summary(GpuInventory inventory) {
    List<String> parts = new ArrayList<>();
    for (DiscoveredGpu g : inventory.gpus()) {
      parts.add("GPU " + g.index() + " " + g.model().name() + " island " + g.nvlinkIsland()
          + (g.migEnabled() ? " MIG " + g.placements() : "") + (g.shared() ? " shared " + g.sharing() : ""));
    }
    return String.join(", ", parts);
  }
}
