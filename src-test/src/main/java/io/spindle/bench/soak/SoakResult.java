package io.spindle.bench.soak;

import io.spindle.bench.soak.SoakJob.Kind;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The figures of one soak run: correctness (what must be zero) and performance (what is measured, never asserted).
 */
public record SoakResult(SoakOptions options, String machine, Apps apps, Containers containers,
    CheckpointZnodes checkpointZnodes, DoubleAllocation doubles, Drained drained, Throughput throughput,
    Map<Kind, Latency> schedulingLatency, Latency allScheduling, Latency allReceived, CycleLatency cycles,
    List<HeapProbe.Sample> heap, Failovers failovers, List<String> findings) {

  /**
   * @param finished FINISHED with final status SUCCEEDED
   * @param failed FAILED, KILLED, or the AM met an error
   * @param lost the ResourceManager stopped knowing it before it was seen to end, or its end was never seen
   * @param stuck not ended at the drain timeout, as the drivers saw it
   * @param unendedInRm applications of the soak the ResourceManager listed as not ended at the drain timeout
   * @param stepsRetried calls an AM or client made again because they failed while a ResourceManager failed over
   * @param unregisteredAgain AMs that registered and unregistered again because a failover right after their
   *     unregister brought their application back as running (YARN answers an unmanaged AM's unregister before it
   *     has stored the application's end)
   */
  public record Apps(int submitted, int finished, int failed, int lost, int stuck, int unendedInRm,
      int stepsRetried, int unregisteredAgain) {}

  /**
   * @param received every container the AMs received (wanted and excess)
   * @param completed of those, reported completed to their AM exactly once
   * @param voided of those, held unlaunched by their AM (or released, the completion not yet received) when the
   *     ResourceManager that allocated them failed over: gone with it (the next one never knew them), so no
   *     completion was owed
   * @param excess received beyond what the AM asked for (released at once)
   * @param unknownCompletions completions reported for containers the AM never received
   * @param duplicateCompletions completions reported twice by one ResourceManager
   * @param repeatedCompletions completions a new ResourceManager reported again after a failover (it recovers a
   *     completed container from the NodeManager until the NodeManager is told the AM heard): YARN's, tolerated
   * @param voidedThenCompleted completions for containers counted {@code voided}: a new ResourceManager knew them
   * @param asksRestarted applications that gave back what they held and asked again after a failover (they were to
   *     launch in a container of the ResourceManager that failed over)
   * @param rmAllocated containers the ResourceManagers allocated (their root queue metrics, each over its time as
   *     active, less the containers it recovered from NodeManagers rather than allocated)
   * @param rmReleased containers the ResourceManagers released, plus those they still held when they stood down,
   *     less recovered ones: with {@code rmAllocated}, equal to what the AMs received plus {@code rmUndelivered}
   * @param rmRecovered running containers the new active ResourceManagers took over from NodeManagers
   * @param rmHeldAtStepDowns containers the ResourceManagers held when they stood down
   * @param rmUndelivered of those, containers no AM had received
   * @param launched sampled containers that ran {@code true} through the NodeManager
   * @param launchFailures sampled launches that failed
   * @param launchNonZero launched containers whose exit status was not 0
   */
  public record Containers(long received, long completed, long voided, long excess, long unknownCompletions,
      long duplicateCompletions, long repeatedCompletions, long voidedThenCompleted, long asksRestarted,
      long rmAllocated, long rmReleased, long rmRecovered, long rmHeldAtStepDowns, long rmUndelivered, int launched,
      int launchFailures, int launchNonZero) {

    public long unaccounted() {
      return received - completed - voided;
    }
  }

  /**
   * The ResourceManagers' own account of containers; see {@link Containers}.
   *
   * @param released released, plus held at step-downs, less recovered
   */
  public record RmAccount(long allocated, long released, long recovered, long heldAtStepDowns, long undelivered) {}

  /**
   * One failover of the active ResourceManager. Times are from when it began, in ms; -1 when it never happened.
   *
   * @param mode {@code standby} (an admin's failover) or {@code stop} (the active one stopped outright)
   * @param epochBefore the epoch of the ResourceManager that stood down (container ids carry it)
   * @param atSubmitted applications submitted when it began
   * @param inFlight applications between submission and end when it began
   * @param stepDownMs the old one had stood down (or stopped)
   * @param activeMs the new one was active (YARN's recovery from the state store included)
   * @param nodesBackMs every NodeManager had re-registered with the new one's Spindle
   * @param takenOverMs the new one's Spindle had taken over the previous leader's state: its first cycle, after
   *     YARN's recovery wait ({@code work-preserving-recovery.scheduling-wait-ms})
   * @param firstAllocationMs the new one created the first container that an AM received
   * @param firstReceivedMs an AM received that container
   * @param heldAtStepDown containers the old one held when it stood down
   * @param recovered running containers the new one took over from NodeManagers
   * @param takeOver what Spindle restored (units, reservations, notices, entries dropped)
   */
  public record Failover(int index, String mode, String from, String to, long epochBefore, long epochAfter,
      int atSubmitted, int inFlight, long stepDownMs, long activeMs, long nodesBackMs, long takenOverMs,
      long firstAllocationMs, long firstReceivedMs, int heldAtStepDown, long recovered, String takeOver) {}

  /** The failovers made, and what went wrong making them (a take-over that never came, NodeManagers not back). */
  public record Failovers(List<Failover> done, List<String> problems) {

    public static final Failovers NONE = new Failovers(List.of(), List.of());
  }

  /**
   * Spindle's ZooKeeper writer, probed by the sampled applications (every {@code --launch-every}-th): how long from
   * the ask until the application's checkpoint znodes existed, so an AM could report checkpoints.
   *
   * @param late sampled applications whose znodes did not appear within {@link AppDriver#ZNODES_TIMEOUT_MS}
   */
  public record CheckpointZnodes(Latency ready, int late) {}

  /**
   * @param duplicateIds a container id handed out twice
   * @param capacityOverflows a node's live containers exceeding one of its resources (AM view)
   * @param slotConflicts a GPU or MIG slice held by two running containers in Spindle's status
   * @param engineOverflows a node charged more memory or vcores than it has in Spindle's status, or a container on a
   *     GPU or node the engine lacks
   * @param audits engine snapshots audited (the active ResourceManager's)
   * @param mostRunning most running containers in an audited snapshot
   */
  public record DoubleAllocation(long duplicateIds, long capacityOverflows, long slotConflicts, long engineOverflows,
      long audits, int mostRunning) {

    public long total() {
      return duplicateIds + capacityOverflows + slotConflicts + engineOverflows;
    }
  }

  /**
   * After the drain: what still runs or is kept, by the ResourceManager's, Spindle's and ZooKeeper's accounts; all 0
   * when drained.
   *
   * @param checkpointApps applications whose checkpoint znodes are still in ZooKeeper
   */
  public record Drained(long rmContainersOnNodes, long rmRootAllocatedContainers, int engineRunningContainers,
      int engineApps, long enginePendingContainers, int ledgerStillHeld, int checkpointApps) {

    public boolean clean() {
      return rmContainersOnNodes == 0 && rmRootAllocatedContainers == 0 && engineRunningContainers == 0
          && engineApps == 0 && enginePendingContainers == 0 && ledgerStillHeld == 0 && checkpointApps == 0;
    }
  }

  /**
   * @param submitSeconds first submission's start to last submission's end
   * @param allocateSeconds first ask to last container received
   * @param throttledSeconds time bursts waited for room under --max-in-flight
   * @param runSeconds first submission to the last application's end
   */
  public record Throughput(double submitSeconds, double submissionsPerSecond, double peakSubmissionsPerSecond,
      double allocateSeconds, double allocationsPerSecond, double peakAllocationsPerSecond, double throttledSeconds,
      double runSeconds, Latency submitCall) {}

  /**
   * Spindle's {@code spindle.cycle.seconds} timer: one engine cycle (events, fair shares, placement) and applying
   * its decisions. Dropwizard's default reservoir: about 1,028 cycles, weighted to the last 5 minutes.
   *
   * @param maxSeenMs the highest max any snapshot taken during the run showed
   */
  public record CycleLatency(long count, double p50Ms, double p95Ms, double p99Ms, double maxMs, double maxSeenMs) {}

  /** True when nothing was lost, stuck, failed, double-allocated or left unaccounted, and the cluster drained. */
  public boolean correct() {
    return problems().isEmpty();
  }

  /** What is wrong, one line each; empty when {@link #correct()}. */
  public List<String> problems() {
    List<String> p = new ArrayList<>();
    check(p, apps.submitted() == options.apps(), "submitted " + apps.submitted() + " of " + options.apps());
    check(p, apps.failed() == 0, apps.failed() + " applications failed");
    check(p, apps.lost() == 0, apps.lost() + " applications lost");
    check(p, apps.stuck() == 0 && apps.unendedInRm() == 0,
        apps.stuck() + " applications stuck (" + apps.unendedInRm() + " not ended in the ResourceManager)");
    check(p, containers.unaccounted() == 0, containers.unaccounted() + " containers never reported completed");
    check(p, containers.unknownCompletions() == 0 && containers.duplicateCompletions() == 0
        && containers.voidedThenCompleted() == 0, containers.unknownCompletions() + " unknown and "
        + containers.duplicateCompletions() + " duplicate completions, " + containers.voidedThenCompleted()
        + " for containers lost with their ResourceManager");
    long owed = containers.received() + containers.rmUndelivered();
    check(p, containers.rmAllocated() == owed && containers.rmReleased() == owed,
        "the ResourceManagers counted " + containers.rmAllocated() + " allocated and " + containers.rmReleased()
            + " released containers; the AMs received " + containers.received() + " and "
            + containers.rmUndelivered() + " were never delivered");
    check(p, failovers.done().size() == options.failovers() && failovers.problems().isEmpty(),
        failovers.done().size() + " of " + options.failovers() + " failovers made"
            + (failovers.problems().isEmpty() ? "" : ": " + String.join("; ", failovers.problems())));
    check(p, containers.launchFailures() == 0 && containers.launchNonZero() == 0, containers.launchFailures()
        + " launches failed, " + containers.launchNonZero() + " launched containers exited non-zero");
    check(p, checkpointZnodes.late() == 0, checkpointZnodes.late() + " sampled applications' checkpoint znodes were"
        + " not written within " + AppDriver.ZNODES_TIMEOUT_MS / 1000 + " s");
    check(p, doubles.total() == 0, doubles.total() + " double allocations (" + doubles.duplicateIds() + " ids, "
        + doubles.capacityOverflows() + " node overflows, " + doubles.slotConflicts() + " GPU slots)");
    check(p, drained.clean(), "not drained: " + drained);
    return p;
  }

  private static void check(List<String> out, boolean ok, String problem) {
    if (!ok) {
      out.add(problem);
    }
  }

  public void print(PrintStream out) {
    SoakOptions o = options;
    out.println();
    out.printf(Locale.ROOT, "Soak: %,d applications, %d NodeManagers, bursts of %d every %d ms, at most %d in flight,"
        + " AM heartbeat %d ms, hold up to %d ms, seed %d%s%n", o.apps(), o.nodes(), o.burst(), o.burstIntervalMs(),
        o.maxInFlight(), o.heartbeatMs(), o.holdMs(), o.seed(), o.failovers() == 0 ? ""
            : String.format(Locale.ROOT, "; ResourceManager HA pair, %d failovers (%s)", o.failovers(),
                o.failoverMode().name().toLowerCase(Locale.ROOT)));
    out.println("Machine: " + machine);
    out.printf(Locale.ROOT, "Applications: %,d submitted, %,d finished, %d failed, %d lost, %d stuck"
        + " (%d not ended in the ResourceManager)%n", apps.submitted(), apps.finished(), apps.failed(), apps.lost(),
        apps.stuck(), apps.unendedInRm());
    out.printf(Locale.ROOT, "Containers: %,d received (%d beyond the ask), %,d reported completed, %d unaccounted,"
        + " %d unknown / %d duplicate completions; ResourceManager counted %,d allocated, %,d released;"
        + " %d launched through NodeManagers (%d failed, %d non-zero exit)%n", containers.received(),
        containers.excess(), containers.completed(), containers.unaccounted(), containers.unknownCompletions(),
        containers.duplicateCompletions(), containers.rmAllocated(), containers.rmReleased(), containers.launched(),
        containers.launchFailures(), containers.launchNonZero());
    if (o.failovers() > 0) {
      out.printf(Locale.ROOT, "Calls that failed during a failover and were made again: %d; AMs that unregistered"
          + " again because a failover brought their application back: %d%n", apps.stepsRetried(),
          apps.unregisteredAgain());
      out.printf(Locale.ROOT, "Across failovers: %,d containers were lost with the ResourceManager that allocated"
          + " them (held unlaunched, or released before their completion reached the AM: no completion owed; %d"
          + " came anyway); %d completions repeated by"
          + " a new ResourceManager; %d applications asked for all their containers again; the ResourceManagers held"
          + " %,d containers when they stood down (%,d never delivered to an AM) and recovered %,d from"
          + " NodeManagers%n", containers.voided(), containers.voidedThenCompleted(),
          containers.repeatedCompletions(), containers.asksRestarted(), containers.rmHeldAtStepDowns(),
          containers.rmUndelivered(), containers.rmRecovered());
      out.println("Failovers (ms from the start of each): stood down, active, NodeManagers back, Spindle took over,"
          + " first container created / received by an AM");
      out.printf(Locale.ROOT, "  %-2s %-8s %-10s %9s %9s %7s %7s %7s %8s %8s %8s %6s %9s  %s%n", "#", "mode", "rms",
          "submitted", "in flight", "down", "active", "nodes", "took", "created", "received", "held", "recovered",
          "Spindle restored");
      for (Failover f : failovers.done()) {
        out.printf(Locale.ROOT, "  %-2d %-8s %-10s %9d %9d %7d %7d %7d %8d %8d %8d %6d %9d  %s%n", f.index(), f.mode(),
            f.from() + "->" + f.to(), f.atSubmitted(), f.inFlight(), f.stepDownMs(), f.activeMs(), f.nodesBackMs(),
            f.takenOverMs(), f.firstAllocationMs(), f.firstReceivedMs(), f.heldAtStepDown(), f.recovered(),
            f.takeOver());
      }
    }
    out.printf(Locale.ROOT, "Checkpoint znodes (sampled applications, ask -> written): %d in time, %d late; p50 %.0f"
        + " ms, p99 %.0f ms, max %.0f ms%n", checkpointZnodes.ready().count(), checkpointZnodes.late(),
        checkpointZnodes.ready().p50Ms(), checkpointZnodes.ready().p99Ms(), checkpointZnodes.ready().maxMs());
    out.printf(Locale.ROOT, "Double allocations: %d (container ids handed out twice %d, node overflows %d, GPU slots"
        + " held twice %d and engine node overflows %d in %,d audited engine snapshots, up to %d running"
        + " containers)%n", doubles.total(), doubles.duplicateIds(), doubles.capacityOverflows(),
        doubles.slotConflicts(), doubles.engineOverflows(), doubles.audits(), doubles.mostRunning());
    out.printf(Locale.ROOT, "Drained: ResourceManager containers on nodes %d, root queue allocated %d; Spindle running"
        + " %d, applications %d, pending containers %d; AM-held %d; applications with checkpoint znodes %d%n",
        drained.rmContainersOnNodes(), drained.rmRootAllocatedContainers(), drained.engineRunningContainers(),
        drained.engineApps(), drained.enginePendingContainers(), drained.ledgerStillHeld(),
        drained.checkpointApps());
    Throughput t = throughput;
    out.printf(Locale.ROOT, "Submissions: %.1f/s sustained over %.1f s (peak 5 s: %.1f/s; bursts waited %.1f s for"
        + " room); submit call p50 %.0f ms, p99 %.0f ms%n", t.submissionsPerSecond(), t.submitSeconds(),
        t.peakSubmissionsPerSecond(), t.throttledSeconds(), t.submitCall().p50Ms(), t.submitCall().p99Ms());
    out.printf(Locale.ROOT, "Allocations: %.1f containers/s sustained over %.1f s (peak 5 s: %.1f/s); run %.1f s%n",
        t.allocationsPerSecond(), t.allocateSeconds(), t.peakAllocationsPerSecond(), t.runSeconds());
    out.println("Scheduling latency per application, ms: the heartbeat carrying its asks -> Spindle allocating its"
        + " last container (a gang: all of it); 'received': -> the AM holding them all");
    out.printf(Locale.ROOT, "  %-8s %7s %8s %8s %8s %8s%n", "kind", "apps", "p50", "p95", "p99", "max");
    schedulingLatency.forEach((k, l) -> printLatency(out, k.name().toLowerCase(Locale.ROOT), l));
    printLatency(out, "all", allScheduling);
    printLatency(out, "received", allReceived);
    out.printf(Locale.ROOT, "Spindle cycle (spindle.cycle.seconds, %,d cycles): p50 %.2f ms, p95 %.2f ms, p99 %.2f ms,"
        + " max %.2f ms (highest max seen during the run %.2f ms)%n", cycles.count(), cycles.p50Ms(), cycles.p95Ms(),
        cycles.p99Ms(), cycles.maxMs(), cycles.maxSeenMs());
    out.println("Heap after full GC, MB (RM, NodeManagers, ZooKeeper and AMs in one JVM), and live threads:");
    out.printf(Locale.ROOT, "  %-6s %12s %8s %8s%n", "sample", "apps ended", "heap MB", "threads");
    for (HeapProbe.Sample s : heap) {
      out.printf(Locale.ROOT, "  %-6s %12d %8d %8d%n", s.label(), s.appsEnded(), s.usedMb(), s.threads());
    }
    for (String f : findings) {
      out.println("  finding: " + f);
    }
    List<String> problems = problems();
    out.println(problems.isEmpty() ? "RESULT: correct (0 lost, 0 stuck, 0 failed, 0 double-allocated, every container"
        + " accounted, drained)" : "RESULT: FAILED: " + String.join("; ", problems));
  }

  private static void printLatency(PrintStream out, String name, Latency l) {
    out.printf(Locale.ROOT, "  %-8s %7d %8.0f %8.0f %8.0f %8.0f%n", name, l.count(), l.p50Ms(), l.p95Ms(), l.p99Ms(),
        l.maxMs());
  }
}
