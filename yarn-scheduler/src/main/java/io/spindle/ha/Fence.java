package io.spindle.ha;

import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.OpResult;

/**
 * What a scheduler-side write to ZooKeeper must prove: that its writer still leads with the epoch it was elected
 * with. Writes go out as a multi-op whose first op is that check, so a deposed leader's write fails as a whole.
 */
@FunctionalInterface
public interface Fence {

  /** No check: for writers that are not schedulers (NodeManager agents, tests). */
  Fence NONE = Optional::empty;

  /** The check to prepend, or empty for none; throws when the writer knows it does not lead. */
  Optional<CuratorOp> check() throws FencedException;

  /**
   * Commits {@code writes} behind the check. A failure of the check itself becomes a {@link FencedException} naming
   * {@code what}; any other failure (e.g. a version conflict of one of the writes) propagates as it is.
   */
  default void commit(CuratorFramework client, String what, CuratorOp... writes) throws Exception {
    Optional<CuratorOp> check = check();
    if (check.isEmpty()) {
      client.transaction().forOperations(writes);
      return;
    }
    CuratorOp[] all = new CuratorOp[writes.length + 1];
    all[0] = check.get();
    System.arraycopy(writes, 0, all, 1, writes.length);
    try {
      client.transaction().forOperations(all);
    } catch (KeeperException e) {
      List<OpResult> results = e.getResults();
      boolean checkFailed = results != null && !results.isEmpty() && results.get(0) instanceof OpResult.ErrorResult r
          && r.getErr() != KeeperException.Code.OK.intValue();
      if (checkFailed) {
        throw new FencedException(what + " was refused: another scheduler has raised the leader epoch");
      }
      throw e;
    }
  }
}
