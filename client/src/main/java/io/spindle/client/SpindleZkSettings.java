package io.spindle.client;

import java.util.Map;
import java.util.Properties;
import java.util.function.Function;

/**
 * Where Spindle keeps its state in ZooKeeper, read from the same keys the ResourceManager reads, so an
 * ApplicationMaster given the cluster's {@code yarn-site.xml} finds the scheduler's paths. The keys are read by
 * name, without Hadoop's {@code Configuration} class: pass any lookup, e.g. {@code conf::get} of a Hadoop
 * {@code Configuration}, {@code map::get} or {@code properties::getProperty}.
 *
 * @param address the ZooKeeper connect string; empty when none is configured
 * @param root the znode under which everything lives, {@code /spindle/<cluster-id>} unless configured
 */
public record SpindleZkSettings(String address, String root) {

  /** ZooKeeper connect string. Empty: Hadoop's {@code hadoop.zk.address} (the ResourceManager's own quorum). */
  public static final String ZK_ADDRESS = "yarn.scheduler.spindle.zk.address";
  /** Root znode. Empty: {@code /spindle/<yarn.resourcemanager.cluster-id>}, {@code /spindle/default} without one. */
  public static final String ZK_ROOT = "yarn.scheduler.spindle.zk.root";
  public static final String HADOOP_ZK_ADDRESS = "hadoop.zk.address";
  public static final String YARN_CLUSTER_ID = "yarn.resourcemanager.cluster-id";

  public SpindleZkSettings {
    address = address == null ? "" : address.strip();
    if (root == null || !root.startsWith("/") || (root.length() > 1 && root.endsWith("/"))) {
      throw new IllegalArgumentException(ZK_ROOT + " must be an absolute znode path without a trailing '/', not '"
          + root + "'");
    }
  }

  /** Resolves the settings the way the ResourceManager does; {@code lookup} answers null for an unset key. */
  public static SpindleZkSettings from(Function<String, String> lookup) {
    String address = value(lookup, ZK_ADDRESS);
    if (address.isEmpty()) {
      address = value(lookup, HADOOP_ZK_ADDRESS);
    }
    String root = value(lookup, ZK_ROOT);
    if (root.isEmpty()) {
      String cluster = value(lookup, YARN_CLUSTER_ID);
      root = "/spindle/" + (cluster.isEmpty() ? "default" : cluster);
    }
    return new SpindleZkSettings(address, root);
  }

  public static SpindleZkSettings from(Map<String, String> conf) {
    return from(conf::get);
  }

  public static SpindleZkSettings from(Properties conf) {
    return from(conf::getProperty);
  }

  public boolean enabled() {
    return !address.isEmpty();
  }

  private static String value(Function<String, String> lookup, String key) {
    String v = lookup.apply(key);
    return v == null ? "" : v.strip();
  }
}
