package io.spindle.yarn;

import io.spindle.core.queue.QueueConfigParser;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.slf4j.LoggerFactory;

/**
 * The scheduler's own configuration: its keys, where it is read from (yarn-site.xml plus capacity-scheduler.xml) and
 * the values the YARN adapter uses itself. The engine's and the queues' keys are read by the core from
 * {@link #entries}. docs/admin-guide.md lists every key.
 */
public record SchedulerSettings(Configuration merged, String rmId, String instanceId, long cycleIntervalMs,
    List<String> topologyLevels, String nodeGpuModel, int nvlinkIslandSize, boolean signalOnPreemption,
    long migAnswerTimeoutMillis, long takeOverWaitMillis, boolean usePortForNodeName) {

  public static final String CYCLE_INTERVAL_MS = "yarn.scheduler.spindle.cycle-interval-ms";
  public static final long DEFAULT_CYCLE_INTERVAL_MS = 100;
  public static final String TOPOLOGY_LEVELS = "yarn.scheduler.spindle.topology.levels";
  public static final String DEFAULT_TOPOLOGY_LEVELS = "rack";
  public static final String NODE_GPU_MODEL = "yarn.scheduler.spindle.node.gpu-model";
  public static final String DEFAULT_NODE_GPU_MODEL = "H100-80GB";
  public static final String NODE_NVLINK_ISLAND_SIZE = "yarn.scheduler.spindle.node.nvlink-island-size";
  public static final int DEFAULT_NODE_NVLINK_ISLAND_SIZE = 8;
  public static final String PREEMPTION_SIGNAL = "yarn.scheduler.spindle.preemption.signal-graceful-shutdown";
  public static final String MIG_ANSWER_TIMEOUT_SECONDS = "yarn.scheduler.spindle.mig.answer-timeout-seconds";
  public static final long DEFAULT_MIG_ANSWER_TIMEOUT_SECONDS = 300;
  private static final String CAPACITY_SCHEDULER_XML = "capacity-scheduler.xml";

  public SchedulerSettings {
    topologyLevels = List.copyOf(topologyLevels);
  }

  /** Reads the settings from the RM's configuration and capacity-scheduler.xml (see {@link #merge}). */
  static SchedulerSettings read(Configuration rmConf, RMContext rmContext) throws IOException {
    Configuration merged = merge(rmConf, rmContext);
    long answerTimeout = merged.getLong(MIG_ANSWER_TIMEOUT_SECONDS, DEFAULT_MIG_ANSWER_TIMEOUT_SECONDS);
    if (answerTimeout <= 0) {
      throw new IllegalArgumentException(MIG_ANSWER_TIMEOUT_SECONDS + " must be > 0, not " + answerTimeout);
    }
    return new SchedulerSettings(merged, rmConf.get(YarnConfiguration.RM_HA_ID, "rm"), instanceId(rmConf),
        rmConf.getLong(CYCLE_INTERVAL_MS, DEFAULT_CYCLE_INTERVAL_MS),
        List.of(merged.getTrimmedStrings(TOPOLOGY_LEVELS, DEFAULT_TOPOLOGY_LEVELS)),
        merged.get(NODE_GPU_MODEL, DEFAULT_NODE_GPU_MODEL),
        merged.getInt(NODE_NVLINK_ISLAND_SIZE, DEFAULT_NODE_NVLINK_ISLAND_SIZE),
        merged.getBoolean(PREEMPTION_SIGNAL, false), answerTimeout * 1000,
        rmConf.getLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS,
            YarnConfiguration.DEFAULT_RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS),
        rmConf.getBoolean(YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME,
            YarnConfiguration.DEFAULT_RM_SCHEDULER_USE_PORT_FOR_NODE_NAME));
  }

  /**
   * yarn-site.xml plus capacity-scheduler.xml, which is where admins keep the queue tree. The file comes through the
   * ResourceManager's configuration provider, as CapacityScheduler's does: from the classpath by default, from a
   * shared store ({@code yarn.resourcemanager.configuration.provider-class}) in an HA pair, whose RMs must agree.
   */
  static Configuration merge(Configuration base, RMContext rmContext) throws IOException {
    Configuration c = new Configuration(base);
    if (rmContext == null || rmContext.getConfigurationProvider() == null) {
      c.addResource(CAPACITY_SCHEDULER_XML);
      return c;
    }
    try (InputStream in = rmContext.getConfigurationProvider().getConfigurationInputStream(base,
        CAPACITY_SCHEDULER_XML)) {
      if (in != null) {
        // Copied key by key: a stream resource cannot be read again when the configuration reloads. Values set in
        // code (embedded clusters, tests) win over the file, as they do over any resource.
        Configuration file = new Configuration(false);
        file.addResource(in);
        for (Map.Entry<String, String> e : file) {
          if (!setInCode(base, e.getKey())) {
            c.set(e.getKey(), e.getValue(), CAPACITY_SCHEDULER_XML);
          }
        }
      }
    } catch (YarnException e) {
      throw new IOException("cannot read " + CAPACITY_SCHEDULER_XML + ": " + e.getMessage(), e);
    }
    return c;
  }

  private static boolean setInCode(Configuration c, String key) {
    String[] sources = c.getPropertySources(key);
    return sources != null && List.of(sources).contains("programmatically");
  }

  /** The queue and Spindle keys of {@code c}, which the core reads: a fresh map the caller may change. */
  static Map<String, String> entries(Configuration c) {
    Map<String, String> out = new HashMap<>();
    for (Map.Entry<String, String> e : c) {
      if (e.getKey().startsWith(QueueConfigParser.PREFIX) || e.getKey().startsWith("yarn.scheduler.spindle.")) {
        out.put(e.getKey(), c.get(e.getKey()));
      }
    }
    return out;
  }

  /**
   * Spindle does not start YARN's scheduling monitors, as AbstractYarnScheduler.reinitialize would: they are
   * CapacityScheduler's preemption and queue-management policies and refuse any other scheduler (with its preemption
   * monitor left enabled in yarn-site.xml every refresh and every HA take-over failed). Spindle preempts by itself and
   * runs the auto-created-queue deletion policy itself ({@link QueueLoader#expireIdle}); an admin who enabled the
   * monitors is told.
   */
  static void warnOfMonitors(Configuration conf) {
    if (conf.getBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_ENABLE_MONITORS)) {
      LoggerFactory.getLogger(SchedulerSettings.class).warn("Spindle does not run {} ({}): they are "
          + "CapacityScheduler's; Spindle preempts by itself (yarn.scheduler.spindle.preemption.*)",
          YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES, conf.get(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES));
    }
  }

  /** How this scheduler names itself in the election: host and, in an HA pair, the ResourceManager's HA id. */
  private static String instanceId(Configuration conf) {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      host = "unknown-host";
    }
    String haId = HAUtil.isHAEnabled(conf) ? HAUtil.getRMHAId(conf) : null;
    return host + (haId == null ? "" : "/" + haId) + "#" + ProcessHandle.current().pid();
  }

  /** Hadoop racks are paths like {@code /spine1/rack3}; padded or trimmed to one segment per topology level. */
  String location(String rack) {
    List<String> segments = new ArrayList<>();
    for (String s : (rack == null ? "" : rack).split("/")) {
      if (!s.isBlank()) {
        segments.add(s);
      }
    }
    while (segments.size() < topologyLevels.size()) {
      segments.add(0, "default-" + topologyLevels.get(topologyLevels.size() - 1 - segments.size()));
    }
    List<String> kept = segments.subList(segments.size() - topologyLevels.size(), segments.size());
    return "/" + String.join("/", kept);
  }
}
