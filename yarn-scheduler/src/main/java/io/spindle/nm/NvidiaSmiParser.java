package io.spindle.nm;

import static io.spindle.nm.SmiXml.child;
import static io.spindle.nm.SmiXml.children;
import static io.spindle.nm.SmiXml.excerpt;
import static io.spindle.nm.SmiXml.requiredText;
import static io.spindle.nm.SmiXml.text;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.w3c.dom.Element;

/**
 * Reads the four nvidia-smi outputs discovery needs into plain records: {@code -q -x} (the GPUs, their MIG mode,
 * MIG devices and processes), {@code -L} (indices and MIG device UUIDs, which the XML does not carry),
 * {@code mig -lgi} (each GPU instance's profile and placement) and {@code topo -m} (NVLink islands). Every method
 * throws {@link NvidiaSmiFormatException} naming the command and the problem instead of guessing.
 */
public final class NvidiaSmiParser {

  /**
   * One {@code <gpu>} of {@code nvidia-smi -q -x}. {@code minorNumber} is -1 when the tool prints N/A;
   * {@code memoryMb} (the GPU's {@code <fb_memory_usage><total>}, MiB) is 0 when it prints none or N/A.
   */
  public record SmiGpu(String productName, String uuid, int minorNumber, String busId, boolean migEnabled,
      boolean migPending, List<SmiMigDevice> migDevices, List<SmiProcess> processes, long memoryMb) {

    public SmiGpu {
      migDevices = List.copyOf(migDevices);
      processes = List.copyOf(processes);
    }

    public SmiGpu(String productName, String uuid, int minorNumber, String busId, boolean migEnabled,
        boolean migPending, List<SmiMigDevice> migDevices, List<SmiProcess> processes) {
      this(productName, uuid, minorNumber, busId, migEnabled, migPending, migDevices, processes, 0);
    }
  }

  /** One {@code <mig_device>}: its device index on the GPU and the GPU/compute instance it is. */
  public record SmiMigDevice(int index, int gpuInstanceId, int computeInstanceId) {}

  /** One {@code <process_info>}; {@code gpuInstanceId} is -1 for a process on a GPU without MIG. */
  public record SmiProcess(int gpuInstanceId, long pid) {}

  /** One {@code GPU n: name (UUID: ...)} line of {@code nvidia-smi -L} with the MIG device lines under it. */
  public record ListedGpu(int index, String name, String uuid, List<ListedMig> migDevices) {

    public ListedGpu {
      migDevices = List.copyOf(migDevices);
    }
  }

  /** One {@code MIG 3g.20gb Device 0: (UUID: MIG-...)} line. */
  public record ListedMig(String profileName, int deviceIndex, String uuid) {}

  /** One row of {@code nvidia-smi mig -lgi}: a GPU instance, its profile and its placement {@code start:size}. */
  public record GpuInstance(int gpuIndex, String profileName, int profileId, int instanceId, int start, int size) {}

  private static final Pattern LIST_GPU = Pattern.compile("^GPU (\\d+): (.+?) \\(UUID: ([^)\\s]+)\\)\\s*$");
  private static final Pattern LIST_MIG =
      Pattern.compile("^\\s+MIG (\\S+)\\s+Device\\s+(\\d+): \\(UUID: ([^)\\s]+)\\)\\s*$");
  private static final Pattern LGI_ROW =
      Pattern.compile("^\\|\\s*(\\d+)\\s+MIG\\s+(\\S+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+):(\\d+)\\s*\\|\\s*$");
  private static final Pattern ANSI = Pattern.compile("\u001B\\[[0-9;]*m");
  private static final Pattern TOPO_GPU = Pattern.compile("GPU(\\d+)");
  private static final Pattern NVLINK = Pattern.compile("NV\\d+");
  private static final Pattern MIB = Pattern.compile("(\\d{1,12})\\s*MiB");

  private NvidiaSmiParser() {}

  /** Parses {@code nvidia-smi -q -x}. */
  public static List<SmiGpu> parseQuery(String xml) throws NvidiaSmiFormatException {
    Element root = SmiXml.root(xml);
    List<SmiGpu> gpus = new ArrayList<>();
    for (Element gpu : children(root, "gpu")) {
      String where = "<gpu> #" + gpus.size();
      String uuid = requiredText(gpu, "uuid", where);
      where = "<gpu> " + uuid;
      Element migMode = child(gpu, "mig_mode");
      boolean migEnabled = migMode != null && "Enabled".equalsIgnoreCase(text(migMode, "current_mig"));
      boolean migPending = migMode != null && "Enabled".equalsIgnoreCase(text(migMode, "pending_mig"));
      List<SmiMigDevice> migDevices = new ArrayList<>();
      Element migBlock = child(gpu, "mig_devices");
      if (migBlock != null) {
        for (Element d : children(migBlock, "mig_device")) {
          migDevices.add(new SmiMigDevice(requiredInt(d, "index", where + " <mig_device>"),
              requiredInt(d, "gpu_instance_id", where + " <mig_device>"),
              requiredInt(d, "compute_instance_id", where + " <mig_device>")));
        }
      }
      List<SmiProcess> processes = new ArrayList<>();
      Element processBlock = child(gpu, "processes");
      if (processBlock != null) {
        for (Element p : children(processBlock, "process_info")) {
          processes.add(new SmiProcess(optionalInt(p, "gpu_instance_id", where + " <process_info>"),
              requiredLong(p, "pid", where + " <process_info>")));
        }
      }
      Element pci = child(gpu, "pci");
      String busId = pci != null && text(pci, "pci_bus_id") != null ? text(pci, "pci_bus_id") : gpu.getAttribute("id");
      gpus.add(new SmiGpu(requiredText(gpu, "product_name", where), uuid,
          optionalInt(gpu, "minor_number", where), busId, migEnabled, migPending, migDevices, processes,
          totalMemoryMb(gpu, where)));
    }
    return gpus;
  }

  /** Parses {@code nvidia-smi -L}. */
  public static List<ListedGpu> parseList(String output) throws NvidiaSmiFormatException {
    if (output == null || output.isBlank()) {
      throw new NvidiaSmiFormatException("empty output");
    }
    Map<Integer, ListedGpu> gpus = new LinkedHashMap<>();
    List<ListedMig> migs = null;
    ListedGpu current = null;
    for (String line : output.lines().toList()) {
      Matcher gpu = LIST_GPU.matcher(line);
      Matcher mig = LIST_MIG.matcher(line);
      if (gpu.matches()) {
        if (current != null) {
          gpus.put(current.index(), new ListedGpu(current.index(), current.name(), current.uuid(), migs));
        }
        current = new ListedGpu(index(gpu.group(1), line), gpu.group(2), gpu.group(3), List.of());
        migs = new ArrayList<>();
      } else if (mig.matches()) {
        if (current == null) {
          throw new NvidiaSmiFormatException("MIG device line before any GPU line: '" + line.strip() + "'");
        }
        migs.add(new ListedMig(mig.group(1), index(mig.group(2), line), mig.group(3)));
      } else if (line.startsWith("GPU ") || line.strip().startsWith("MIG ")) {
        throw new NvidiaSmiFormatException("unreadable line '" + line.strip() + "'");
      }
    }
    if (current == null) {
      throw new NvidiaSmiFormatException("no 'GPU n: ...' line");
    }
    gpus.put(current.index(), new ListedGpu(current.index(), current.name(), current.uuid(), migs));
    return List.copyOf(gpus.values());
  }

  /** Parses {@code nvidia-smi mig -lgi}; "No GPU instances found" is an empty list, not an error. */
  public static List<GpuInstance> parseGpuInstances(String output) throws NvidiaSmiFormatException {
    if (output != null && output.contains("No GPU instances found")) {
      return List.of();
    }
    if (output == null || !output.contains("GPU instances:")) {
      throw new NvidiaSmiFormatException("no 'GPU instances:' table");
    }
    List<GpuInstance> instances = new ArrayList<>();
    for (String line : output.lines().toList()) {
      Matcher m = LGI_ROW.matcher(line);
      if (m.matches()) {
        instances.add(new GpuInstance(index(m.group(1), line), m.group(2), index(m.group(3), line),
            index(m.group(4), line), index(m.group(5), line), index(m.group(6), line)));
      } else if (line.startsWith("|") && line.contains("MIG ")) {
        throw new NvidiaSmiFormatException("unreadable GPU instance row '" + line.strip() + "'");
      }
    }
    return instances;
  }

  /**
   * Parses {@code nvidia-smi topo -m} into NVLink islands: GPUs joined by an {@code NV#} link, directly or through
   * other GPUs, form one island; PCIe paths ({@code PIX}, {@code PXB}, {@code PHB}, {@code NODE}, {@code SYS}) do
   * not. Islands are numbered 0, 1, ... in the order of their lowest GPU index.
   *
   * @return GPU index to island number, for every GPU the matrix lists
   */
  public static Map<Integer, Integer> parseTopology(String output) throws NvidiaSmiFormatException {
    if (output == null || output.isBlank()) {
      throw new NvidiaSmiFormatException("empty output");
    }
    List<String> lines = output.lines().map(l -> ANSI.matcher(l).replaceAll("")).toList();
    List<Integer> columns = null;
    Map<Integer, List<String>> rows = new TreeMap<>();
    for (String line : lines) {
      String[] tokens = line.strip().split("\\s+");
      if (columns == null) {
        if (tokens.length > 0 && TOPO_GPU.matcher(tokens[0]).matches() && !line.startsWith("GPU")) {
          columns = new ArrayList<>();
          for (String t : tokens) {
            Matcher m = TOPO_GPU.matcher(t);
            if (!m.matches()) {
              break;
            }
            columns.add(index(m.group(1), line));
          }
        }
        continue;
      }
      Matcher row = TOPO_GPU.matcher(tokens[0]);
      if (line.startsWith("GPU") && row.matches()) {
        if (tokens.length < columns.size() + 1) {
          throw new NvidiaSmiFormatException("row " + tokens[0] + " has " + (tokens.length - 1) + " cells for "
              + columns.size() + " GPU columns");
        }
        rows.put(index(row.group(1), line), List.of(tokens).subList(1, columns.size() + 1));
      }
    }
    if (columns == null) {
      throw new NvidiaSmiFormatException("no header row naming GPU0, GPU1, ...");
    }
    if (rows.size() != columns.size()) {
      throw new NvidiaSmiFormatException(columns.size() + " GPU columns but " + rows.size() + " GPU rows");
    }
    // Union-find over the GPUs' positions in the header, not their printed indices: an index is whatever the tool
    // printed, and sizing an array by it would let one line of output claim gigabytes.
    Map<Integer, Integer> position = new java.util.HashMap<>();
    for (int c = 0; c < columns.size(); c++) {
      if (position.putIfAbsent(columns.get(c), c) != null) {
        throw new NvidiaSmiFormatException("GPU" + columns.get(c) + " heads two columns");
      }
    }
    for (int gpu : rows.keySet()) {
      if (!position.containsKey(gpu)) {
        throw new NvidiaSmiFormatException("row GPU" + gpu + " has no column (the header names GPUs " + columns + ")");
      }
    }
    int[] parent = new int[columns.size()];
    for (int i = 0; i < parent.length; i++) {
      parent[i] = i;
    }
    for (Map.Entry<Integer, List<String>> row : rows.entrySet()) {
      for (int c = 0; c < columns.size(); c++) {
        String cell = row.getValue().get(c).toUpperCase(Locale.ROOT);
        if (NVLINK.matcher(cell).matches()) {
          union(parent, position.get(row.getKey()), c);
        }
      }
    }
    // Islands are numbered in the order of their lowest GPU index, whatever order the columns came in.
    Map<Integer, Integer> lowestOfRoot = new TreeMap<>();
    for (int gpu : rows.keySet()) {
      lowestOfRoot.merge(find(parent, position.get(gpu)), gpu, Math::min);
    }
    Map<Integer, Integer> islandOfLowest = new TreeMap<>();
    new java.util.TreeSet<>(lowestOfRoot.values()).forEach(low -> islandOfLowest.put(low, islandOfLowest.size()));
    Map<Integer, Integer> islands = new TreeMap<>();
    for (int gpu : rows.keySet()) {
      islands.put(gpu, islandOfLowest.get(lowestOfRoot.get(find(parent, position.get(gpu)))));
    }
    return islands;
  }

  private static int find(int[] parent, int i) {
    while (parent[i] != i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  }

  private static void union(int[] parent, int a, int b) {
    int ra = find(parent, a);
    int rb = find(parent, b);
    if (ra < rb) {
      parent[rb] = ra;
    } else if (rb < ra) {
      parent[ra] = rb;
    }
  }

  private static int requiredInt(Element parent, String tag, String where) throws NvidiaSmiFormatException {
    long value = requiredLong(parent, tag, where);
    if (value < 0 || value > Integer.MAX_VALUE) {
      throw new NvidiaSmiFormatException(where + " <" + tag + "> is " + value + ", out of range");
    }
    return (int) value;
  }

  /** A number the tool printed in {@code line} (an index, id or slot): digits that fit an int, or a reason. */
  private static int index(String digits, String line) throws NvidiaSmiFormatException {
    try {
      return Integer.parseInt(digits);
    } catch (NumberFormatException e) {
      throw new NvidiaSmiFormatException("number " + excerpt(digits) + " out of range in '" + excerpt(line.strip())
          + "'");
    }
  }

  private static long requiredLong(Element parent, String tag, String where) throws NvidiaSmiFormatException {
    String value = requiredText(parent, tag, where);
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new NvidiaSmiFormatException(where + " <" + tag + "> is '" + value + "', not a number");
    }
  }

  /**
   * The GPU's own frame-buffer total ({@code <gpu><fb_memory_usage><total>81559 MiB</total>}), not a MIG device's,
   * which sits deeper under {@code <mig_devices>}. Missing or N/A is 0 (unknown); anything else unreadable is an error.
   */
  private static long totalMemoryMb(Element gpu, String where) throws NvidiaSmiFormatException {
    Element fb = child(gpu, "fb_memory_usage");
    String value = fb == null ? null : text(fb, "total");
    if (value == null || value.isEmpty() || "N/A".equalsIgnoreCase(value)) {
      return 0;
    }
    Matcher m = MIB.matcher(value);
    if (!m.matches()) {
      throw new NvidiaSmiFormatException(where + " <fb_memory_usage><total> is '" + excerpt(value)
          + "', not '<n> MiB'");
    }
    return Long.parseLong(m.group(1));
  }

  /** An integer element that nvidia-smi prints as N/A when it does not apply; -1 then. */
  private static int optionalInt(Element parent, String tag, String where) throws NvidiaSmiFormatException {
    String value = text(parent, tag);
    if (value == null || value.isEmpty() || "N/A".equalsIgnoreCase(value)) {
      return -1;
    }
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new NvidiaSmiFormatException(where + " <" + tag + "> is '" + value + "', not a number or N/A");
    }
  }
}
