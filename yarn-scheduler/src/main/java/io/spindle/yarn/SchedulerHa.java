package io.spindle.yarn;

import io.spindle.core.engine.DurableState;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.RestoreReport;
import io.spindle.core.model.AppId;
import io.spindle.ha.Fence;
import io.spindle.ha.FencedException;
import io.spindle.ha.SchedulerLeadership;
import io.spindle.ha.SchedulerStateCodec;
import io.spindle.ha.SchedulerStateStore;
import io.spindle.ha.SchedulerZk;
import io.spindle.ha.SchedulerZkIdentity;
import io.spindle.ha.StaleTermException;
import io.spindle.journal.DecisionJournal;
import io.spindle.journal.RecordingLookup;
import java.io.Closeable;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
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
 *
 * <p>Taking over: the saved state is restored over what YARN recovered once every application it names has asked
 * again (or YARN's recovery wait has passed again), so that its reservations and reclaims meet their asks. The
 * take-over methods run on the scheduling thread only.
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
  private final long takeOverWaitMillis;
  private final LongSupplier clock;
  /** The previous leader's state, read and waiting for the applications it names to ask again. */
  private DurableState takeOverState;
  private long takeOverSince;
  /** Applications whose AM has called allocate() on this scheduler: their asks are in the inbox. */
  private final Set<ApplicationId> heardFrom = ConcurrentHashMap.newKeySet();
  private volatile RestoreReport takeOverReport;
  /** The engine's durable version last handed to the writer (-1: none yet). */
  private long savedVersion = -1;

  /** A state to write; encoded on the writer thread, so a superseded one is never encoded at all. */
  private record Pending(SchedulerLeadership.Term term, Supplier<byte[]> state) {}

  SchedulerHa(SchedulerZk zk, SchedulerZkIdentity identity, String instanceId, long takeOverWaitMillis,
      LongSupplier clock, Runnable wake, Consumer<String> fatal) {
    this.zk = zk;
    this.takeOverWaitMillis = takeOverWaitMillis;
    this.clock = clock;
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

  /** The application's AM has sent its asks to this scheduler. */
  void heardFrom(ApplicationId app) {
    heardFrom.add(app);
  }

  void forget(ApplicationId app) {
    heardFrom.remove(app);
  }

  /**
   * Whether the cycle about to run must wait for the take-over: the previous leader's state (read now if it is due)
   * names running applications ({@code running}) that have not asked this scheduler again, and YARN's recovery wait
   * has not passed again. Restored against asks that have not arrived yet, those reservations and reclaims would be
   * dropped as withdrawn.
   */
  boolean takeOverWaits(Predicate<ApplicationId> running) {
    if (takeOverState == null) {
      savedState().ifPresent(state -> {
        takeOverState = state;
        takeOverSince = clock.getAsLong();
      });
    }
    if (takeOverState == null || clock.getAsLong() - takeOverSince >= takeOverWaitMillis) {
      return false;
    }
    for (AppId app : takeOverState.requestingApps()) {
      ApplicationId id = YarnIds.application(app);
      if (running.test(id) && !heardFrom.contains(id)) {
        return true;
      }
    }
    return false;
  }

  /** The state to take over in this cycle, once; empty when there is none (any more). */
  Optional<DurableState> claimTakeOver() {
    Optional<DurableState> saved = Optional.ofNullable(takeOverState);
    takeOverState = null;
    return saved;
  }

  /** The previous leader's state, on this scheduler's first cycle as leader; empty then too if there is none. */
  private Optional<DurableState> savedState() {
    Optional<byte[]> bytes;
    try {
      bytes = takeOver();
    } catch (Exception ex) {
      LOG.warn("Cannot read the previous leader's state yet (retried next cycle): {}", ex.getMessage());
      return Optional.empty();
    }
    if (bytes.isEmpty()) {
      return Optional.empty();
    }
    try {
      SchedulerStateCodec.Snapshot snapshot = SchedulerStateCodec.decode(bytes.get());
      LOG.info("Taking over the scheduler state saved in epoch {}", snapshot.leaderEpoch());
      return Optional.of(snapshot.state());
    } catch (IllegalArgumentException ex) {
      LOG.error("The saved scheduler state is unreadable; scheduling without it (gangs regroup as single "
          + "containers, open checkpoint notices are planned again): {}", ex.getMessage());
      return Optional.empty();
    }
  }

  /**
   * Restores the previous leader's state over what YARN recovered, journaled either way. Containers the restored
   * notices name join their applications' preemption contracts at once (the engine re-issues the notices with their
   * ids and deadlines next cycle), so they are not signalled a second time. Called holding the engine's lock.
   */
  void restore(DurableState state, Engine engine, DecisionJournal journal, long nowMillis, ContainerBook book,
      PreemptionNotices preemptions) {
    RecordingLookup lookup = new RecordingLookup(name -> {
      try {
        return book.allocation(ContainerId.fromString(name));
      } catch (IllegalArgumentException notAContainer) {
        return null;
      }
    });
    try {
      RestoreReport report = engine.restore(state, lookup);
      journal.restored(nowMillis, state, lookup.found(), null);
      LOG.info("Spindle took over: {}", report);
      takeOverReport = report;
    } catch (RuntimeException ex) {
      journal.restored(nowMillis, state, lookup.found(), ex.toString());
      LOG.error("The saved scheduler state cannot be restored; scheduling without it: {}", ex.getMessage());
      return;
    }
    for (DurableState.ReclaimState reclaim : state.reclaims()) {
      for (DurableState.NoticeState n : reclaim.notices()) {
        Set<ContainerId> ids = new HashSet<>();
        for (DurableState.NoticeContainer c : n.containers()) {
          if (!c.ended()) {
            ContainerId id = ContainerId.fromString(c.name());
            if (book.isBound(id)) {
              ids.add(id);
            }
          }
        }
        if (!ids.isEmpty()) {
          preemptions.announce(YarnIds.application(n.appId()), ids);
        }
      }
    }
  }

  /** What this scheduler took over from the previous leader's saved state; empty until it has (or if none). */
  Optional<RestoreReport> takeOverReport() {
    return Optional.ofNullable(takeOverReport);
  }

  /**
   * Hands the engine's durable state to the writer when it changed, fenced by the term it was decided in. The value
   * is immutable; the writer encodes it. Called holding the engine's lock.
   */
  void saveIfChanged(SchedulerLeadership.Term term, Engine engine, ContainerBook book) {
    long version = engine.durableVersion();
    if (version == savedVersion) {
      return;
    }
    savedVersion = version;
    DurableState state = engine.durableState(allocation -> book.container(allocation).map(ContainerId::toString)
        .orElse(null));
    save(term, () -> SchedulerStateCodec.encode(state, term.epoch()));
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
