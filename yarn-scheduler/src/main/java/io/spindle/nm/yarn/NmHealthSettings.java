package io.spindle.nm.yarn;

import io.spindle.core.model.GpuHealthPolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;

/**
 * How the NodeManager watches its GPUs' health (admin guide, "GPU health (NodeManager)").
 *
 * @param interval how often the GPUs are judged; {@link Duration#ZERO}: never (health is not reported)
 * @param kernelLog a file holding the kernel log, for Xid lines ({@code null}: none is read)
 * @param dcgmi the {@code dcgmi} command, for DCGM's verdicts ({@code null}: DCGM is not asked)
 * @param policy what each piece of evidence makes a GPU
 */
public record NmHealthSettings(Duration interval, Path kernelLog, List<String> dcgmi, GpuHealthPolicy policy) {

  public static final String INTERVAL_MS = "yarn.nodemanager.spindle.health.interval-ms";
  public static final long DEFAULT_INTERVAL_MS = 30_000;
  public static final String KERNEL_LOG = "yarn.nodemanager.spindle.health.kernel-log";
  public static final String DCGMI = "yarn.nodemanager.spindle.health.dcgmi";
  public static final String FATAL_XIDS = "yarn.nodemanager.spindle.health.fatal-xids";
  public static final String AGGREGATE_UNCORRECTABLE_LIMIT =
      "yarn.nodemanager.spindle.health.aggregate-uncorrectable-limit";

  public boolean watched() {
    return !interval.isZero();
  }

  public static NmHealthSettings from(Configuration conf) {
    long every = conf.getLong(INTERVAL_MS, DEFAULT_INTERVAL_MS);
    if (every < 0) {
      throw new IllegalArgumentException(INTERVAL_MS + " must be >= 0 (0: off), not " + every);
    }
    String log = conf.getTrimmed(KERNEL_LOG, "");
    String dcgmi = conf.getTrimmed(DCGMI, "");
    Set<Integer> fatal = new LinkedHashSet<>();
    String[] xids = conf.getTrimmedStrings(FATAL_XIDS,
        GpuHealthPolicy.DEFAULT_FATAL_XIDS.stream().sorted().map(String::valueOf).toArray(String[]::new));
    for (String x : xids) {
      try {
        fatal.add(Integer.parseInt(x));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(FATAL_XIDS + ": '" + x + "' is not an Xid number");
      }
    }
    long limit = conf.getLong(AGGREGATE_UNCORRECTABLE_LIMIT, GpuHealthPolicy.DEFAULT_AGGREGATE_UNCORRECTABLE_LIMIT);
    if (limit < 0) {
      throw new IllegalArgumentException(AGGREGATE_UNCORRECTABLE_LIMIT + " must be >= 0, not " + limit);
    }
    return new NmHealthSettings(Duration.ofMillis(every), log.isEmpty() ? null : Path.of(log),
        dcgmi.isEmpty() ? null : List.of(dcgmi), new GpuHealthPolicy(fatal, limit));
  }
}
