package io.spindle.nm;

import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.GpuHealthPolicy;
import io.spindle.core.model.HealthEvidence;
import io.spindle.nm.GpuHealthReader.GpuHealthReport;
import io.spindle.nm.NvidiaSmiParser.ListedGpu;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Judges this node's GPUs now and then and says which changed, by GPU index. It remembers every GPU it has listed,
 * so one that drops out of {@code nvidia-smi -L} (Xid 79, "fallen off the bus", often ends so) is judged missing,
 * not forgotten.
 *
 * <p>Checks run on one thread (the {@link MigStateAgent}'s); {@link #of} may be called from any.
 *
 * <p>When the tools cannot be read at all (the driver is wedged, {@code nvidia-smi} times out), nothing changes: the
 * last judgement stands and the failure is logged once per streak. A GPU is never called healthy for want of data.
 */
public final class GpuHealthMonitor {

  private static final Logger LOG = LoggerFactory.getLogger(GpuHealthMonitor.class);

  /** Reads the tools' outputs; throws {@link NvidiaSmiFormatException} when a required one cannot be read. */
  @FunctionalInterface
  public interface Sources {
    GpuHealthReader.Sources read() throws NvidiaSmiFormatException;
  }

  private final Sources sources;
  private final GpuHealthPolicy policy;
  /** Every GPU listed so far: UUID to index. */
  private final Map<String, Integer> indexOf = new LinkedHashMap<>();
  /** The last judgement sent, by index; read by the device plugins' threads too. */
  private final Map<Integer, GpuHealth> last = new ConcurrentSkipListMap<>();
  private boolean failing;

  public GpuHealthMonitor(Sources sources, GpuHealthPolicy policy) {
    this.sources = sources;
    this.policy = policy;
  }

  /** The GPUs whose health changed since the last call (every GPU not healthy, on the first), by index. */
  public Map<Integer, GpuHealth> check() {
    GpuHealthReader.Sources read;
    GpuHealthReport report;
    try {
      read = sources.read();
      for (ListedGpu g : listed(read)) {
        indexOf.put(g.uuid(), g.index());
      }
      report = GpuHealthReader.read(read, indexOf.keySet(), policy);
    } catch (NvidiaSmiFormatException | RuntimeException e) {
      if (!failing) {
        LOG.error("Cannot judge GPU health (the last judgement stands): {}", e.getMessage());
      }
      failing = true;
      return Map.of();
    }
    if (failing) {
      LOG.info("GPU health readable again");
      failing = false;
    }
    report.notes().forEach(n -> LOG.warn("GPU health: {}", n));
    Map<Integer, GpuHealth> changed = new TreeMap<>();
    report.gpus().forEach((uuid, health) -> {
      Integer index = indexOf.get(uuid);
      if (index == null) {
        return; // Listed by nothing that gives an index: cannot be told apart from a GPU of another node.
      }
      GpuHealth before = last.getOrDefault(index, GpuHealth.HEALTHY);
      if (!Objects.equals(before, health)) {
        last.put(index, health);
        changed.put(index, health);
        log(index, uuid, health);
      }
    });
    return changed;
  }

  /** The last judgement of GPU {@code index}: healthy until judged otherwise. */
  public GpuHealth of(int index) {
    return last.getOrDefault(index, GpuHealth.HEALTHY);
  }

  private static List<ListedGpu> listed(GpuHealthReader.Sources read) throws NvidiaSmiFormatException {
    String list = read.gpuList();
    return list == null || list.contains("No devices were found") ? List.of() : NvidiaSmiParser.parseList(list);
  }

  private static void log(int index, String uuid, GpuHealth health) {
    List<String> evidence = health.evidence().stream().map(HealthEvidence::detail).toList();
    if (health.state() == GpuHealth.State.HEALTHY) {
      LOG.info("GPU {} ({}) is healthy{}", index, uuid, evidence.isEmpty() ? "" : " (seen: " + evidence + ")");
    } else {
      LOG.warn("GPU {} ({}) is {}: {}", index, uuid, health.state(), evidence);
    }
  }

  /**
   * The outputs of the real tools: {@code nvidia-smi -q -x}, {@code -L} and {@code nvlink -s}, a kernel-log file
   * ({@code null}: none), and {@code dcgmi health -c} ({@code null}: no DCGM). A failing optional source is left out
   * (logged), not fatal; a failing {@code nvidia-smi} query or listing is.
   */
  public static Sources tools(NvidiaSmi smi, Path kernelLog, List<String> dcgmi,
      Duration timeout) {
    return () -> {
      NvidiaSmi.Result query = smi.run(List.of("-q", "-x"));
      NvidiaSmi.Result list = smi.run(List.of("-L"));
      if (!list.ok() && !list.stdout().contains("No devices were found")) {
        throw new NvidiaSmiFormatException("nvidia-smi -L failed: " + list.failure());
      }
      if (!query.ok() && !list.stdout().contains("No devices were found")) {
        throw new NvidiaSmiFormatException("nvidia-smi -q -x failed: " + query.failure());
      }
      NvidiaSmi.Result nvlink = smi.run(List.of("nvlink", "-s"));
      String kernel = null;
      if (kernelLog != null) {
        try {
          kernel = tail(kernelLog);
        } catch (IOException e) {
          LOG.warn("Cannot read the kernel log {} for Xid lines: {}", kernelLog, e.getMessage());
        }
      }
      String dcgm = null;
      if (dcgmi != null) {
        NvidiaSmi.Result r = new ProcessNvidiaSmi(dcgmi, timeout).run(List.of("health", "-c"));
        dcgm = r.ok() ? r.stdout() : null;
        if (!r.ok()) {
          LOG.warn("dcgmi health -c failed: {}", r.failure());
        }
      }
      return new GpuHealthReader.Sources(query.stdout(), list.stdout(), nvlink.ok() ? nvlink.stdout() : null,
          kernel, dcgm);
    };
  }

  /** The last 4 MiB of the kernel log: Xid lines that matter are recent, and a log may be gigabytes. */
  private static String tail(Path file) throws IOException {
    long max = 4L << 20;
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
      long start = Math.max(0, f.length() - max);
      f.seek(start);
      byte[] bytes = new byte[(int) (f.length() - start)];
      f.readFully(bytes);
      return new String(bytes, StandardCharsets.UTF_8);
    }
  }
}
