package io.spindle.ha;

import java.io.Closeable;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.hadoop.conf.Configuration;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;

/**
 * The scheduler's one ZooKeeper session. Leadership, scheduler state, MIG layouts and checkpoint notices share it,
 * so that losing it stops all of them together, and the ResourceManager does not start at all when ZooKeeper cannot
 * be reached (rather than scheduling without the state a standby would need).
 */
public final class SchedulerZk implements Closeable {

  /** ZooKeeper session timeout: how long a scheduler that lost contact keeps its lead (and a standby waits). */
  public static final String SESSION_TIMEOUT_MS = "yarn.scheduler.spindle.zk.session-timeout-ms";
  public static final int DEFAULT_SESSION_TIMEOUT_MS = 10_000;
  /** How long the scheduler waits for ZooKeeper at start before it refuses to start. */
  public static final String CONNECT_TIMEOUT_MS = "yarn.scheduler.spindle.zk.connect-timeout-ms";
  public static final long DEFAULT_CONNECT_TIMEOUT_MS = 15_000;

  private final CuratorFramework client;
  private final ZkSettings settings;

  private SchedulerZk(CuratorFramework client, ZkSettings settings) {
    this.client = client;
    this.settings = settings;
  }

  /** Connects as {@code identity}; throws {@link IllegalStateException} naming the key if ZooKeeper is unreachable. */
  public static SchedulerZk connect(ZkSettings settings, SchedulerZkIdentity identity, Configuration conf) {
    int sessionTimeout = conf.getInt(SESSION_TIMEOUT_MS, DEFAULT_SESSION_TIMEOUT_MS);
    long connectTimeout = conf.getLong(CONNECT_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS);
    if (sessionTimeout < 1_000) {
      throw new IllegalArgumentException(SESSION_TIMEOUT_MS + " must be at least 1000 ms, not " + sessionTimeout);
    }
    if (connectTimeout <= 0) {
      throw new IllegalArgumentException(CONNECT_TIMEOUT_MS + " must be > 0, not " + connectTimeout);
    }
    CuratorFramework client = CuratorFrameworkFactory.builder().connectString(settings.address())
        .sessionTimeoutMs(sessionTimeout).connectionTimeoutMs((int) Math.min(connectTimeout, sessionTimeout))
        .retryPolicy(new ExponentialBackoffRetry(200, 10, 5_000)).authorization(identity.auth())
        .aclProvider(schedulerOnlyBelow(settings.root(), identity)).build();
    client.start();
    boolean connected;
    try {
      connected = client.blockUntilConnected((int) connectTimeout, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      connected = false;
    }
    if (!connected) {
      client.close();
      throw new IllegalStateException("Spindle cannot reach ZooKeeper at '" + settings.address() + "' ("
          + ZkSettings.ZK_ADDRESS + ") within " + connectTimeout + " ms (" + CONNECT_TIMEOUT_MS + "). The scheduler "
          + "does not start without it: check that the quorum is up and reachable from this host, or unset "
          + ZkSettings.ZK_ADDRESS + " and hadoop.zk.address to run without ZooKeeper (no leader election, no "
          + "failover state, no MIG re-partitioning, no checkpoint notices)");
    }
    return new SchedulerZk(client, settings);
  }

  /**
   * Everything the session creates under {@code <root>/leader} and {@code <root>/scheduler} — the latch's znodes, the
   * epoch, the state, and the parents Curator makes on the way — belongs to the scheduler's identity: otherwise
   * anyone could delete the epoch (resetting the fence) or a candidate's latch node. Elsewhere each store sets its own
   * ACLs (checkpoint notices, MIG layouts), so the default stays open.
   */
  static ACLProvider schedulerOnlyBelow(String root, SchedulerZkIdentity identity) {
    List<ACL> scheduler = identity.schedulerOnlyAcl();
    return new ACLProvider() {
      @Override
      public List<ACL> getDefaultAcl() {
        return ZooDefs.Ids.OPEN_ACL_UNSAFE;
      }

      @Override
      public List<ACL> getAclForPath(String path) {
        return path.startsWith(root + "/leader") || path.startsWith(root + "/scheduler") ? scheduler
            : ZooDefs.Ids.OPEN_ACL_UNSAFE;
      }
    };
  }

  public CuratorFramework client() {
    return client;
  }

  public ZkSettings settings() {
    return settings;
  }

  @Override
  public void close() {
    client.close();
  }
}
