package io.spindle.bench.soak;

import java.security.PrivilegedExceptionAction;
import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.NMClient;
import org.apache.hadoop.yarn.client.api.NMTokenCache;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.apache.hadoop.yarn.util.ConverterUtils;
import org.apache.zookeeper.KeeperException;

/**
 * One soak application's whole life through the real YARN protocols, as a chain of short steps on the shared pool
 * (each a blocking RPC or two, never a sleep): submit through {@link YarnClient} as the job's user; wait until the
 * ResourceManager hands the owner the attempt's AMRM token (it does once the unmanaged attempt is LAUNCHED); register
 * as the AM with {@link AMRMClient}; ask for every container in one request; heartbeat until all arrived; hold them;
 * release them (or, for a sampled application, start {@code true} in the first one through {@link NMClient} and let
 * it end); heartbeat until the ResourceManager has reported every container completed; unregister; wait for
 * FINISHED. Steps of one driver never overlap: each schedules the next.
 *
 * <p>When the active ResourceManager fails over, the AM follows through YARN's failover proxy (its AMRM client
 * re-registers and sends its asks again). What it held unlaunched from the previous ResourceManager is gone — the new
 * one knows running containers only, from the NodeManagers, and a NodeManager refuses to start a container a previous
 * ResourceManager allocated — so no completion will ever come for it: the AM counts it left behind ({@link #voided})
 * rather than waiting. An application that was to launch one of them asks for all its containers again instead.
 */
final class AppDriver {

  /** Each application's steps at DEBUG ({@code -Dsoak.trace=true}), to follow one through a failover. */
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(AppDriver.class);

  static final String APP_TYPE = "SPINDLE-SOAK";
  /**
   * Waiting for a state (the attempt LAUNCHED, the application FINISHED) polls its report, first after
   * {@value #FIRST_POLL_MS} ms, then twice as long each time up to {@value #MAX_POLL_MS} ms: hundreds of applications
   * polling at a fixed short interval would spend the machine on report RPCs.
   */
  private static final long FIRST_POLL_MS = 50;
  private static final long MAX_POLL_MS = 800;
  private static final EnumSet<YarnApplicationState> ENDED = EnumSet.of(YarnApplicationState.FINISHED,
      YarnApplicationState.FAILED, YarnApplicationState.KILLED);

  enum Phase { QUEUED, SUBMITTING, LAUNCHING, ASKING, PROBING, HOLDING, DRAINING, FINISHING, DONE }

  private static final int MAX_RETRIES_AFTER_FAILOVER = 3;
  private static final long RETRY_AFTER_FAILOVER_MS = 500;

  /** How long a sampled application waits for its checkpoint znodes before that counts as a problem. */
  static final long ZNODES_TIMEOUT_MS = 120_000;

  enum Outcome {
    /** FINISHED with final status SUCCEEDED, every container received and reported completed. */
    FINISHED,
    /** Ended FAILED or KILLED, or its AM met an error. */
    FAILED,
    /** The ResourceManager stopped knowing the application before the driver saw it end. */
    LOST,
    /** Not ended when the drain timeout passed. */
    STUCK
  }

  final SoakJob job;
  private final SoakContext ctx;
  private volatile Phase phase = Phase.QUEUED;
  private volatile Outcome outcome;
  private volatile String problem;
  private volatile ApplicationId appId;
  private Phase stuckIn;
  private long pollMs = FIRST_POLL_MS;
  private long submitStartNs;
  private long submitEndNs;
  private long askedNs;
  private long askSentMs;
  private long lastAllocatedMs;
  private long allReceivedMs;
  private long allReceivedNanos;
  /** From the ask to the application's checkpoint znodes existing; 0 not probed, -1 not within the timeout. */
  private long znodesReadyMs;
  private long holdUntilNs;
  private UserGroupInformation amUgi;
  private AMRMClient<ContainerRequest> amrm;
  private NMTokenCache nmTokens;
  private NMClient nm;
  private final ArrayDeque<ContainerRequest> open = new ArrayDeque<>();
  /** Every container received, wanted or not, in order; each must be reported completed. */
  private Map<ContainerId, Container> received = new LinkedHashMap<>();
  private Set<ContainerId> completed = new HashSet<>();
  private int receivedCount;
  private int completedCount;
  private ContainerId launchedId;
  private int wanted;
  private int excess;
  private int unknownCompletions;
  private int duplicateCompletions;
  /** The wanted containers in hand, in the order received (emptied when the AM asks for all of them again). */
  private final java.util.List<Container> wantedHeld = new java.util.ArrayList<>();
  /** Containers held when their ResourceManager failed over, never launched: no completion comes for them. */
  private Set<ContainerId> voided = new HashSet<>();
  private int voidedCount;
  /** Completions seen again from a new ResourceManager after a failover, by failover: YARN repeats them. */
  private int repeatedCompletions;
  /** Completions for containers counted left behind: the new ResourceManager knew them after all. */
  private int voidedThenCompleted;
  /** The failovers done when each container was reported completed. */
  private Map<ContainerId, Integer> completedIn = new java.util.HashMap<>();
  private int asksRestarted;
  /** Failovers done when the AM unregistered, and how often it had to do so again after one. */
  private int failoversAtUnregister;
  private int unregisteredAgain;
  /** Steps made again after an error while a ResourceManager failed over, and the last such error. */
  private int retriesAfterFailover;
  private String retried;
  /** The submission not yet known to have gone through. */
  private ApplicationSubmissionContext submission;
  private Container launched;
  private int launchedExit = Integer.MIN_VALUE;
  private YarnApplicationState finalState;
  private FinalApplicationStatus finalStatus;

  AppDriver(SoakJob job, SoakContext ctx) {
    this.job = job;
    this.ctx = ctx;
  }

  void start() {
    phase = Phase.SUBMITTING;
    next(0);
  }

  private void poll() {
    pollMs = Math.min(MAX_POLL_MS, pollMs * 2);
    next(pollMs);
  }

  private void next(long delayMs) {
    ctx.pool.schedule(this::step, delayMs, TimeUnit.MILLISECONDS);
  }

  private void step() {
    if (ctx.aborted()) {
      stuckIn = phase;
      end(Outcome.STUCK, "not ended within the drain timeout (phase " + phase + ")");
      return;
    }
    long stepStart = System.nanoTime();
    try {
      LOG.debug("{} step {}", appId, phase);
      switch (phase) {
        case SUBMITTING -> submit();
        case LAUNCHING -> awaitLaunch();
        case ASKING -> ask();
        case PROBING -> probe();
        case HOLDING -> release();
        case DRAINING -> drain();
        case FINISHING -> awaitEnd();
        default -> throw new IllegalStateException("step in phase " + phase);
      }
    } catch (ApplicationNotFoundException e) {
      end(Outcome.LOST, "the ResourceManager no longer knows it (phase " + phase + "): " + firstLine(e));
    } catch (Exception | Error e) {
      LOG.debug("{} step {} failed", appId, phase, e);
      Throwable cause = e;
      while (cause instanceof java.lang.reflect.UndeclaredThrowableException && cause.getCause() != null) {
        cause = cause.getCause();
      }
      String why = "phase " + phase + ": " + cause.getClass().getSimpleName() + ": " + firstLine(cause);
      if (e instanceof Exception && ctx.failoverDuring(stepStart) && retriesAfterFailover < MAX_RETRIES_AFTER_FAILOVER) {
        // A ResourceManager stopped in the middle of a call may answer it with an error (its handler interrupted)
        // instead of dropping the connection, which the client would fail over from: the step is made again, as a
        // client does after a transient error. Counted, and only while a failover overlaps the step.
        retriesAfterFailover++;
        retried = why;
        next(RETRY_AFTER_FAILOVER_MS);
        return;
      }
      giveUp();
      end(Outcome.FAILED, why);
    }
  }

  private void submit() throws Exception {
    YarnClient yarn = ctx.clients.get(job.user());
    if (submission != null) {
      // Made again after an error during a failover: the same application, which the ResourceManager takes as
      // submitted already if the first call got through.
      ApplicationSubmissionContext again = submission;
      as(ctx.users.get(job.user()), () -> yarn.submitApplication(again));
      submitted(again);
      return;
    }
    submitStartNs = System.nanoTime();
    ApplicationSubmissionContext sc = as(ctx.users.get(job.user()),
        () -> yarn.createApplication().getApplicationSubmissionContext());
    appId = sc.getApplicationId();
    sc.setApplicationName("soak-" + job.index() + "-" + job.kind().name().toLowerCase(java.util.Locale.ROOT));
    sc.setApplicationType(APP_TYPE);
    sc.setQueue(job.queue());
    sc.setApplicationTags(job.tags());
    sc.setUnmanagedAM(true);
    sc.setPriority(Priority.newInstance(0));
    sc.setResource(Resource.newInstance(128, 1));
    sc.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
    submission = sc;
    as(ctx.users.get(job.user()), () -> yarn.submitApplication(sc));
    submitted(sc);
  }

  private void submitted(ApplicationSubmissionContext sc) {
    submission = null;
    submitEndNs = System.nanoTime();
    ctx.submissions.add(submitEndNs, 1);
    phase = Phase.LAUNCHING;
    next(FIRST_POLL_MS);
  }

  /** The owner's report carries the AMRM token once the unmanaged attempt is LAUNCHED: then register and ask. */
  private void awaitLaunch() throws Exception {
    ApplicationReport r = as(ctx.users.get(job.user()), () -> ctx.clients.get(job.user()).getApplicationReport(appId));
    if (ENDED.contains(r.getYarnApplicationState())) {
      finalState = r.getYarnApplicationState();
      finalStatus = r.getFinalApplicationStatus();
      end(Outcome.FAILED, "ended " + finalState + " before its AM registered: " + firstLine(r.getDiagnostics()));
      return;
    }
    if (r.getAMRMToken() == null) {
      poll();
      return;
    }
    Token<AMRMTokenIdentifier> token = ConverterUtils.convertFromYarn(r.getAMRMToken(), (Text) null);
    token.setService(ClientRMProxy.getAMRMTokenService(ctx.conf));
    amUgi = UserGroupInformation.createRemoteUser(r.getCurrentApplicationAttemptId().toString());
    amUgi.addToken(token);
    nmTokens = new NMTokenCache();
    AMRMClient<ContainerRequest> client = AMRMClient.createAMRMClient();
    client.setNMTokenCache(nmTokens);
    try {
      as(amUgi, () -> {
        client.init(ctx.conf);
        client.start();
        return client.registerApplicationMaster("", 0, "");
      });
    } catch (Exception e) {
      client.stop();
      throw e;
    }
    amrm = client;
    Resource each = job.capability();
    for (int i = 0; i < job.containers(); i++) {
      ContainerRequest req = new ContainerRequest(each, null, null, Priority.newInstance(1));
      amrm.addContainerRequest(req);
      open.add(req);
    }
    askedNs = System.nanoTime();
    phase = Phase.ASKING;
    next(0);
  }

  private void ask() throws Exception {
    if (askSentMs == 0) {
      askSentMs = System.currentTimeMillis(); // This heartbeat carries the asks.
    }
    heartbeat();
    if (wanted < job.containers()) {
      next(ctx.heartbeatMs);
      return;
    }
    allReceivedMs = System.currentTimeMillis();
    allReceivedNanos = System.nanoTime();
    if (job.launch()) {
      Container first = wantedHeld.get(0);
      if (dead(first) || !launchFirst(first) && dead(first)) {
        askAllAgain();
        return;
      }
      phase = Phase.PROBING;
      probe();
      return;
    }
    hold();
  }

  /** Whether {@code c} came from a ResourceManager that has since failed over (and so is gone unless launched). */
  private boolean dead(Container c) {
    return ContainerLedger.epoch(c.getId()) <= ctx.deadEpochsUpTo();
  }

  /**
   * The containers to launch in came from a ResourceManager that failed over before they were launched: the AM
   * gives them back and asks for all of them again, as YARN AMs do for containers they lost.
   */
  private void askAllAgain() {
    for (Container c : wantedHeld) {
      if (!completed.contains(c.getId())) {
        ctx.ledger.released(c.getId());
        amrm.releaseAssignedContainer(c.getId());
      }
    }
    wantedHeld.clear();
    wanted = 0;
    allReceivedMs = 0;
    allReceivedNanos = 0;
    problem = null;
    for (int i = 0; i < job.containers(); i++) {
      ContainerRequest req = new ContainerRequest(job.capability(), null, null, Priority.newInstance(1));
      amrm.addContainerRequest(req);
      open.add(req);
    }
    asksRestarted++;
    phase = Phase.ASKING;
    next(0);
  }

  /**
   * A sampled application also waits until Spindle has written its checkpoint znodes in ZooKeeper, which it does for
   * every application whose AM talks to the RM, so that an AM using Spindle's client can report checkpoints: the
   * time from the ask is how far Spindle's ZooKeeper writer is behind.
   */
  private void probe() throws Exception {
    long since = System.currentTimeMillis() - askSentMs;
    if (reportSlotExists()) {
      znodesReadyMs = since;
      hold();
    } else if (since > ZNODES_TIMEOUT_MS) {
      znodesReadyMs = -1;
      problem = "its checkpoint znodes were not written within " + ZNODES_TIMEOUT_MS / 1000 + " s";
      hold();
    } else {
      next(100);
    }
  }

  /** The report slot is the application's own: ZooKeeper refuses others even {@code exists} on it, which says it is. */
  private boolean reportSlotExists() throws Exception {
    try {
      return ctx.zk.checkExists().forPath(ctx.checkpointPaths.report(appId.toString())) != null;
    } catch (KeeperException.NoAuthException itsOwn) {
      return true;
    }
  }

  private void hold() {
    holdUntilNs = System.nanoTime() + job.holdMs() * 1_000_000;
    phase = Phase.HOLDING;
    next(job.holdMs());
  }

  private void release() throws Exception {
    long wait = (holdUntilNs - System.nanoTime()) / 1_000_000;
    if (wait > 0) {
      next(wait);
      return;
    }
    for (Container c : received.values()) {
      if (c != launched && !completed.contains(c.getId())) {
        // Recorded before the allocate call that carries it: see ContainerLedger.
        ctx.ledger.released(c.getId());
        amrm.releaseAssignedContainer(c.getId());
      }
    }
    phase = Phase.DRAINING;
    drain();
  }

  private void drain() throws Exception {
    heartbeat();
    if (completed.size() + voided.size() < received.size()) {
      next(ctx.heartbeatMs);
      return;
    }
    as(amUgi, () -> {
      amrm.unregisterApplicationMaster(FinalApplicationStatus.SUCCEEDED, "soak", null);
      return null;
    });
    failoversAtUnregister = ctx.failoversDone();
    LOG.debug("{} unregistered; received {}, completed {}, lost with their ResourceManager {}", appId,
        received.keySet(), completed, voided);
    stopClients();
    phase = Phase.FINISHING;
    pollMs = FIRST_POLL_MS;
    next(FIRST_POLL_MS);
  }

  private void awaitEnd() throws Exception {
    ApplicationReport r = as(ctx.users.get(job.user()), () -> ctx.clients.get(job.user()).getApplicationReport(appId));
    LOG.debug("{} is {}", appId, r.getYarnApplicationState());
    if (!ENDED.contains(r.getYarnApplicationState())) {
      if (ctx.failoversDone() > failoversAtUnregister && EnumSet.of(YarnApplicationState.ACCEPTED,
          YarnApplicationState.RUNNING).contains(r.getYarnApplicationState())) {
        unregisterAgain();
      }
      poll();
      return;
    }
    finalState = r.getYarnApplicationState();
    finalStatus = r.getFinalApplicationStatus();
    if (finalState == YarnApplicationState.FINISHED && finalStatus == FinalApplicationStatus.SUCCEEDED) {
      end(Outcome.FINISHED, null);
    } else {
      end(Outcome.FAILED, "ended " + finalState + "/" + finalStatus + ": " + firstLine(r.getDiagnostics()));
    }
  }

  /**
   * YARN answers an unmanaged AM's unregister at once, before the application's end is stored
   * ({@code DefaultAMSProcessor}: "so they don't retry"); when the ResourceManager fails over in between, the next
   * one recovers the application as running, waiting for its AM to come back (and would fail it once the AM
   * liveness expiry passed). So the AM, still watching its application, registers and unregisters again.
   */
  private void unregisterAgain() throws Exception {
    AMRMClient<ContainerRequest> again = AMRMClient.createAMRMClient();
    again.setNMTokenCache(new NMTokenCache());
    try {
      as(amUgi, () -> {
        again.init(ctx.conf);
        again.start();
        again.registerApplicationMaster("", 0, "");
        again.unregisterApplicationMaster(FinalApplicationStatus.SUCCEEDED, "soak", null);
        return null;
      });
    } finally {
      again.stop();
    }
    unregisteredAgain++;
    failoversAtUnregister = ctx.failoversDone();
    LOG.debug("{} unregistered again after a failover", appId);
  }

  /** One allocate call: takes what arrived (withdrawing one open request per container) and what completed. */
  private void heartbeat() throws Exception {
    float progress = received.isEmpty() ? 0f : (float) completed.size() / received.size();
    AllocateResponse response = as(amUgi, () -> amrm.allocate(progress));
    long now = System.nanoTime();
    List<Container> got = response.getAllocatedContainers();
    if (LOG.isDebugEnabled() && (!got.isEmpty() || !response.getCompletedContainersStatuses().isEmpty())) {
      LOG.debug("{} got {}, completed {}", appId, got.stream().map(Container::getId).toList(),
          response.getCompletedContainersStatuses().stream().map(ContainerStatus::getContainerId).toList());
    }
    long nowMs = System.currentTimeMillis();
    for (Container c : got) {
      boolean want = wanted < job.containers();
      boolean launchesItself = want && job.launch() && wanted == 0;
      // When Spindle created the container (the ResourceManager's clock, which is this JVM's): the container token
      // carries it, so scheduling is told apart from the wait for this AM's next heartbeat.
      long created = BuilderUtils.newContainerTokenIdentifier(c.getContainerToken()).getCreationTime();
      ctx.ledger.received(c, !launchesItself, created, nowMs);
      if (received.putIfAbsent(c.getId(), c) != null) {
        continue; // The same id twice: the ledger counted it.
      }
      if (want) {
        wanted++;
        wantedHeld.add(c);
        lastAllocatedMs = Math.max(lastAllocatedMs, created);
        if (!open.isEmpty()) {
          amrm.removeContainerRequest(open.poll());
        }
      } else {
        excess++;
        ctx.ledger.released(c.getId());
        amrm.releaseAssignedContainer(c.getId());
      }
    }
    if (!got.isEmpty()) {
      ctx.allocations.add(now, got.size());
    }
    int failovers = ctx.failoversDone();
    for (ContainerStatus s : response.getCompletedContainersStatuses()) {
      ContainerId id = s.getContainerId();
      if (!received.containsKey(id)) {
        unknownCompletions++;
      } else if (voided.contains(id)) {
        voidedThenCompleted++;
        problem = "completion for " + id + ", which the AM counted lost with its ResourceManager";
      } else if (!completed.add(id)) {
        // A NodeManager keeps a completed container until the ResourceManager tells it the AM has heard; a new
        // ResourceManager recovers it from the NodeManager and reports it again. Anything else is a duplicate.
        if (completedIn.getOrDefault(id, failovers) < failovers) {
          repeatedCompletions++;
        } else {
          duplicateCompletions++;
        }
      } else {
        completedIn.put(id, failovers);
        if (launched != null && launched.getId().equals(id)) {
          launchedExit = s.getExitStatus();
          ctx.launchedRunning.decrementAndGet();
        }
      }
    }
    for (Container c : received.values()) {
      if (c != launched && dead(c) && !completed.contains(c.getId())) {
        voided.add(c.getId());
      }
    }
  }

  /**
   * Starts {@code true} in {@code first}; it ends by itself and the NodeManager reports it completed. False if the
   * NodeManager refused it.
   */
  private boolean launchFirst(Container first) {
    try {
      nm = NMClient.createNMClient();
      nm.setNMTokenCache(nmTokens);
      nm.init(ctx.conf);
      nm.start();
      List<String> command = ctx.launchSeconds == 0 ? List.of("true") : List.of("sleep " + ctx.launchSeconds);
      nm.startContainer(first, ContainerLaunchContext.newInstance(null, null, command, null, null, null));
      launched = first;
      ctx.launchedRunning.incrementAndGet();
      return true;
    } catch (Exception e) {
      // Without a process it would never end: released with the rest (a failed launch is a finding of its own,
      // unless its ResourceManager failed over meanwhile).
      problem = "could not launch in " + first.getId() + ": " + firstLine(e);
      return false;
    }
  }

  private void giveUp() {
    try {
      if (amrm != null && phase.compareTo(Phase.FINISHING) < 0) {
        as(amUgi, () -> {
          amrm.unregisterApplicationMaster(FinalApplicationStatus.FAILED, "soak AM error: " + problem, null);
          return null;
        });
      } else if (appId != null && phase.compareTo(Phase.FINISHING) < 0) {
        as(ctx.users.get(job.user()), () -> {
          ctx.clients.get(job.user()).killApplication(appId);
          return null;
        });
      }
    } catch (Exception ignored) {
      // Reported as failed either way; the final sweep finds it if YARN still runs it.
    }
    stopClients();
  }

  private void stopClients() {
    if (nm != null) {
      nm.stop();
      nm = null;
    }
    if (amrm != null) {
      amrm.stop();
    }
  }

  private void end(Outcome o, String why) {
    if (launched != null && completed != null && !completed.contains(launched.getId())) {
      ctx.launchedRunning.decrementAndGet();
    }
    if (why != null && problem == null) {
      problem = why;
    } else if (why != null) {
      problem = why + "; " + problem;
    }
    if (o == Outcome.STUCK) {
      stopClients();
    }
    if (o != Outcome.FINISHED && received != null) {
      // Ended without releasing: the ResourceManager frees its containers when the application ends (now, or when
      // a stuck one is killed). Out of the capacity check, so they cannot be counted against what comes next.
      received.keySet().forEach(ctx.ledger::released);
    }
    forget();
    outcome = o;
    phase = Phase.DONE;
    ctx.ended(this);
  }

  /**
   * Keeps the figures and drops the rest: a stopped AMRM client still holds its RPC proxy and a copy of the
   * configuration, which the harness would otherwise retain for every application and count as the RM's heap.
   */
  private void forget() {
    receivedCount = received.size();
    completedCount = completed.size();
    voidedCount = voided.size();
    received = null;
    completed = null;
    voided = null;
    completedIn = null;
    wantedHeld.clear();
    open.clear();
    amrm = null;
    nm = null;
    nmTokens = null;
    amUgi = null;
    submission = null;
    launchedId = launched == null ? null : launched.getId();
    launched = null;
  }

  private static <T> T as(UserGroupInformation ugi, PrivilegedExceptionAction<T> action) throws Exception {
    return ugi.doAs(action);
  }

  private static String firstLine(Object o) {
    String t = o instanceof Throwable th ? String.valueOf(th.getMessage()) : String.valueOf(o);
    t = t.strip();
    int nl = t.indexOf('\n');
    return nl < 0 ? t : t.substring(0, nl).strip();
  }

  // ------------------------------------------------------------------ what the report reads, once drivers are done

  Outcome outcome() {
    return outcome;
  }

  Phase phase() {
    return phase;
  }

  Phase stuckIn() {
    return stuckIn;
  }

  String problem() {
    return problem;
  }

  ApplicationId appId() {
    return appId;
  }

  boolean submitted() {
    return submitEndNs > 0;
  }

  long submitNanos() {
    return submitEndNs - submitStartNs;
  }

  long submitStartNanos() {
    return submitStartNs;
  }

  long submitEndNanos() {
    return submitEndNs;
  }

  long askedNanos() {
    return askedNs;
  }

  /** From the heartbeat that carried the asks to Spindle creating the last wanted container; -1 if not all came. */
  long schedulingLatencyMs() {
    return allReceivedMs > 0 ? Math.max(0, lastAllocatedMs - askSentMs) : -1;
  }

  /** From the heartbeat that carried the asks to the AM holding every wanted container; -1 if not all came. */
  long receiveLatencyMs() {
    return allReceivedMs > 0 ? allReceivedMs - askSentMs : -1;
  }

  /** When the last wanted container arrived, on {@link System#nanoTime()}; 0 if not all came. */
  long allReceivedNanos() {
    return allReceivedNanos;
  }

  long znodesReadyMs() {
    return znodesReadyMs;
  }

  int containersReceived() {
    return receivedCount;
  }

  int containersCompleted() {
    return completedCount;
  }

  /** Containers it held, unlaunched, when their ResourceManager failed over: no completion came, none was owed. */
  int voided() {
    return voidedCount;
  }

  int repeatedCompletions() {
    return repeatedCompletions;
  }

  int voidedThenCompleted() {
    return voidedThenCompleted;
  }

  /** Times it registered and unregistered again because a failover brought its unregistered application back. */
  int unregisteredAgain() {
    return unregisteredAgain;
  }

  /** Steps made again after an error while a ResourceManager failed over. */
  int retriesAfterFailover() {
    return retriesAfterFailover;
  }

  String retried() {
    return retried;
  }

  /** Times it gave back what it held and asked for all its containers again after a failover. */
  int asksRestarted() {
    return asksRestarted;
  }

  int excess() {
    return excess;
  }

  int unknownCompletions() {
    return unknownCompletions;
  }

  int duplicateCompletions() {
    return duplicateCompletions;
  }

  boolean launched() {
    return launchedId != null;
  }

  int launchedExit() {
    return launchedExit;
  }
}
