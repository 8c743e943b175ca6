package io.spindle.bench.soak;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.management.ObjectName;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Heap in use after a full collection ({@code System.gc()}, which G1 honours with a full GC unless told otherwise):
 * what stays reachable. The soak runs the ResourceManager, the NodeManagers, ZooKeeper and its own AMs in one JVM,
 * so a sample is all of them; what grows across samples while the load is steady is what the run retains.
 */
public final class HeapProbe {

  /**
   * @param appsEnded applications ended when the sample was taken
   * @param threads live threads then (RPC connections, NodeManager and AM clients that were not let go show here)
   */
  public record Sample(String label, int appsEnded, long usedMb, int threads) {}

  private final List<Sample> samples = new ArrayList<>();
  /** Where each sample's class histogram goes, or null for none. */
  private final Path histograms;

  public HeapProbe(Path histograms) {
    this.histograms = histograms;
  }

  public synchronized Sample sample(String label, int appsEnded) {
    long used = usedAfterFullGc();
    Sample s = new Sample(label, appsEnded, used >> 20, ManagementFactory.getThreadMXBean().getThreadCount());
    samples.add(s);
    if (histograms != null) {
      writeHistogram(histograms.resolve("heap-" + label + ".txt"));
    }
    return s;
  }

  /**
   * The heap in use as the collection {@code System.gc()} starts left it, from the collector's own record: read
   * afterwards from the heap, it would include whatever the cluster's threads allocated meanwhile.
   */
  private static long usedAfterFullGc() {
    Map<String, Long> counts = new HashMap<>();
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      counts.put(gc.getName(), gc.getCollectionCount());
    }
    System.gc();
    Set<String> heapPools = new HashSet<>();
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        heapPools.add(pool.getName());
      }
    }
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (gc instanceof com.sun.management.GarbageCollectorMXBean g
          && g.getCollectionCount() > counts.getOrDefault(g.getName(), 0L) && g.getLastGcInfo() != null) {
        long used = 0;
        for (Map.Entry<String, MemoryUsage> e : g.getLastGcInfo().getMemoryUsageAfterGc().entrySet()) {
          used += heapPools.contains(e.getKey()) ? e.getValue().getUsed() : 0;
        }
        return used;
      }
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** {@code jcmd <pid> GC.class_histogram}, from inside: live objects per class, largest first. */
  private static void writeHistogram(Path file) {
    try {
      Object text = ManagementFactory.getPlatformMBeanServer().invoke(
          new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
          new Object[] {new String[0]}, new String[] {String[].class.getName()});
      Files.createDirectories(file.getParent());
      Files.writeString(file, String.valueOf(text), StandardCharsets.UTF_8);
    } catch (Exception e) {
      throw new IllegalStateException("cannot write a class histogram to " + file + ": " + e, e);
    }
  }

  public synchronized List<Sample> samples() {
    return List.copyOf(samples);
  }
}
