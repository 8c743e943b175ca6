package io.spindle.ha;

import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's scheduler state in one znode, {@code <root>/scheduler/state}. Every write is a multi-op with the
 * leadership's epoch check ({@link SchedulerLeadership#fence}), so it lands only while the writer still holds the
 * epoch it was elected with; a refused check deposes the writer. The bytes are the caller's (Avro-encoded state).
 */
public final class SchedulerStateStore {

  private static final Logger LOG = LoggerFactory.getLogger(SchedulerStateStore.class);

  private final CuratorFramework client;
  private final SchedulerLeadership leadership;
  private final String statePath;
  private final List<ACL> acl;

  public SchedulerStateStore(CuratorFramework client, String root, SchedulerLeadership leadership, List<ACL> acl) {
    this.client = client;
    this.leadership = leadership;
    this.statePath = root + "/scheduler/state";
    this.acl = List.copyOf(acl);
  }

  public String path() {
    return statePath;
  }

  /** The state last written by any leader; empty before the first write. */
  public Optional<byte[]> load() throws Exception {
    try {
      return Optional.of(client.getData().forPath(statePath));
    } catch (KeeperException.NoNodeException e) {
      return Optional.empty();
    }
  }

  /**
   * Replaces the state, if the epoch is still the one {@code term} holds. Throws {@link FencedException} (and
   * deposes the leadership) when another instance has raised the epoch since; other ZooKeeper failures propagate
   * and may be retried.
   */
  public void write(SchedulerLeadership.Term term, byte[] state) throws Exception {
    CuratorOp fence = leadership.fence(term);
    if (client.checkExists().forPath(statePath) == null) {
      try {
        client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).withACL(acl)
            .forPath(parentOf(statePath));
      } catch (KeeperException.NodeExistsException ignored) {
        // Created by an earlier leader.
      }
      commit(term, fence, client.transactionOp().create().withMode(CreateMode.PERSISTENT).withACL(acl)
          .forPath(statePath, state));
    } else {
      commit(term, fence, client.transactionOp().setData().forPath(statePath, state));
    }
  }

  private void commit(SchedulerLeadership.Term term, CuratorOp fence, CuratorOp write) throws Exception {
    try {
      List<CuratorTransactionResult> results = client.transaction().forOperations(fence, write);
      LOG.debug("Scheduler state written ({} ops)", results.size());
    } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
      // Only the epoch check has a version, and its znode is never deleted while the parent of the state exists.
      String what = "the scheduler state write at " + statePath;
      leadership.fenced(what);
      throw new FencedException(what + " was refused: the epoch at " + leadership.epochPath()
          + " is no longer " + term.epoch() + ", the one scheduler " + leadership.id() + " was elected with");
    }
  }

  private static String parentOf(String path) {
    return path.substring(0, path.lastIndexOf('/'));
  }
}
