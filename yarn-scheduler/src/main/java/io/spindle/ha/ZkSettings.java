package io.spindle.ha;

import io.spindle.client.SpindleZkSettings;
import org.apache.hadoop.conf.Configuration;

/**
 * Where Spindle keeps its state in ZooKeeper. Read by the scheduler and by every NodeManager, so both sides find the
 * same paths; ApplicationMasters resolve the same keys with the client's {@link SpindleZkSettings}, which this
 * delegates to so the rules cannot drift apart.
 *
 * @param address the ZooKeeper connect string; empty when none is configured (then nothing is stored)
 * @param root the znode under which everything lives, {@code /spindle/<cluster-id>} unless configured
 */
public record ZkSettings(String address, String root) {

  /** ZooKeeper connect string. Empty: use Hadoop's {@code hadoop.zk.address} (the ResourceManager's own quorum). */
  public static final String ZK_ADDRESS = SpindleZkSettings.ZK_ADDRESS;
  public static final String DEFAULT_ZK_ADDRESS = "";
  /** Root znode. Empty: {@code /spindle/<yarn.resourcemanager.cluster-id>}, {@code /spindle/default} without one. */
  public static final String ZK_ROOT = SpindleZkSettings.ZK_ROOT;
  public static final String DEFAULT_ZK_ROOT = "";

  public ZkSettings {
    address = address == null ? "" : address.strip();
    if (root == null || !root.startsWith("/") || (root.length() > 1 && root.endsWith("/"))) {
      throw new IllegalArgumentException(ZK_ROOT + " must be an absolute znode path without a trailing '/', not '"
          + root + "'");
    }
  }

  public static ZkSettings from(Configuration conf) {
    SpindleZkSettings resolved = SpindleZkSettings.from(conf::getTrimmed);
    return new ZkSettings(resolved.address(), resolved.root());
  }

  public boolean enabled() {
    return !address.isEmpty();
  }
}
