package io.spindle.yarn;

import io.spindle.ha.Fence;
import io.spindle.ha.FencedException;
import io.spindle.ha.SchedulerLeadership;
import io.spindle.ha.SchedulerStateStore;
import io.spindle.ha.SchedulerZk;
import io.spindle.ha.SchedulerZkIdentity;
import io.spindle.ha.StaleTermException;
import java.io.Closeable;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.zookeeper.data.ACL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this scheduler may schedule, and the durable state it leaves for the next leader. Schedules only while it
 * leads ({@link SchedulerLeadership}); the first cycle after its first election loads what the previous leader
 * saved; after that, every change of the engine's durable state is written, fenced by the term it was decided in.
 *
 * <p>When another scheduler has led meanwhile — a refused write, or a re-election whose epoch skipped — this one's
 * engine is stale and must never schedule again: {@code fatal} is told (the ResourceManager goes to standby, or
 * stops when not in an HA pair). A ZooKeeper blip with nobody else leading only pauses scheduling.
 */
final class SchedulerHa implements SchedulerLeadership.Listener, Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(SchedulerHa.class);

  private final SchedulerZk zk;
  private final List<ACL> acl;
  private final String instanceId;
  private final Runnable wake;
  private final Consumer<String> fatal;
  private final ScheduledExecutorService writer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "spindle-state-writer");
    t.setDaemon(true);
    return t;
  });
  /** The latest state to write with the term it was decided in; older unwritten ones are superseded. */
  private final AtomicReference<Pending> pending = new AtomicReference<>();
  /** A state refused as stale while this scheduler held no term: written under the term of its next election. */
  private final AtomicReference<Pending> unwritten = new AtomicReference<>();
  private SchedulerLeadership leadership;
  private SchedulerStateStore store;
  private volatile long lastEpoch;
  private volatile boolean restoreDue;
  private volatile boolean dead;

  /** A state to write; encoded on the writer thread, so a superseded one is never encoded at all. */
  private record Pending(SchedulerLeadership.Term term, Supplier<byte[]> state) {}

  SchedulerHa(SchedulerZk zk, SchedulerZkIdentity identity, String instanceId, Runnable wake,
      Consumer<String> fatal) {
    this.zk = zk;
    this.instanceId = instanceId;
    this.wake = wake;
    this.fatal = fatal;
    this.acl = identity.schedulerOnlyAcl();
    if (identity.generated()) {
      LOG.warn("Spindle's leader and state znodes are world-writable because no ZooKeeper identity is configured "
          + "({}); set it to the same value on every ResourceManager", SchedulerZkIdentity.ZK_AUTH);
    }
  }

  void start() throws Exception {
    leadership = SchedulerLeadership.start(zk.client(), zk.settings().root(), instanceId, acl, this,
        System::currentTimeMillis);
    store = new SchedulerStateStore(zk.client(), zk.settings().root(), leadership, acl);
  }

  /**
   * The fence of the scheduler's other ZooKeeper writes (checkpoint notices, desired MIG layouts): checked when each
   * is written, so one decided before a deposition but written after it is refused.
   */
  Fence fence() {
    return () -> {
      if (dead || leadership == null) {
        throw new FencedException("scheduler " + instanceId + " does not lead");
      }
      return leadership.currentFence().check();
    };
  }

  /** Whether the cycle about to run may schedule; {@code null} term when not. */
  SchedulerLeadership.Term term() {
    return dead || leadership == null ? null : leadership.term();
  }

  /**
   * The state the previous leader saved, once, on the first cycle after this scheduler's first election; empty
   * otherwise (also when no leader ever saved any).
   */
  Optional<byte[]> takeOver() throws Exception {
    if (!restoreDue) {
      return Optional.empty();
    }
    Optional<byte[]> saved = store.load(); // A failed read leaves the take-over due for the next cycle.
    restoreDue = false;
    return saved;
  }

  /**
   * Queues {@code state} to be written under {@code term}; only the latest queued one is encoded and written, off the
   * scheduling thread.
   */
  void save(SchedulerLeadership.Term term, Supplier<byte[]> state) {
    pending.set(new Pending(term, state));
    writer.execute(this::writeLatest);
  }

  private void writeLatest() {
    Pending p = pending.getAndSet(null);
    if (p == null) {
      return;
    }
    byte[] bytes;
    try {
      bytes = p.state().get();
    } catch (RuntimeException e) {
      // Deterministic: retrying would fail the same way. The next change brings a new state.
      LOG.error("Cannot encode the scheduler state; this version is not saved", e);
      return;
    }
    try {
      store.write(p.term(), bytes);
    } catch (FencedException e) {
      die(e.getMessage()); // Someone else leads: what this scheduler decided meanwhile must not stand.
    } catch (StaleTermException e) {
      // Re-elected meanwhile with nobody else leading (FaultMatrixTest's quorum loss, docs/reliability.md): the state
      // still stands, under the newer term.
      LOG.info("{}; it is written again under the current term", e.getMessage());
      unwritten.set(p);
      writeUnwritten();
    } catch (Exception e) {
      // Retried unless a newer state came meanwhile; if leadership was lost, the retry is refused by the fence.
      LOG.warn("Writing the scheduler state failed (retrying in 1 s): {}", e.getMessage());
      if (pending.compareAndSet(null, p)) {
        writer.schedule(this::writeLatest, 1, TimeUnit.SECONDS);
      }
    }
  }

  /** Writes a state refused as stale under the current term, unless a newer one is queued already. */
  private void writeUnwritten() {
    SchedulerLeadership.Term now = term();
    Pending p = unwritten.get();
    if (now == null || p == null || now.epoch() <= p.term().epoch()) {
      return; // Kept until this scheduler holds the newer term.
    }
    if (unwritten.compareAndSet(p, null) && pending.compareAndSet(null, new Pending(now, p.state()))) {
      writer.execute(this::writeLatest);
    }
  }

  @Override
  public void elected(long epoch, long heldSince) {
    long before = lastEpoch;
    lastEpoch = epoch;
    if (before == 0) {
      restoreDue = true;
      LOG.info("Scheduler {} leads (epoch {}); it takes over the saved state in its first cycle", instanceId, epoch);
    } else if (heldSince > before + 1) {
      die("another scheduler led (epochs " + (before + 1) + " to " + (heldSince - 1) + ") while " + instanceId
          + " was cut off from ZooKeeper; its view is stale");
      return;
    } else {
      // Epochs between `before` and `epoch` (a claim whose latch was lost before it was announced) were all ours.
      LOG.info("Scheduler {} leads again (epoch {}); nobody led meanwhile, so it resumes", instanceId, epoch);
      writeUnwritten();
    }
    wake.run();
  }

  @Override
  public void deposed(String why) {
    if (why.startsWith("fenced")) {
      die(why);
    } else {
      LOG.warn("Scheduler {} pauses scheduling: {}", instanceId, why);
    }
  }

  private void die(String why) {
    dead = true;
    LOG.error("Scheduler {} must not schedule again: {}", instanceId, why);
    fatal.accept(why);
  }

  @Override
  public void close() {
    writer.shutdown();
    try {
      writer.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (leadership != null) {
      leadership.close();
    }
  }
}
