package io.spindle.bench.soak;

import io.spindle.core.engine.RestoreReport;
import io.spindle.local.RmHaPair;
import io.spindle.yarn.SpindleScheduler;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntSupplier;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;

/**
 * The ResourceManagers' times as active, and the failovers between them: with {@code --failovers=N}, the k-th
 * failover starts once k/(N+1) of the applications have ended (the load then in its steady state), a launched
 * container runs and containers are asked for, on a thread of its own while the load goes on (see
 * {@link SoakOptions.FailoverMode} for how). Each is timed: the old one stood down, the new one active, every
 * NodeManager back with the new one's Spindle, Spindle's take-over of the previous leader's state, and the first
 * container the new one created that an AM received.
 *
 * <p>It also keeps the ResourceManagers' own account of containers. Two ResourceManagers in one JVM share YARN's
 * queue metrics registry (one JVM-wide map by queue name), so the new active one's root queue metrics may start where
 * the old one's stopped: each time as active is read as the change of its own scheduler's root metrics from just
 * before it became active to when it stood down (or the drain). What it held when it stood down is read from its
 * scheduler's nodes: the containers nobody launched die with it, and the launched ones come back to the next one
 * from the NodeManagers (Spindle counts those, {@code spindle.recovered.containers}).
 */
final class SoakFailovers {

  private static final long WAIT_MS = 180_000;
  private static final long LAUNCHED_WAIT_MS = 30_000;
  private static final String RECOVERED = "spindle.recovered.containers";

  private final SoakCluster cluster;
  private final SoakOptions o;
  private final PrintStream out;
  private final SoakContext ctx;
  private final IntSupplier ended;
  private final IntSupplier inFlight;
  /** Guarded by this. */
  private final List<Tenure> tenures = new ArrayList<>();
  private final List<Done> done = new ArrayList<>();
  private final List<String> problems = new ArrayList<>();
  private Thread thread;
  private volatile boolean stopping;

  /** One ResourceManager's time as active: its scheduler and its root queue metrics at the start and the end. */
  private static final class Tenure {
    /** Let go once it has stood down: a stopped scheduler still holds everything it had, a heap of its own. */
    SpindleScheduler scheduler;
    /** The epoch of its ResourceManager, known once it is active. */
    long epoch;
    final Reading start;
    Reading end;
    /** Containers it held when it stood down. */
    Set<ContainerId> held = Set.of();
    long recovered;

    /** Reads the start: before the ResourceManager becomes active, so before it can count anything. */
    Tenure(SpindleScheduler scheduler) {
      this.scheduler = scheduler;
      this.start = Reading.of(scheduler.getRootQueueMetrics());
    }

    void end() {
      end = Reading.of(scheduler.getRootQueueMetrics());
      recovered = scheduler.metrics().registry().meter(RECOVERED).getCount();
    }
  }

  private record Reading(long allocated, long aggregateAllocated, long aggregateReleased) {
    static Reading of(QueueMetrics m) {
      return new Reading(m.getAllocatedContainers(), m.getAggregateAllocatedContainers(),
          m.getAggegatedReleasedContainers());
    }
  }

  /** A failover as it was made, the first allocation after it read at the end. */
  private record Done(int index, SoakOptions.FailoverMode mode, String from, String to, long epochBefore,
      long epochAfter, long startMs, int atSubmitted, int inFlight, long stepDownMs, long activeMs, long nodesBackMs,
      long takenOverMs, int heldAtStepDown, String takeOver) {}

  SoakFailovers(SoakCluster cluster, SoakOptions o, PrintStream out, SoakContext ctx, IntSupplier ended,
      IntSupplier inFlight) {
    this.cluster = cluster;
    this.o = o;
    this.out = out;
    this.ctx = ctx;
    this.ended = ended;
    this.inFlight = inFlight;
    Tenure first = new Tenure(cluster.scheduler());
    first.epoch = cluster.resourceManager().getRMContext().getEpoch();
    tenures.add(first);
  }

  /** Starts the thread that fails over as the submissions pass each mark; nothing to do without failovers. */
  void start() {
    if (o.failovers() == 0) {
      return;
    }
    thread = new Thread(this::run, "soak-failovers");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    for (int k = 1; k <= o.failovers() && !stopping; k++) {
      long mark = (long) o.apps() * k / (o.failovers() + 1);
      while (ended.getAsInt() < mark && !stopping) {
        sleep(50);
      }
      // With a launched container running, so the next one has one to recover, and containers asked for and not yet
      // allocated, so it has asks to take over: if both come within a while.
      long until = System.nanoTime() + LAUNCHED_WAIT_MS * 1_000_000;
      while ((ctx.launchedRunning.get() == 0 || !asksPending()) && System.nanoTime() < until && !stopping) {
        sleep(20);
      }
      if (stopping) {
        return;
      }
      try {
        failOver(k);
      } catch (Exception | Error e) {
        problem("failover " + k + " failed: " + e);
        cluster.activeIs(RmHaPair.activeIndex(cluster.yarn())); // Whichever is active, if one is, for the checks.
        return;
      }
    }
  }

  /** Lets a failover under way finish; those still to come do not happen. */
  void stop() throws InterruptedException {
    stopping = true;
    if (thread != null) {
      thread.join();
    }
  }

  private void failOver(int k) throws Exception {
    SoakOptions.FailoverMode mode = o.failoverMode().of(k);
    int from = cluster.activeIndex();
    int to = 1 - from;
    ResourceManager oldRm = cluster.resourceManager(from);
    ResourceManager newRm = cluster.resourceManager(to);
    SpindleScheduler newScheduler = (SpindleScheduler) newRm.getResourceScheduler();
    int atSubmitted = (int) ctx.submissions.total();
    int flying = inFlight.getAsInt();
    long start = System.nanoTime();
    long startMs = System.currentTimeMillis();
    out.printf(Locale.ROOT, "Failover %d (%s): %s -> %s with %d applications in flight ...%n", k,
        mode.name().toLowerCase(Locale.ROOT), RmHaPair.IDS.get(from), RmHaPair.IDS.get(to), flying);
    ctx.failoverBegins();
    cluster.activeIs(-1);
    if (mode == SoakOptions.FailoverMode.STOP) {
      RmHaPair.stop(cluster.yarn(), from);
    } else {
      RmHaPair.toStandby(cluster.yarn(), from);
    }
    long down = System.nanoTime();
    Tenure old;
    synchronized (this) {
      old = tenures.get(tenures.size() - 1);
    }
    old.end();
    old.held = heldBy(old.scheduler);
    old.scheduler = null;
    // Before the next one can hand out what the old one's unlaunched containers held.
    ctx.failedOver(oldRm.getRMContext().getEpoch());
    Tenure next = new Tenure(newScheduler);
    RmHaPair.toActive(cluster.yarn(), to);
    long active = System.nanoTime();
    long epoch = newRm.getRMContext().getEpoch();
    next.epoch = epoch;
    synchronized (this) {
      tenures.add(next);
    }
    cluster.activeIs(to);
    long nodesBack = waitFor(() -> newScheduler.getNumClusterNodes() >= cluster.nodes());
    long tookOver = waitFor(() -> newScheduler.takeOverReport().isPresent());
    String report = newScheduler.takeOverReport().map(SoakFailovers::describe).orElse("none");
    if (nodesBack < 0) {
      problem("failover " + k + ": " + newScheduler.getNumClusterNodes() + " of " + cluster.nodes()
          + " NodeManagers back with " + RmHaPair.IDS.get(to) + " within " + WAIT_MS / 1000 + " s");
    }
    if (tookOver < 0) {
      problem("failover " + k + ": " + RmHaPair.IDS.get(to) + "'s Spindle did not take over within "
          + WAIT_MS / 1000 + " s");
    }
    ctx.failoverEnds();
    if (mode == SoakOptions.FailoverMode.STOP) {
      RmHaPair.restartStandby(cluster.yarn(), from);
    }
    Done d = new Done(k, mode, RmHaPair.IDS.get(from), RmHaPair.IDS.get(to), old.epoch, epoch, startMs, atSubmitted,
        flying, ms(down - start), ms(active - start), nodesBack < 0 ? -1 : ms(nodesBack - start),
        tookOver < 0 ? -1 : ms(tookOver - start), old.held.size(), report);
    synchronized (this) {
      done.add(d);
    }
    out.printf(Locale.ROOT, "Failover %d done: stood down %.1f s, %s active %.1f s, NodeManagers back %.1f s, Spindle"
        + " took over %.1f s after it began (%s); the old one held %d containers%n", k, d.stepDownMs() / 1e3,
        d.to(), d.activeMs() / 1e3, d.nodesBackMs() / 1e3, d.takenOverMs() / 1e3, report, d.heldAtStepDown());
  }

  private boolean asksPending() {
    SpindleScheduler s = cluster.scheduler();
    return s != null && s.status().apps().stream().flatMap(a -> a.requests().stream())
        .anyMatch(r -> r.outstanding() > 0);
  }

  private static String describe(RestoreReport r) {
    return r.units() + " units, " + r.reservations() + " reservations, " + r.notices() + " notices, "
        + r.dropped().size() + " entries dropped";
  }

  /** The containers a (stopped) scheduler still held on its nodes. */
  private static Set<ContainerId> heldBy(SpindleScheduler s) {
    Set<ContainerId> out = new HashSet<>();
    for (FiCaSchedulerNode n : s.getNodeTracker().getAllNodes()) {
      for (RMContainer c : n.getCopiedListOfRunningContainers()) {
        out.add(c.getContainerId());
      }
    }
    return out;
  }

  /** Ends the last tenure (the drain is over). */
  synchronized void finish() {
    tenures.get(tenures.size() - 1).end();
  }

  /** The last tenure's change of the root queue's allocated containers so far: 0 once drained. */
  synchronized long rootAllocatedNow() {
    Tenure t = tenures.get(tenures.size() - 1);
    return t.scheduler.getRootQueueMetrics().getAllocatedContainers() - t.start.allocated();
  }

  /** The ResourceManagers' account over all tenures; call after {@link #finish}. */
  synchronized SoakResult.RmAccount account(ContainerLedger ledger) {
    long allocated = 0;
    long released = 0;
    long recovered = 0;
    long held = 0;
    long undelivered = 0;
    for (Tenure t : tenures) {
      allocated += t.end.aggregateAllocated() - t.start.aggregateAllocated();
      released += t.end.aggregateReleased() - t.start.aggregateReleased();
      recovered += t.recovered;
      held += t.held.size();
      for (ContainerId id : t.held) {
        undelivered += ledger.seen(id) ? 0 : 1;
      }
    }
    return new SoakResult.RmAccount(allocated - recovered, released - recovered + held, recovered, held,
        undelivered);
  }

  /** Each failover with the first allocation after it, as the ledger saw it. */
  synchronized List<SoakResult.Failover> failovers(ContainerLedger ledger) {
    List<SoakResult.Failover> out = new ArrayList<>();
    for (Done d : done) {
      Optional<long[]> first = ledger.first(d.epochAfter());
      Tenure after = null;
      for (Tenure t : tenures) {
        if (t.epoch == d.epochAfter()) {
          after = t;
        }
      }
      out.add(new SoakResult.Failover(d.index(), d.mode().name().toLowerCase(Locale.ROOT), d.from(), d.to(),
          d.epochBefore(), d.epochAfter(), d.atSubmitted(), d.inFlight(), d.stepDownMs(), d.activeMs(),
          d.nodesBackMs(), d.takenOverMs(), first.map(f -> f[0] - d.startMs()).orElse(-1L),
          first.map(f -> f[1] - d.startMs()).orElse(-1L), d.heldAtStepDown(),
          after == null || after.end == null ? -1 : after.recovered, d.takeOver()));
    }
    return out;
  }

  synchronized List<String> problems() {
    return List.copyOf(problems);
  }

  private synchronized void problem(String p) {
    problems.add(p);
    out.println("Failover problem: " + p);
  }

  private interface Condition {
    boolean holds();
  }

  /** Polls until {@code c} holds: the {@link System#nanoTime()} it did, or -1 after {@link #WAIT_MS}. */
  private static long waitFor(Condition c) {
    long deadline = System.nanoTime() + WAIT_MS * 1_000_000;
    while (System.nanoTime() < deadline) {
      if (c.holds()) {
        return System.nanoTime();
      }
      sleep(20);
    }
    return -1;
  }

  private static long ms(long nanos) {
    return nanos / 1_000_000;
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
