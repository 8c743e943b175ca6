package io.spindle.nm.yarn;

import io.spindle.ha.ZkSettings;
import io.spindle.nm.GpuSharingSettings;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import org.apache.hadoop.conf.Configuration;

/**
 * The NodeManager-side settings of Spindle's device plugins, read from the NodeManager's configuration
 * ({@code yarn-site.xml}). Every key has one constant and one default; docs/nodemanager-plugin.md lists them.
 */
public record NmSettings(String nvidiaSmiPath, Duration nvidiaSmiTimeout, List<String> migProfiles, String nodeName,
    Duration migRetryInterval, Duration migAllocationGrace, ZkSettings zk, GpuSharingSettings sharing,
    String mpsPipeDirectory, String mpsLogDirectory, NmHealthSettings health) {

  /** The nvidia-smi binary; a bare name is looked up on the NodeManager's PATH. */
  public static final String NVIDIA_SMI_PATH = "yarn.nodemanager.spindle.nvidia-smi.path";
  public static final String DEFAULT_NVIDIA_SMI_PATH = "nvidia-smi";
  /** How long one nvidia-smi invocation may run before it is killed (a wedged driver makes it hang). */
  public static final String NVIDIA_SMI_TIMEOUT_MS = "yarn.nodemanager.spindle.nvidia-smi.timeout-ms";
  public static final long DEFAULT_NVIDIA_SMI_TIMEOUT_MS = 10_000;
  /** MIG profiles this node advertises; the n-th is served by {@code MigProfilePlugin<n>}. */
  public static final String MIG_PROFILES = "yarn.nodemanager.spindle.mig.profiles";
  public static final String DEFAULT_MIG_PROFILES = "";
  /** This node's name in ZooKeeper; empty: the host's canonical name, which is what YARN's NodeId carries. */
  public static final String NODE_NAME = "yarn.nodemanager.spindle.node-name";
  public static final String DEFAULT_NODE_NAME = "";
  /** How often a desired MIG layout waiting for its GPU to go idle is tried again. */
  public static final String MIG_RETRY_INTERVAL_MS = "yarn.nodemanager.spindle.mig.retry-interval-ms";
  public static final long DEFAULT_MIG_RETRY_INTERVAL_MS = 10_000;
  /** How long a GPU counts as in use after one of its instances was handed to a container. */
  public static final String MIG_ALLOCATION_GRACE_MS = "yarn.nodemanager.spindle.mig.allocation-grace-ms";
  public static final long DEFAULT_MIG_ALLOCATION_GRACE_MS = 60_000;

  /** How this node's GPUs outside MIG mode are shared: {@code exclusive}, {@code time-slice} or {@code mps}. */
  public static final String GPU_SHARING = "yarn.nodemanager.spindle.gpu.sharing";
  public static final String DEFAULT_GPU_SHARING = "exclusive";
  /** Modes of single GPUs that differ from the node's, as {@code <index>:<mode>,...}. */
  public static final String GPU_SHARING_PER_GPU = "yarn.nodemanager.spindle.gpu.sharing.per-gpu";
  public static final String DEFAULT_GPU_SHARING_PER_GPU = "";
  /** The MPS control daemon's pipe directory, handed to MPS containers; empty: MPS's default, nothing is set. */
  public static final String MPS_PIPE_DIRECTORY = "yarn.nodemanager.spindle.mps.pipe-directory";
  /** The MPS control daemon's log directory, handed to MPS containers; empty: MPS's default, nothing is set. */
  public static final String MPS_LOG_DIRECTORY = "yarn.nodemanager.spindle.mps.log-directory";

  public NmSettings {
    migProfiles = List.copyOf(migProfiles);
  }

  /** The sharing keys alone: every plugin checks them at registration, so a typo stops the NodeManager at start. */
  public static GpuSharingSettings sharing(Configuration conf) {
    return GpuSharingSettings.parse(GPU_SHARING, conf.getTrimmed(GPU_SHARING, DEFAULT_GPU_SHARING),
        GPU_SHARING_PER_GPU, conf.getTrimmed(GPU_SHARING_PER_GPU, DEFAULT_GPU_SHARING_PER_GPU));
  }

  public static NmSettings from(Configuration conf) {
    String node = conf.getTrimmed(NODE_NAME, DEFAULT_NODE_NAME);
    if (node.isEmpty()) {
      node = localHostName();
    }
    return new NmSettings(
        conf.getTrimmed(NVIDIA_SMI_PATH, DEFAULT_NVIDIA_SMI_PATH),
        Duration.ofMillis(positive(conf, NVIDIA_SMI_TIMEOUT_MS, DEFAULT_NVIDIA_SMI_TIMEOUT_MS)),
        List.of(conf.getTrimmedStrings(MIG_PROFILES, DEFAULT_MIG_PROFILES)),
        node,
        Duration.ofMillis(positive(conf, MIG_RETRY_INTERVAL_MS, DEFAULT_MIG_RETRY_INTERVAL_MS)),
        Duration.ofMillis(positive(conf, MIG_ALLOCATION_GRACE_MS, DEFAULT_MIG_ALLOCATION_GRACE_MS)),
        ZkSettings.from(conf),
        sharing(conf),
        directory(conf, MPS_PIPE_DIRECTORY),
        directory(conf, MPS_LOG_DIRECTORY),
        NmHealthSettings.from(conf));
  }

  /** A directory key's value: an absolute path, or empty for none. */
  public static String directory(Configuration conf, String key) {
    String value = conf.getTrimmed(key, "");
    if (!value.isEmpty() && !value.startsWith("/")) {
      throw new IllegalArgumentException(key + " must be an absolute path (it is mounted into containers), not '"
          + value + "'");
    }
    return value;
  }

  private static long positive(Configuration conf, String key, long defaultValue) {
    long value = conf.getLong(key, defaultValue);
    if (value <= 0) {
      throw new IllegalArgumentException(key + " must be > 0, not " + value);
    }
    return value;
  }

  private static String localHostName() {
    try {
      return InetAddress.getLocalHost().getCanonicalHostName();
    } catch (UnknownHostException e) {
      throw new IllegalStateException("cannot tell this host's name; set " + NODE_NAME, e);
    }
  }
}
