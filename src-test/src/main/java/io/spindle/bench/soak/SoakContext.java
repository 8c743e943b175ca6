package io.spindle.bench.soak;

import io.spindle.client.CheckpointPaths;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.client.api.YarnClient;

/**
 * What every {@link AppDriver} shares: the threads that run their steps, one YARN client per user (created as that
 * user, so YARN sees each application submitted by its own user), the ledger and the rates.
 */
final class SoakContext {

  final ScheduledExecutorService pool;
  final Configuration conf;
  final Map<String, UserGroupInformation> users;
  final Map<String, YarnClient> clients;
  final ContainerLedger ledger;
  final Rates submissions;
  final Rates allocations;
  final long heartbeatMs;
  /** The cluster's ZooKeeper and where Spindle keeps applications' checkpoint znodes in it. */
  final CuratorFramework zk;
  final CheckpointPaths checkpointPaths;
  private final Consumer<AppDriver> ended;
  private volatile boolean aborted;
  /** Launched containers whose completion their AM has not seen yet. */
  final java.util.concurrent.atomic.AtomicInteger launchedRunning = new java.util.concurrent.atomic.AtomicInteger();
  /**
   * How long a launched container runs: 0 runs {@code true}; with failovers, long enough that one may still run when
   * its ResourceManager fails over, so the next one must recover it from its NodeManager.
   */
  final long launchSeconds;
  private volatile long deadEpochsUpTo = -1;
  private volatile int failoversDone;
  /** When the last failover began and when the new ResourceManager's Spindle had taken over (0: not yet). */
  private volatile long failoverBeganNanos;
  private volatile long failoverEndedNanos;
  /** A call begun this long before a failover ended may still fail because of it. */
  private static final long FAILOVER_GRACE_NANOS = 5_000_000_000L;

  SoakContext(ScheduledExecutorService pool, Configuration conf, Map<String, UserGroupInformation> users,
      Map<String, YarnClient> clients, ContainerLedger ledger, Rates submissions, Rates allocations, long heartbeatMs,
      CuratorFramework zk, CheckpointPaths checkpointPaths, long launchSeconds, Consumer<AppDriver> ended) {
    this.pool = pool;
    this.conf = conf;
    this.users = Map.copyOf(users);
    this.clients = Map.copyOf(clients);
    this.ledger = ledger;
    this.submissions = submissions;
    this.allocations = allocations;
    this.heartbeatMs = heartbeatMs;
    this.zk = zk;
    this.checkpointPaths = checkpointPaths;
    this.launchSeconds = launchSeconds;
    this.ended = ended;
  }

  void ended(AppDriver d) {
    ended.accept(d);
  }

  /** The drain timeout passed: drivers stop where they are and their applications count as stuck. */
  void abort() {
    aborted = true;
  }

  boolean aborted() {
    return aborted;
  }

  /**
   * The ResourceManager of {@code epoch} has stepped down (and no later one has handed anything out yet): what it and
   * earlier ones allocated and nobody launched is gone.
   */
  void failedOver(long epoch) {
    ledger.failover(epoch);
    deadEpochsUpTo = Math.max(deadEpochsUpTo, epoch);
    failoversDone++;
  }

  void failoverBegins() {
    failoverEndedNanos = 0;
    failoverBeganNanos = System.nanoTime();
  }

  void failoverEnds() {
    failoverEndedNanos = System.nanoTime();
  }

  /** Whether a failover was under way at some time since {@code sinceNanos} (or ended just before). */
  boolean failoverDuring(long sinceNanos) {
    long began = failoverBeganNanos;
    long ended = failoverEndedNanos;
    return began != 0 && (ended == 0 || ended + FAILOVER_GRACE_NANOS >= sinceNanos);
  }

  /** Containers of epochs up to this one came from ResourceManagers that failed over; -1 before any failover. */
  long deadEpochsUpTo() {
    return deadEpochsUpTo;
  }

  int failoversDone() {
    return failoversDone;
  }
}
