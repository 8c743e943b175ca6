package io.spindle.ha;

import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;

/**
 * The leader's scheduler state in one znode, {@code <root>/scheduler/state}. Every write is a multi-op with the
 * leadership's epoch check ({@link SchedulerLeadership#fence}), so it lands only while the writer still holds the
 * epoch it was elected with; a refused check deposes the writer. The bytes are the caller's (Avro-encoded state).
 */
public final class SchedulerStateStore {

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
   * deposes the leadership) when another instance has raised the epoch since, and {@link StaleTermException} when
   * this instance itself has (the state still stands, under its newer term); other ZooKeeper failures propagate and
   * may be retried.
   */
  public void write(SchedulerLeadership.Term term, byte[] state) throws Exception {
    Fence fence = leadership.fenceOf(term);
    String what = "the scheduler state write of epoch " + term.epoch() + " at " + statePath;
    try {
      if (client.checkExists().forPath(statePath) == null) {
        try {
          client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).withACL(acl)
              .forPath(parentOf(statePath));
        } catch (KeeperException.NodeExistsException ignored) {
          // Created by an earlier leader.
        }
        fence.commit(client, what, client.transactionOp().create().withMode(CreateMode.PERSISTENT).withACL(acl)
            .forPath(statePath, state));
      } else {
        fence.commit(client, what, client.transactionOp().setData().forPath(statePath, state));
      }
    } catch (FencedException e) {
      if (leadership.renewedSince(term)) {
        throw new StaleTermException(what + " was refused: this scheduler has been elected again since, under a "
            + "later epoch");
      }
      leadership.fenced(what);
      throw e;
    }
  }

  private static String parentOf(String path) {
    return path.substring(0, path.lastIndexOf('/'));
  }
}
