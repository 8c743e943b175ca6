package io.spindle.ha;

import io.spindle.ha.avro.LeaderEpochRecord;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongSupplier;
import org.apache.avro.AvroRuntimeException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which scheduler instance leads, among those sharing a ZooKeeper root (the ResourceManagers of a YARN HA pair).
 * Elected by a Curator {@link LeaderLatch}; on election the leader raises the epoch at {@code <root>/leader/epoch}
 * and keeps the znode version it set. {@link #fence(Term)} is the check every state write carries: once another
 * instance has raised the epoch, this one's writes fail, whatever it believes.
 *
 * <p>Leadership ends at once when the session is suspended or lost (before the ResourceManager itself fails over):
 * a suspended session may already have expired on the quorum and a standby may lead.
 */
public final class SchedulerLeadership implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(SchedulerLeadership.class);

  /** Told on the leadership thread; implementations return quickly. */
  public interface Listener {
    /**
     * This instance leads with {@code epoch}; its writes carry {@link #fence(Term)} from now on. It claimed every
     * epoch from {@code heldSince} to {@code epoch} itself ({@code heldSince == epoch} when another instance, or
     * nobody, held the one before): a listener that last heard of an epoch at or after {@code heldSince - 1} knows
     * nobody else led meanwhile, even if a claim of its own was never announced (the latch was lost in between).
     */
    void elected(long epoch, long heldSince);

    /** This instance no longer leads (or never will again with this epoch): stop scheduling now. */
    void deposed(String why);
  }

  /** A leadership that has the epoch but has not lost it; scheduler state writes are checked against it. */
  public record Term(long epoch, int epochVersion) {}

  private final CuratorFramework client;
  private final String id;
  private final String latchPath;
  private final String epochPath;
  private final List<ACL> acl;
  private final Listener listener;
  private final LongSupplier clock;
  private final LeaderLatch latch;
  private final ExecutorService events = BackgroundWriter.start("spindle-leadership");
  private final ConnectionStateListener connection = this::connectionChanged;
  private volatile Term term;
  /**
   * The last epoch this instance claimed, announced or not, and the first of its unbroken run; written on the events
   * thread, read together by writers ({@link #renewedSince}), under this object's monitor.
   */
  private long lastClaimed;
  private long heldSince;

  private SchedulerLeadership(CuratorFramework client, String root, String id, List<ACL> acl, Listener listener,
      LongSupplier clock) {
    this.client = client;
    this.id = id;
    this.latchPath = root + "/leader/latch";
    this.epochPath = root + "/leader/epoch";
    this.acl = List.copyOf(acl);
    this.listener = listener;
    this.clock = clock;
    this.latch = new LeaderLatch(client, latchPath, id);
  }

  /** Joins the election under {@code root} as {@code id}; {@code listener} hears the outcome. */
  public static SchedulerLeadership start(CuratorFramework client, String root, String id, List<ACL> acl,
      Listener listener, LongSupplier clock) throws Exception {
    SchedulerLeadership l = new SchedulerLeadership(client, root, id, acl, listener, clock);
    client.getConnectionStateListenable().addListener(l.connection);
    l.latch.addListener(new LeaderLatchListener() {
      @Override
      public void isLeader() {
        l.events.execute(l::takeLead);
      }

      @Override
      public void notLeader() {
        l.events.execute(() -> l.depose("lost the leader latch"));
      }
    }, l.events);
    l.latch.start();
    LOG.info("Scheduler {} joined the leader election at {}", id, l.latchPath);
    return l;
  }

  public String id() {
    return id;
  }

  public boolean isLeading() {
    return term != null;
  }

  /** The current term, or {@code null} when not leading. */
  public Term term() {
    return term;
  }

  public String epochPath() {
    return epochPath;
  }

  /**
   * The check a state write must carry in its multi-op: the epoch znode still has the version {@code t} set. A
   * writer passes the term it read when it decided what to write; if another instance has raised the epoch since,
   * ZooKeeper refuses the write, whatever this instance believes.
   */
  public CuratorOp fence(Term t) {
    try {
      return client.transactionOp().check().withVersion(t.epochVersion()).forPath(epochPath);
    } catch (Exception e) {
      throw new IllegalStateException("cannot build the epoch check for " + epochPath, e);
    }
  }

  /** The fence of writes decided under {@code t}. */
  public Fence fenceOf(Term t) {
    return () -> Optional.of(fence(t));
  }

  /**
   * The fence of writes made now, on behalf of whatever term this instance holds: refused outright when it holds
   * none, and by ZooKeeper when its term is no longer the newest. For stores that write after the scheduling thread
   * decided (checkpoint notices, MIG layouts).
   */
  public Fence currentFence() {
    return () -> {
      Term t = term;
      if (t == null) {
        throw new FencedException("scheduler " + id + " does not lead");
      }
      return Optional.of(fence(t));
    };
  }

  /**
   * Whether a write fenced under {@code t} can have been refused only because this very instance has claimed a later
   * epoch since, in one unbroken run of claims: nobody else held an epoch from {@code t}'s on. Such a write is
   * stale, not fenced (a re-election after a ZooKeeper outage, while a write of the old term was being retried).
   */
  public synchronized boolean renewedSince(Term t) {
    return t.epoch() < lastClaimed && t.epoch() >= heldSince;
  }

  /** A write carrying {@link #fence(Term)} failed its check: another instance leads now. */
  public void fenced(String what) {
    String why = "fenced: " + what + " was refused because another scheduler raised the epoch";
    try {
      events.execute(() -> depose(why));
    } catch (RejectedExecutionException closed) {
      term = null; // Closed: nobody listens any more.
    }
  }

  /** Who leads according to the epoch znode, if anyone ever did. */
  public LeaderEpochRecord currentEpoch() throws Exception {
    try {
      return decode(client.getData().forPath(epochPath));
    } catch (KeeperException.NoNodeException e) {
      return null;
    }
  }

  private void takeLead() {
    if (!latch.hasLeadership()) {
      return;
    }
    try {
      Term claimed = claimEpoch();
      if (!latch.hasLeadership()) {
        depose("lost the leader latch while raising the epoch");
        return;
      }
      term = claimed;
      LOG.info("Scheduler {} leads with epoch {}", id, claimed.epoch());
      listener.elected(claimed.epoch(), heldSince);
    } catch (Exception e) {
      LOG.error("Scheduler {} won the latch but could not raise the epoch; giving the lead up", id, e);
      depose("could not raise the epoch: " + e.getMessage());
      leaveElection();
    }
  }

  /** Raises the epoch by compare-and-set on the znode's version, so two claimants can never both succeed. */
  private Term claimEpoch() throws Exception {
    while (true) {
      Stat stat = new Stat();
      byte[] bytes;
      try {
        bytes = client.getData().storingStatIn(stat).forPath(epochPath);
      } catch (KeeperException.NoNodeException e) {
        try {
          client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).withACL(acl)
              .forPath(epochPath, encode(new LeaderEpochRecord(0L, "", 0L)));
        } catch (KeeperException.NodeExistsException raced) {
          // Another claimant created it first; read it again.
        }
        continue;
      }
      LeaderEpochRecord previous = decode(bytes);
      long next = previous.getEpoch() + 1;
      try {
        Stat written = client.setData().withVersion(stat.getVersion())
            .forPath(epochPath, encode(new LeaderEpochRecord(next, id, clock.getAsLong())));
        synchronized (this) {
          heldSince = runStart(previous, lastClaimed, heldSince, id);
          lastClaimed = next;
        }
        return new Term(next, written.getVersion());
      } catch (KeeperException.BadVersionException raced) {
        // Someone raised it between our read and write; read again.
      }
    }
  }

  /**
   * The first epoch of this instance's unbroken run of claims once it claims the one after {@code previous}: the run
   * goes on when {@code previous} is the epoch this very instance claimed last (same id, and the epoch it remembers:
   * a restarted process with the same id starts afresh), else it starts with the new epoch.
   */
  static long runStart(LeaderEpochRecord previous, long lastClaimed, long runStart, String id) {
    boolean mine = lastClaimed > 0 && previous.getEpoch() == lastClaimed
        && id.equals(String.valueOf(previous.getLeaderId()));
    return mine ? runStart : previous.getEpoch() + 1;
  }

  private void depose(String why) {
    if (term == null) {
      return;
    }
    term = null;
    LOG.warn("Scheduler {} stops leading: {}", id, why);
    listener.deposed(why);
  }

  private void connectionChanged(CuratorFramework c, ConnectionState state) {
    if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
      // Not through the events thread: scheduling must stop before anything queued there runs.
      Term t = term;
      term = null;
      if (t != null) {
        LOG.warn("Scheduler {} stops leading: ZooKeeper connection {}", id, state);
        events.execute(() -> listener.deposed("ZooKeeper connection " + state));
      }
    }
  }

  /** Leaves the election for good: another instance leads, and the ResourceManager decides what becomes of this one. */
  private void leaveElection() {
    try {
      latch.close(LeaderLatch.CloseMode.SILENT);
    } catch (IOException e) {
      LOG.warn("Closing the leader latch of {} failed", id, e);
    }
  }

  @Override
  public void close() {
    client.getConnectionStateListenable().removeListener(connection);
    try {
      latch.close(LeaderLatch.CloseMode.SILENT);
    } catch (IOException | IllegalStateException e) {
      LOG.debug("Leader latch of {} already closed", id, e);
    }
    term = null;
    BackgroundWriter.stop(events, LOG, "Leadership events");
  }

  static byte[] encode(LeaderEpochRecord r) throws IOException {
    ByteBuffer b = r.toByteBuffer();
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  static LeaderEpochRecord decode(byte[] bytes) throws IOException {
    try {
      return LeaderEpochRecord.fromByteBuffer(ByteBuffer.wrap(bytes));
    } catch (AvroRuntimeException e) {
      throw new IOException("not a leader epoch record: " + e.getMessage(), e);
    }
  }
}
