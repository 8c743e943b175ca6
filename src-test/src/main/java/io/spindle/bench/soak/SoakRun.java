package io.spindle.bench.soak;

import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import io.spindle.bench.soak.SoakJob.Kind;
import io.spindle.core.engine.EngineStatus;
import io.spindle.yarn.SpindleScheduler;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;

/**
 * Runs the soak: starts the cluster, submits the mix in bursts (never more than {@code --max-in-flight} applications
 * between submission and end), waits for the drain, then checks what YARN and Spindle hold and measures.
 */
public final class SoakRun {

  private static final long PROGRESS_EVERY_MS = 10_000;
  /** How long a launched container runs when the ResourceManager fails over (see {@link SoakContext}). */
  static final long LAUNCH_SECONDS_WITH_FAILOVERS = 10;
  private static final EnumSet<YarnApplicationState> UNENDED = EnumSet.of(YarnApplicationState.NEW,
      YarnApplicationState.NEW_SAVING, YarnApplicationState.SUBMITTED, YarnApplicationState.ACCEPTED,
      YarnApplicationState.RUNNING);

  private final SoakOptions o;
  private final PrintStream out;
  private final List<SoakJob> jobs;
  private final AppDriver[] drivers;
  private final Semaphore room;
  private final AtomicInteger ended = new AtomicInteger();
  private final HeapProbe heap;
  private SoakCluster cluster;
  private SoakContext ctx;
  private SoakFailovers failovers;
  private long t0;
  private long lastProgress;
  private int nextHeapSample = 1;
  private double cycleMaxSeenMs;
  private long throttledNanos;
  private double loadAtStart;

  private SoakRun(SoakOptions o, PrintStream out) {
    this.o = o;
    this.out = out;
    this.jobs = SoakMix.jobs(o);
    this.drivers = new AppDriver[jobs.size()];
    this.room = new Semaphore(o.maxInFlight());
    this.heap = new HeapProbe(o.histograms() ? o.workdir().toAbsolutePath() : null);
  }

  public static SoakResult run(SoakOptions o, PrintStream out) throws Exception {
    return new SoakRun(o, out).run();
  }

  private SoakResult run() throws Exception {
    out.printf(Locale.ROOT, "Soak: starting %d NodeManagers (JDK %s, %d CPUs, max heap %d MB) ...%n", o.nodes(),
        System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
        Runtime.getRuntime().maxMemory() >> 20);
    long startingAt = System.nanoTime();
    try (SoakCluster c = SoakCluster.start(o, out)) {
      cluster = c;
      out.printf(Locale.ROOT, "Soak: cluster up in %.1f s; log %s%n", (System.nanoTime() - startingAt) / 1e9,
          c.logFile());
      Map<String, UserGroupInformation> users = new LinkedHashMap<>();
      Map<String, YarnClient> clients = new LinkedHashMap<>();
      Configuration conf = c.clientConf();
      for (String user : SoakMix.USERS) {
        UserGroupInformation ugi = UserGroupInformation.createRemoteUser(user);
        users.put(user, ugi);
        clients.put(user, ugi.doAs((PrivilegedExceptionAction<YarnClient>) () -> {
          YarnClient y = YarnClient.createYarnClient();
          y.init(conf);
          y.start();
          return y;
        }));
      }
      ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(o.threads(), r -> {
        Thread t = new Thread(r, "soak-am");
        t.setDaemon(true);
        return t;
      });
      try (SlotAudit audit = SlotAudit.start(c::scheduler)) {
        YarnClient any = clients.values().iterator().next();
        ContainerLedger ledger = new ContainerLedger(capacities(any));
        heap.sample("start", 0);
        loadAtStart = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        t0 = System.nanoTime();
        lastProgress = t0;
        ctx = new SoakContext(pool, conf, users, clients, ledger, new Rates(t0), new Rates(t0), o.heartbeatMs(),
            c.zk(), c.checkpointPaths(), o.failovers() > 0 ? LAUNCH_SECONDS_WITH_FAILOVERS : 0, d -> {
              ended.incrementAndGet();
              room.release();
            });
        failovers = new SoakFailovers(c, o, out, ctx, ended::get, () -> (int) ctx.submissions.total() - ended.get());
        failovers.start();
        submitInBursts();
        long lastSubmit = System.nanoTime();
        long deadline = lastSubmit + TimeUnit.SECONDS.toNanos(o.drainTimeoutSeconds());
        while (ended.get() < drivers.length && System.nanoTime() < deadline) {
          Thread.sleep(100);
          housekeeping();
        }
        // A failover under way when the last application ends is let finish; one still to come never happens.
        failovers.stop();
        long loadEnd = System.nanoTime();
        CycleLatencyReading cycles = cycleLatency(c.scheduler());
        List<String> unendedInRm = unendedInRm(clients);
        if (ended.get() < drivers.length) {
          ctx.abort();
          // Each driver stops at its next step; one blocked in an RPC that never returns stays without an outcome
          // and is reported stuck with the rest.
          long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
          while (ended.get() < drivers.length && System.nanoTime() < giveUp) {
            Thread.sleep(50);
          }
        }
        pool.shutdown();
        pool.awaitTermination(30, TimeUnit.SECONDS);
        List<String> stuck = describeAndKillStuck(c.scheduler(), clients);
        SoakResult.Drained drained = awaitDrained(c, ledger);
        heap.sample("end", ended.get());
        audit.close();
        failovers.finish();
        SoakResult result = result(ledger, audit, drained, cycles, unendedInRm, stuck, loadEnd);
        for (YarnClient y : clients.values()) {
          y.stop();
        }
        return result;
      } finally {
        if (failovers != null) {
          failovers.stop();
        }
        pool.shutdownNow();
      }
    }
  }

  /** The JVM and the machine's load: on a shared machine the rates depend on what else runs. */
  private String machine() {
    return String.format(Locale.ROOT, "JDK %s, %d CPUs, max heap %d MB; load average %.1f at the start, %.1f at the"
        + " end", System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
        Runtime.getRuntime().maxMemory() >> 20, loadAtStart,
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
  }

  private Map<NodeId, Resource> capacities(YarnClient yarn) throws Exception {
    Map<NodeId, Resource> out = new LinkedHashMap<>();
    for (NodeReport n : yarn.getNodeReports(NodeState.RUNNING)) {
      out.put(n.getNodeId(), n.getCapability());
    }
    if (out.size() != o.nodes()) {
      throw new IllegalStateException(out.size() + " of " + o.nodes() + " NodeManagers running");
    }
    return out;
  }

  private void submitInBursts() throws InterruptedException {
    int next = 0;
    while (next < drivers.length) {
      long burstStart = System.nanoTime();
      int end = Math.min(drivers.length, next + o.burst());
      for (; next < end; next++) {
        if (!room.tryAcquire()) {
          long waitFrom = System.nanoTime();
          while (!room.tryAcquire(100, TimeUnit.MILLISECONDS)) {
            housekeeping();
          }
          throttledNanos += System.nanoTime() - waitFrom;
        }
        drivers[next] = new AppDriver(jobs.get(next), ctx);
        drivers[next].start();
      }
      housekeeping();
      long wake = burstStart + TimeUnit.MILLISECONDS.toNanos(o.burstIntervalMs());
      while (next < drivers.length && System.nanoTime() < wake) {
        Thread.sleep(Math.max(1, Math.min(100, (wake - System.nanoTime()) / 1_000_000)));
        housekeeping();
      }
    }
  }

  /** Progress every 10 s, heap samples as the ended count passes each share of the run, the highest cycle max. */
  private void housekeeping() {
    int done = ended.get();
    if (nextHeapSample <= o.heapSamples() && done >= (long) drivers.length * nextHeapSample / (o.heapSamples() + 1)) {
      heap.sample("mid" + nextHeapSample, done);
      nextHeapSample++;
    }
    SpindleScheduler active = cluster.scheduler();
    if (active == null) {
      return; // A failover is under way.
    }
    cycleMaxSeenMs = Math.max(cycleMaxSeenMs, cycleTimer(active).getSnapshot().getMax() / 1e6);
    long now = System.nanoTime();
    if (now - lastProgress >= PROGRESS_EVERY_MS * 1_000_000) {
      lastProgress = now;
      EngineStatus s = active.status();
      long pending = s.apps().stream().flatMap(a -> a.requests().stream()).mapToLong(r -> r.outstanding()).sum();
      int submitted = 0;
      for (AppDriver d : drivers) {
        submitted += d != null && d.submitted() ? 1 : 0;
      }
      out.printf(Locale.ROOT, "[%6.1fs] submitted %,d/%,d, ended %,d (in flight %d); containers received %,d;"
          + " Spindle: %d apps, %d running, %d pending containers%n", (now - t0) / 1e9, submitted, drivers.length,
          done, submitted - done, ctx.allocations.total(), s.apps().size(), s.containers().size(), pending);
    }
  }

  private static Timer cycleTimer(SpindleScheduler s) {
    return s.metrics().registry().timer("spindle.cycle.seconds");
  }

  private record CycleLatencyReading(long count, Snapshot snapshot) {}

  private static CycleLatencyReading cycleLatency(SpindleScheduler s) {
    Timer t = cycleTimer(s);
    return new CycleLatencyReading(t.getCount(), t.getSnapshot());
  }

  private List<String> unendedInRm(Map<String, YarnClient> clients) throws Exception {
    List<String> out = new ArrayList<>();
    for (YarnClient y : clients.values()) {
      for (ApplicationReport r : y.getApplications(Set.of(AppDriver.APP_TYPE), UNENDED)) {
        out.add(r.getApplicationId() + " " + r.getYarnApplicationState() + " (" + r.getUser() + ", "
            + r.getQueue() + ")");
      }
      break; // Without ACLs every user sees every application.
    }
    return out.stream().distinct().toList();
  }

  /** Each stuck application with its phase and Spindle's own explanation; then kills it so the cluster drains. */
  private List<String> describeAndKillStuck(SpindleScheduler scheduler, Map<String, YarnClient> clients) {
    List<String> out = new ArrayList<>();
    for (AppDriver d : drivers) {
      if (outcome(d) != AppDriver.Outcome.STUCK || d.appId() == null) {
        continue;
      }
      String why;
      try {
        why = scheduler.explain(d.appId()).text();
      } catch (RuntimeException e) {
        why = "(no explanation: " + e + ")";
      }
      out.add(d.appId() + " " + d.job.kind() + " in " + d.job.queue() + ", stuck in "
          + (d.stuckIn() != null ? d.stuckIn() : d.phase() + " (its step never returned)") + ": " + why);
      try {
        clients.get(d.job.user()).killApplication(d.appId());
      } catch (Exception e) {
        out.add(d.appId() + ": could not kill: " + e);
      }
    }
    return out;
  }

  /** Waits up to 30 s for YARN's, Spindle's and ZooKeeper's accounts to reach zero, and reads them. */
  private SoakResult.Drained awaitDrained(SoakCluster c, ContainerLedger ledger) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    SoakResult.Drained d = drained(c, ledger);
    while (!d.clean() && System.nanoTime() < deadline) {
      Thread.sleep(200);
      d = drained(c, ledger);
    }
    return d;
  }

  private SoakResult.Drained drained(SoakCluster c, ContainerLedger ledger) throws Exception {
    SpindleScheduler s = c.scheduler();
    long onNodes = 0;
    for (RMNode n : c.resourceManager().getRMContext().getRMNodes().values()) {
      SchedulerNode sn = s.getSchedulerNode(n.getNodeID());
      onNodes += sn == null ? 0 : sn.getNumContainers();
    }
    EngineStatus status = s.status();
    long pending = status.apps().stream().flatMap(a -> a.requests().stream()).mapToLong(r -> r.outstanding()).sum();
    return new SoakResult.Drained(onNodes, failovers.rootAllocatedNow(), status.containers().size(),
        status.apps().size(), pending, ledger.stillLive(), c.checkpointApps());
  }

  /** A driver still without an outcome after the abort is stuck in an RPC: counted stuck. */
  private static AppDriver.Outcome outcome(AppDriver d) {
    return d.outcome() == null ? AppDriver.Outcome.STUCK : d.outcome();
  }

  private SoakResult result(ContainerLedger ledger, SlotAudit audit, SoakResult.Drained drained,
      CycleLatencyReading cycles, List<String> unendedInRm, List<String> stuck, long loadEnd) {
    int submitted = 0;
    int finished = 0;
    int failed = 0;
    int lost = 0;
    int stuckCount = 0;
    long received = 0;
    long completed = 0;
    long excess = 0;
    long unknown = 0;
    long duplicate = 0;
    long voided = 0;
    long repeated = 0;
    long voidedThenCompleted = 0;
    long asksRestarted = 0;
    int stepsRetried = 0;
    int unregisteredAgain = 0;
    int launched = 0;
    int launchFailures = 0;
    int nonZero = 0;
    long firstSubmit = Long.MAX_VALUE;
    long lastSubmit = 0;
    long firstAsk = Long.MAX_VALUE;
    long lastContainer = 0;
    Map<Kind, List<Long>> latencies = new EnumMap<>(Kind.class);
    List<Long> all = new ArrayList<>();
    List<Long> receivedAll = new ArrayList<>();
    List<Long> znodesReady = new ArrayList<>();
    int znodesLate = 0;
    List<Long> submitCalls = new ArrayList<>();
    List<String> failures = new ArrayList<>();
    List<String> retriedExamples = new ArrayList<>();
    for (AppDriver d : drivers) {
      if (d.submitted()) {
        submitted++;
        firstSubmit = Math.min(firstSubmit, d.submitStartNanos());
        lastSubmit = Math.max(lastSubmit, d.submitEndNanos());
        submitCalls.add(d.submitNanos());
      }
      AppDriver.Outcome outcome = outcome(d);
      switch (outcome) {
        case FINISHED -> finished++;
        case FAILED -> failed++;
        case LOST -> lost++;
        case STUCK -> stuckCount++;
        default -> throw new IllegalStateException("unknown outcome " + outcome);
      }
      if (outcome == AppDriver.Outcome.FAILED || outcome == AppDriver.Outcome.LOST) {
        failures.add(d.appId() + " " + d.job.kind() + ": " + d.outcome() + ": " + d.problem());
      }
      received += d.containersReceived();
      completed += d.containersCompleted();
      excess += d.excess();
      unknown += d.unknownCompletions();
      duplicate += d.duplicateCompletions();
      voided += d.voided();
      repeated += d.repeatedCompletions();
      voidedThenCompleted += d.voidedThenCompleted();
      asksRestarted += d.asksRestarted();
      stepsRetried += d.retriesAfterFailover();
      unregisteredAgain += d.unregisteredAgain();
      if (d.retried() != null && retriedExamples.size() < 10) {
        retriedExamples.add(d.appId() + " " + d.retried());
      }
      if (d.job.launch() && outcome != AppDriver.Outcome.STUCK && d.containersReceived() > 0) {
        if (d.launched()) {
          launched++;
          nonZero += d.launchedExit() == 0 ? 0 : 1;
        } else {
          launchFailures++;
          failures.add(d.appId() + ": " + d.problem());
        }
      }
      if (d.znodesReadyMs() > 0) {
        znodesReady.add(d.znodesReadyMs());
      } else if (d.znodesReadyMs() < 0) {
        znodesLate++;
        failures.add(d.appId() + ": " + d.problem());
      }
      if (d.askedNanos() > 0) {
        firstAsk = Math.min(firstAsk, d.askedNanos());
      }
      long latency = d.schedulingLatencyMs();
      if (latency >= 0) {
        lastContainer = Math.max(lastContainer, d.allReceivedNanos());
        latencies.computeIfAbsent(d.job.kind(), k -> new ArrayList<>()).add(latency);
        all.add(latency);
        receivedAll.add(d.receiveLatencyMs());
      }
    }
    Map<Kind, Latency> byKind = new EnumMap<>(Kind.class);
    latencies.forEach((k, v) -> byKind.put(k, Latency.ofMillis(v.stream().mapToLong(Long::longValue).toArray())));
    SoakResult.RmAccount rm = failovers.account(ledger);
    double submitSeconds = Math.max(1e-9, (lastSubmit - firstSubmit) / 1e9);
    double allocateSeconds = Math.max(1e-9, (lastContainer - firstAsk) / 1e9);
    SoakResult.Throughput throughput = new SoakResult.Throughput(submitSeconds, submitted / submitSeconds,
        ctx.submissions.peak(5), allocateSeconds, ctx.allocations.total() / allocateSeconds,
        ctx.allocations.peak(5), throttledNanos / 1e9, (loadEnd - t0) / 1e9,
        Latency.ofNanos(submitCalls.stream().mapToLong(Long::longValue).toArray()));
    Snapshot snap = cycles.snapshot();
    SoakResult.CycleLatency cycle = new SoakResult.CycleLatency(cycles.count(), snap.getMedian() / 1e6,
        snap.get95thPercentile() / 1e6, snap.get99thPercentile() / 1e6, snap.getMax() / 1e6,
        Math.max(cycleMaxSeenMs, snap.getMax() / 1e6));
    List<String> notes = new ArrayList<>();
    failures.stream().limit(20).forEach(f -> notes.add("failed: " + f));
    stuck.stream().limit(50).forEach(s -> notes.add("stuck: " + s));
    unendedInRm.stream().limit(50).forEach(s -> notes.add("not ended in the ResourceManager: " + s));
    retriedExamples.forEach(r -> notes.add("made again after a failover: " + r));
    ledger.problems().forEach(p -> notes.add("ledger: " + p));
    audit.problems().forEach(p -> notes.add("slot audit: " + p));
    return new SoakResult(o, machine(),
        new SoakResult.Apps(submitted, finished, failed, lost, stuckCount, unendedInRm.size(), stepsRetried,
            unregisteredAgain),
        new SoakResult.Containers(received, completed, voided, excess, unknown, duplicate, repeated,
            voidedThenCompleted, asksRestarted, rm.allocated(), rm.released(), rm.recovered(), rm.heldAtStepDowns(),
            rm.undelivered(), launched, launchFailures, nonZero),
        new SoakResult.CheckpointZnodes(Latency.ofMillis(znodesReady.stream().mapToLong(Long::longValue).toArray()),
            znodesLate),
        new SoakResult.DoubleAllocation(ledger.duplicateIds(), ledger.overflows() + ledger.unknownNodes(),
            audit.conflicts(), audit.nodeOverflows(), audit.audits(), audit.mostContainers()),
        drained, throughput, byKind, Latency.ofMillis(all.stream().mapToLong(Long::longValue).toArray()),
        Latency.ofMillis(receivedAll.stream().mapToLong(Long::longValue).toArray()), cycle, heap.samples(),
        new SoakResult.Failovers(failovers.failovers(ledger), failovers.problems()), notes);
  }
}
