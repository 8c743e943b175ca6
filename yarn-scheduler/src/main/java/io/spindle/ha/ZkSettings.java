package io.spindle.ha;

import org.apache.hadoop.conf.Configuration;

/**
 * Where Spindle keeps its state in ZooKeeper. Read by the scheduler and by every NodeManager, so both sides find the
 * same paths.
 *
 * @param address the ZooKeeper connect string; empty when none is configured (then nothing is stored)
 * @param root the znode under which everything lives, {@code /spindle/<cluster-id>} unless configured
 */
public record ZkSettings(String address, String root) {

  /** ZooKeeper connect string. Empty: use Hadoop's {@code hadoop.zk.address} (the ResourceManager's own quorum). */
  public static final String ZK_ADDRESS = "yarn.scheduler.spindle.zk.address";
  public static final String DEFAULT_ZK_ADDRESS = "";
  /** Root znode. Empty: {@code /spindle/<yarn.resourcemanager.cluster-id>}, {@code /spindle/default} without one. */
  public static final String ZK_ROOT = "yarn.scheduler.spindle.zk.root";
  public static final String DEFAULT_ZK_ROOT = "";

  static final String HADOOP_ZK_ADDRESS = "hadoop.zk.address";
  static final String YARN_CLUSTER_ID = "yarn.resourcemanager.cluster-id";

  public ZkSettings {
    address = address == null ? "" : address.strip();
    if (root == null || !root.startsWith("/") || (root.length() > 1 && root.endsWith("/"))) {
      throw new IllegalArgumentException(ZK_ROOT + " must be an absolute znode path without a trailing '/', not '"
          + root + "'");
    }
  }

  public static ZkSettings from(Configuration conf) {
    String address = conf.getTrimmed(ZK_ADDRESS, DEFAULT_ZK_ADDRESS);
    if (address.isEmpty()) {
      address = conf.getTrimmed(HADOOP_ZK_ADDRESS, "");
    }
    String root = conf.getTrimmed(ZK_ROOT, DEFAULT_ZK_ROOT);
    if (root.isEmpty()) {
      root = "/spindle/" + conf.getTrimmed(YARN_CLUSTER_ID, "default");
    }
    return new ZkSettings(address, root);
  }

  public boolean enabled() {
    return !address.isEmpty();
  }
}
