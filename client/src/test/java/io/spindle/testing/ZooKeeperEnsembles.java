package io.spindle.testing;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

/**
 * Starts an embedded ZooKeeper ensemble (Curator's {@code TestingCluster}) for a test and returns it only once every
 * member serves clients.
 *
 * <p>{@code TestingCluster.start()} returns when the servers' threads run, not when they serve. A member serves only
 * once it has joined an elected quorum, and one can fail to: Curator picks free ports just before the servers bind
 * them, so another process can take a quorum or election port in between, and the member then logs the bind error
 * (tests make ZooKeeper log instead of exiting) and never serves. {@code SchedulerLeadershipTest} met such a member:
 * its first client, connected to that member alone, timed out. Here every member must answer a client connected to it
 * alone before the test starts; an ensemble that does not within {@link #QUORUM_TIMEOUT} (a quorum forms in well under
 * a second when all members bind) is closed and started again on fresh ports.
 */
public final class ZooKeeperEnsembles {

  /** How long a fresh ensemble may take to elect a leader before the setup fails. */
  public static final Duration QUORUM_TIMEOUT = Duration.ofSeconds(30);

  private ZooKeeperEnsembles() {}

  /** A started ensemble of {@code servers} whose members all serve; up to three starts, each on fresh ports. */
  public static TestingCluster startServing(int servers) throws Exception {
    for (int attempt = 1; ; attempt++) {
      TestingCluster ensemble = new TestingCluster(servers);
      try {
        ensemble.start();
        awaitServing(ensemble);
        return ensemble;
      } catch (Exception e) {
        ensemble.close();
        if (attempt == 3) {
          throw e;
        }
      }
    }
  }

  /** Blocks until each member of {@code ensemble} answers a client connected to it alone. */
  public static void awaitServing(TestingCluster ensemble) throws Exception {
    long deadline = System.nanoTime() + QUORUM_TIMEOUT.toNanos();
    for (InstanceSpec server : ensemble.getInstances()) {
      try (CuratorFramework probe = CuratorFrameworkFactory.builder().connectString(server.getConnectString())
          .sessionTimeoutMs(10_000).connectionTimeoutMs(1_000).retryPolicy(new RetryOneTime(100)).build()) {
        probe.start();
        long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (leftMs <= 0 || !probe.blockUntilConnected((int) leftMs, TimeUnit.MILLISECONDS)) {
          throw new IllegalStateException("ZooKeeper member " + server.getConnectString() + " did not serve within "
              + QUORUM_TIMEOUT);
        }
        probe.checkExists().forPath("/");
      }
    }
  }
}
