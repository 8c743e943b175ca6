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

  SoakContext(ScheduledExecutorService pool, Configuration conf, Map<String, UserGroupInformation> users,
      Map<String, YarnClient> clients, ContainerLedger ledger, Rates submissions, Rates allocations, long heartbeatMs,
      CuratorFramework zk, CheckpointPaths checkpointPaths, Consumer<AppDriver> ended) {
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
}
