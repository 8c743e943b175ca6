package io.spindle.launcher.yarn;

import io.spindle.client.CheckpointAdviceView;
import io.spindle.client.CheckpointNoticeView;
import io.spindle.client.SpindleStatusClient;
import io.spindle.client.StatusApiAddress;
import io.spindle.launcher.ElasticGang;
import io.spindle.launcher.RankPlan;
import io.spindle.launcher.RestartBudget;
import io.spindle.launcher.RunSpec;
import io.spindle.launcher.RunSpecParser;
import io.spindle.launcher.WorkerSlot;
import io.spindle.launcher.WorkerTracker;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.LongSupplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.api.ApplicationConstants;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.LocalResource;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.UpdatedContainer;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.async.AMRMClientAsync;
import org.apache.hadoop.yarn.client.api.async.NMClientAsync;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

/**
 * The ApplicationMaster of a {@code spindle-run} job. It asks for the workers as one request, which Spindle's
 * {@code spindle.gang.size} tag makes one gang; once they are allocated it numbers them by topology
 * ({@link RankPlan}), starts each with its rank's environment, and watches them: when every worker exits 0 the job
 * succeeds; when one exits non-zero, is lost with its node, or stops reporting progress for {@code --hang-timeout},
 * the others are stopped and, within {@code --max-restarts}, the whole gang is asked for again after a backoff and
 * started from the newest checkpoint in {@code --checkpoint-dir}.
 *
 * <p>An elastic job ({@code --min-workers}) starts with as few as its minimum and changes size while it runs
 * ({@link ElasticGang} decides when): the workers checkpoint, and the processes are restarted at the new size on the
 * containers the job keeps. YARN re-initializes a running container with a new launch context, so the job never
 * gives up a container it keeps, and Spindle never sees the gang stop.
 */
public final class GangMaster implements ProgressServer.Master {

  private static final int HEARTBEAT_MILLIS = 1_000;

  private final Configuration conf;
  private final RunSpec spec;
  private final LongSupplier clock;
  private final ApplicationId appId;
  private final RestartBudget budget;
  private final List<String> log = new ArrayList<>();
  private AMRMClientAsync<ContainerRequest> rm;
  private NMClientAsync nm;
  private ProgressServer progress;
  private CheckpointRelay checkpoints;
  private WorkerLaunch launch;
  private int preemptions;
  /** Each run's size, for an elastic job's diagnostics. */
  private final List<Integer> sizes = new ArrayList<>();

  private int attempt = -1;
  private Gang gang;
  private long askAtMillis;
  private FinalApplicationStatus outcome;
  private String outcomeText;

  GangMaster(Configuration conf, RunSpec spec, ApplicationId appId, LongSupplier clock) {
    this.conf = conf;
    this.spec = spec;
    this.appId = appId;
    this.clock = clock;
    this.budget = new RestartBudget(spec.maxRestarts(), spec.restartBackoff());
  }

  public static void main(String[] args) throws Exception {
    Configuration conf = new YarnConfiguration();
    conf.addResource(new Path(StagedFiles.CONF)); // the client's configuration, localized into the working dir
    // Before any Resource exists: one made with fewer types than the worker shape names breaks YARN's records.
    ResourceUtils.resetResourceTypes(conf);
    List<String> argv = SubmittedArgs.read(Files.readString(java.nio.file.Path.of(StagedFiles.ARGS)));
    RunSpec spec = RunSpecParser.parse(argv.toArray(new String[0]));
    ContainerId self = ContainerId.fromString(System.getenv(ApplicationConstants.Environment.CONTAINER_ID.name()));
    GangMaster master = new GangMaster(conf, spec, self.getApplicationAttemptId().getApplicationId(),
        System::currentTimeMillis);
    int rc;
    try {
      rc = master.run();
    } catch (Throwable t) {
      // The YARN clients' threads are not daemons: without an explicit end the AM would linger, its job RUNNING.
      t.printStackTrace();
      rc = master.abort(t);
    }
    System.exit(rc);
  }

  /** Ends the application as failed after an error of the master itself; the diagnostics say what it was. */
  private int abort(Throwable t) {
    try {
      if (rm != null) {
        rm.unregisterApplicationMaster(FinalApplicationStatus.FAILED, "spindle-run's ApplicationMaster failed: "
            + t, null);
      }
    } catch (Exception e) {
      e.printStackTrace();
    }
    return 1;
  }

  int run() throws Exception {
    FileSystem fs = FileSystem.get(conf);
    Map<String, LocalResource> workerResources = StagedFiles.workerResources(fs,
        new Path(System.getenv(StagedFiles.STAGING_ENV)));
    String host = InetAddress.getLocalHost().getCanonicalHostName();
    progress = new ProgressServer(host, this);
    rm = AMRMClientAsync.createAMRMClientAsync(HEARTBEAT_MILLIS, new RmCallbacks());
    rm.init(conf);
    rm.start();
    nm = NMClientAsync.createNMClientAsync(new NmCallbacks());
    nm.init(conf);
    nm.start();
    rm.registerApplicationMaster(host, 0, progress.url() + "/status");
    launch = new WorkerLaunch(spec, appId, progress.url(), workerResources);
    checkpoints = CheckpointRelay.connect(conf, appId.toString(), this::note, clock, new Resizes());
    note("gang of " + spec.workers() + " worker(s) asked: " + spec);
    synchronized (this) {
      askAtMillis = clock.getAsLong();
      while (outcome == null) {
        if (gang == null) {
          if (clock.getAsLong() >= askAtMillis) {
            askGang();
          }
        } else if (!gang.stopping()) {
          tick();
        }
        wait(250);
      }
    }
    rm.unregisterApplicationMaster(outcome, outcomeText + (budget.restarts() > 0
        ? "; restarts: " + String.join("; ", budget.reasons()) : "") + (preemptions > 0
        ? "; preempted by Spindle " + preemptions + " time(s), resumed each time" : "")
        + (sizes.size() > 1 && spec.elastic() ? "; ran at " + sizes.stream().map(String::valueOf)
        .collect(java.util.stream.Collectors.joining(", ")) + " worker(s)" : ""), null);
    checkpoints.close();
    nm.stop();
    rm.stop();
    progress.close();
    return outcome == FinalApplicationStatus.SUCCEEDED ? 0 : 1;
  }

  /** What the master does between events: start a gang that has settled, find hangs, give up waiting. */
  private void tick() {
    ElasticGang members = gang.members;
    if (gang.run() == null) {
      if (members.readyToStart()) {
        startRun(null);
      }
      return;
    }
    Optional<String> hung = gang.run().tracker().checkHangs();
    if (hung.isPresent()) {
      failed(hung.get());
    } else if (members.cancelWithdrawnShrink()) {
      note("run " + attempt + ": Spindle withdrew its resize notice; the gang runs on at " + gang.run().size());
    } else if (members.growDue()) {
      restartAtNewSize("no checkpoint within " + ElasticGang.GROW_WAIT.toSeconds() + " s of asking for one to grow;"
          + " the newest one there is will do");
    }
  }

  private void askGang() {
    gang = new Gang(spec, clock, rm, nm);
    gang.ask(spec.workers());
    note("asked for " + (spec.elastic() ? spec.workers() + " worker(s), starting with at least " + spec.minWorkers()
        : spec.workers() + " worker(s) together"));
  }

  private synchronized void allocated(List<Container> containers) {
    int joined = 0;
    for (Container c : containers) {
      if (gang == null) {
        rm.releaseAssignedContainer(c.getId()); // a late grant of a stopped gang, during the restart's backoff
      } else if (gang.take(c)) {
        joined++;
      }
    }
    if (joined == 0) {
      return;
    }
    if (gang.run() == null) {
      if (gang.members.readyToStart()) {
        startRun(null);
      }
    } else if (gang.members.change() == ElasticGang.Change.GROW) {
      note(String.format(Locale.ROOT, "run %d: %d more worker(s) allocated; asking the workers to checkpoint, then"
          + " restarting at %d", attempt, joined, gang.members.nextSize()));
    }
  }

  /**
   * Starts the workers on the gang's next members: its first run ({@code why} null), or a restart at a new size on
   * the containers it keeps. Ranks follow topology at every size; when not every candidate makes a whole step, the
   * first ones in topology order run, so the ranks stay neighbours.
   */
  private void startRun(String why) {
    int before = gang.run() == null ? 0 : gang.run().size();
    int size = gang.members.nextSize();
    List<WorkerSlot> slots = GangTopology.slots(gang.candidates(), racks(), SpindleStatusApi.of(conf)
        .flatMap(api -> api.get("nodes")));
    attempt++;
    RankPlan plan = new RankPlan(new RankPlan(slots, 0).ranked().subList(0, size), masterPort(appId, attempt));
    Map<ContainerId, Integer> rankOf = new HashMap<>();
    plan.ranked().forEach(w -> rankOf.put(ContainerId.fromString(w.containerId()), plan.rankOf(w.containerId())));
    Gang.Run run = new Gang.Run(attempt, rankOf, new WorkerTracker(attempt, plan.ranked().stream()
        .map(WorkerSlot::host).toList(), spec.hangTimeout(), clock));
    sizes.add(size);
    Optional<String> resume = newestCheckpoint();
    if (why != null) {
      note("run " + attempt + ": " + why + "; restarting at " + size + " worker(s) (was " + before + "); ranks:");
    } else if (size == spec.workers()) {
      note("run " + attempt + ": all " + size + " worker(s) allocated; ranks:");
    } else {
      note("run " + attempt + ": " + size + " of " + spec.workers() + " worker(s) allocated, starting with them"
          + " (--min-workers " + spec.minWorkers() + "); ranks:");
    }
    plan.describe().forEach(this::note);
    resume.ifPresent(c -> note("run " + attempt + ": resuming from " + c));
    OptionalLong checkpointEvery = checkpointAdvice();
    gang.start(run, id -> launch.worker(plan, id, run.attempt(), resume, checkpointEvery), launch.idle());
  }

  /**
   * The checkpoint interval Spindle advises for the GPUs this run holds, asked at every start since the run's size
   * changes it. Advice only: without it the workers start without {@link WorkerLaunch#CHECKPOINT_INTERVAL}, and the
   * line says why.
   */
  private OptionalLong checkpointAdvice() {
    String absent = "run " + attempt + ": no " + WorkerLaunch.CHECKPOINT_INTERVAL + ": ";
    Optional<SpindleStatusClient> status = SpindleStatusClient.from(conf::get);
    if (status.isEmpty()) {
      note(absent + "the configuration names no Spindle status API (" + StatusApiAddress.PORT_KEY + ")");
      return OptionalLong.empty();
    }
    try {
      CheckpointAdviceView advice = status.get().checkpointAdvice(appId.toString());
      note("run " + attempt + ": Spindle advises a checkpoint every " + advice.intervalSeconds() + " s ("
          + WorkerLaunch.CHECKPOINT_INTERVAL + "): " + advice.basis());
      return OptionalLong.of(advice.intervalSeconds());
    } catch (IOException | RuntimeException e) {
      note(absent + e.getMessage());
      return OptionalLong.empty();
    }
  }

  /**
   * Restarts the workers at the gang's next size, unless one of them has ended meanwhile: the run is then finishing
   * or failing, and that decides what comes next.
   */
  private void restartAtNewSize(String why) {
    if (gang == null || gang.stopping() || gang.run() == null || !gang.run().tracker().allRunning()) {
      return;
    }
    if (gang.members.nextSize() == 0) {
      // Spindle leaves fewer than the minimum: nothing can run; like a preemption, the gang is asked for anew.
      preempted("fewer than --min-workers " + spec.minWorkers() + " left (" + why + ")");
      return;
    }
    startRun(why);
  }

  private Optional<String> newestCheckpoint() {
    if (spec.checkpointDir() == null) {
      return Optional.empty();
    }
    try {
      return CheckpointDir.newest(conf, spec.checkpointDir());
    } catch (IOException e) {
      note("cannot list --checkpoint-dir " + spec.checkpointDir() + ": " + e.getMessage());
      return Optional.empty();
    }
  }

  /** Each node's rack as the RM resolved it; empty if the RM does not answer (the ranks then ignore racks). */
  private Map<String, String> racks() {
    Map<String, String> out = new HashMap<>();
    try (YarnClient client = YarnClient.createYarnClient()) {
      client.init(conf);
      client.start();
      for (NodeReport n : client.getNodeReports()) {
        out.put(n.getNodeId().toString(), n.getRackName());
      }
    } catch (Exception e) {
      note("node racks unknown (" + e.getMessage() + "); ranks ordered by host");
    }
    return out;
  }

  /** Rank 0's rendezvous port: fixed per job and run in 20000..29999, so no two runs of one job reuse it. */
  static int masterPort(ApplicationId appId, int attempt) {
    long h = appId.getClusterTimestamp() * 31 + appId.getId() * 7919L + attempt * 104_729L;
    return 20_000 + (int) Math.floorMod(h, 10_000L);
  }

  private synchronized void completed(List<ContainerStatus> statuses) {
    for (ContainerStatus s : statuses) {
      if (gang == null || gang.stopping()) {
        return; // a stopped gang's workers
      }
      String id = s.getContainerId().toString();
      Integer rank = gang.rankOf(s.getContainerId());
      if (!gang.ended(s.getContainerId())) {
        continue; // released, or never this gang's
      }
      switch (gang.members.ended(id)) {
        case DEPARTING -> departed(id, rank, s.getExitStatus());
        case WAITING -> {
          note("container " + id + ", allocated to join the gang, ended before it did (exit status "
              + s.getExitStatus() + "); asked for again");
          gang.ask(1);
        }
        case MEMBER -> {
          if (s.getExitStatus() == ContainerExitStatus.PREEMPTED) {
            // Spindle takes gangs back whole and has already asked for them again on this job's behalf.
            preempted("rank " + rank + "'s container was reclaimed");
            return;
          }
          String why = s.getExitStatus() == ContainerExitStatus.ABORTED ? "lost: its node left or YARN aborted it"
              : s.getDiagnostics();
          gang.run().tracker().ended(rank, s.getExitStatus(), why);
        }
        case UNKNOWN -> { }
      }
    }
    if (gang != null && gang.run() != null && !gang.stopping()) {
      if (gang.run().tracker().succeeded()) {
        finish(FinalApplicationStatus.SUCCEEDED, "all " + gang.run().size() + " worker(s) exited 0");
      } else {
        gang.run().tracker().failure().ifPresent(this::failed);
      }
    }
  }

  /**
   * A container Spindle asked back for a resize has gone. The ResourceManager put it back into the job's ask (the
   * gang may grow into it again when GPUs are idle); the AMRMClient's own count of the request must say the same, or
   * its next update of the request would take it out again. When it still ran a worker, Spindle reclaimed it at the
   * deadline before the workers checkpointed: the others restart now, from the newest checkpoint there is.
   */
  private void departed(String id, Integer rank, int exit) {
    note("container " + id + " went back to Spindle" + (exit == ContainerExitStatus.PREEMPTED ? ""
        : " (exit status " + exit + ")"));
    gang.ask(1);
    if (rank != null) {
      restartAtNewSize("Spindle reclaimed rank " + rank + "'s container before the workers checkpointed");
    }
  }

  /**
   * Spindle reclaimed the gang (after the checkpoint handshake, or at its deadline). The run ends without using a
   * restart, and the gang is asked for again at once, in the same callback: the re-queued containers Spindle asked
   * for on the job's behalf may come with the next heartbeat, and must find a gang waiting for them.
   */
  private void preempted(String what) {
    preemptions++;
    note("run " + attempt + " preempted by Spindle (" + what + "); the gang is asked for again and resumes from the"
        + " newest checkpoint");
    gang.stop();
    gang = null;
    askGang();
  }

  private synchronized void failed(String reason) {
    if (gang == null || gang.stopping()) {
      return;
    }
    note("run " + attempt + " failed: " + reason);
    gang.stop();
    if (!budget.allowsAnother()) {
      finish(FinalApplicationStatus.FAILED, reason + " (no restart left of --max-restarts " + spec.maxRestarts()
          + ")");
      return;
    }
    Duration wait = budget.restartAfter("run " + attempt + ": " + reason);
    note(String.format(Locale.ROOT, "restart %d of %d in %d s", budget.restarts(), spec.maxRestarts(),
        wait.toSeconds()));
    askAtMillis = clock.getAsLong() + wait.toMillis();
    if (gang.asking()) {
      // An elastic gang below its size still asked for more. Spindle takes an ask for the whole gang as a new run of
      // it only after the ask went to 0, so the withdrawal must reach the ResourceManager first: two heartbeats.
      askAtMillis = Math.max(askAtMillis, clock.getAsLong() + 2 * HEARTBEAT_MILLIS);
    }
    gang = null;
  }

  private synchronized void finish(FinalApplicationStatus status, String text) {
    if (outcome == null) {
      outcome = status;
      outcomeText = text;
      note("job " + status.name().toLowerCase(Locale.ROOT) + ": " + text);
      notifyAll();
    }
  }

  private synchronized void note(String line) {
    log.add(line);
    System.out.println(line);
  }

  @Override
  public synchronized String progress(int reportedAttempt, int rank, long step) {
    if (isCurrent(reportedAttempt, rank)) {
      gang.run().tracker().progress(rank, step);
    }
    Optional<Long> notice = checkpoints.pendingNotice();
    if (notice.isPresent()) {
      return "checkpoint " + notice.get() + "\n";
    }
    return gang != null && gang.members.change() == ElasticGang.Change.GROW ? "checkpoint grow\n" : "ok\n";
  }

  /**
   * A checkpoint is written. It is what a pending change of size waited for: a shrink restarts the survivors before
   * Spindle hears DONE (Spindle then kills the containers it takes back, and workers still running beside them would
   * fail); a grow restarts at once. A whole preemption's notice outranks a grow.
   */
  @Override
  public synchronized String checkpointed(int reportedAttempt, int rank, long step, String path,
      OptionalLong writeMillis) {
    if (!isCurrent(reportedAttempt, rank)) {
      return "ignored: not a worker of the current run\n";
    }
    gang.run().tracker().progress(rank, step);
    note("run " + attempt + ": rank " + rank + " wrote the checkpoint of step " + step + ": " + path);
    Optional<CheckpointNoticeView> notice = checkpoints.pending();
    ElasticGang members = gang.members;
    if (members.change() == ElasticGang.Change.SHRINK && notice.isPresent()
        && notice.get().noticeId() == members.shrinkNotice()) {
      restartAtNewSize("Spindle takes back " + members.departing().size() + " worker(s) (notice "
          + members.shrinkNotice() + ")");
      checkpoints.checkpointed(path, writeMillis);
    } else if (members.change() == ElasticGang.Change.GROW && notice.isEmpty()) {
      checkpoints.checkpointed(path, writeMillis);
      restartAtNewSize("grown by " + (members.nextSize() - gang.run().size()) + " worker(s)");
    } else {
      checkpoints.checkpointed(path, writeMillis);
    }
    return "ok\n";
  }

  @Override
  public synchronized String extend(int reportedAttempt, int rank, long seconds) {
    if (isCurrent(reportedAttempt, rank)) {
      checkpoints.extend(seconds);
    }
    return "ok\n";
  }

  private boolean isCurrent(int reportedAttempt, int rank) {
    return gang != null && gang.run() != null && !gang.stopping() && reportedAttempt == gang.run().attempt()
        && rank >= 0 && rank < gang.run().size();
  }

  @Override
  public synchronized String status() {
    StringBuilder b = new StringBuilder();
    log.forEach(l -> b.append(l).append('\n'));
    if (gang != null && gang.run() != null) {
      b.append("-- workers of run ").append(gang.run().attempt()).append('\n');
      gang.run().tracker().describe().forEach(l -> b.append(l).append('\n'));
    }
    return b.toString();
  }

  /** Spindle's resize notices: which of the gang's containers go, and when the notice closed. */
  private final class Resizes implements CheckpointRelay.Resizer {
    @Override
    public boolean resize(CheckpointNoticeView notice) {
      synchronized (GangMaster.this) {
        if (gang == null || gang.stopping()) {
          return false;
        }
        boolean reissued = gang.members.shrinkNotice() == notice.noticeId();
        if (!gang.members.resize(notice.noticeId(), notice.containerIds())) {
          return false;
        }
        if (!reissued) {
          note("run " + attempt + ": asking the workers to checkpoint; then the gang restarts without the "
              + gang.members.departing().size() + " worker(s) Spindle takes back");
        }
        return true;
      }
    }

    @Override
    public void closed(long noticeId) {
      synchronized (GangMaster.this) {
        if (gang != null) {
          gang.members.noticeClosed(noticeId);
        }
      }
    }
  }

  private final class RmCallbacks extends AMRMClientAsync.AbstractCallbackHandler {
    @Override
    public void onContainersAllocated(List<Container> containers) {
      allocated(containers);
    }

    @Override
    public void onContainersCompleted(List<ContainerStatus> statuses) {
      completed(statuses);
    }

    @Override
    public void onContainersUpdated(List<UpdatedContainer> containers) {}

    @Override
    public void onShutdownRequest() {
      finish(FinalApplicationStatus.KILLED, "the ResourceManager asked the ApplicationMaster to shut down");
    }

    @Override
    public void onNodesUpdated(List<NodeReport> updatedNodes) {}

    @Override
    public float getProgress() {
      return 0;
    }

    @Override
    public void onError(Throwable e) {
      finish(FinalApplicationStatus.FAILED, "ApplicationMaster error: " + e);
    }
  }

  /** The rank {@code id} runs in the current run, or null. */
  private Integer rankInRun(ContainerId id) {
    return gang == null ? null : gang.rankOf(id);
  }

  private final class NmCallbacks extends NMClientAsync.AbstractCallbackHandler {
    @Override
    public void onContainerStarted(ContainerId id, Map<String, ByteBuffer> allServiceResponse) {
      running(id);
    }

    @Override
    public void onContainerReInitialize(ContainerId id) {
      running(id);
    }

    private void running(ContainerId id) {
      synchronized (GangMaster.this) {
        Integer rank = rankInRun(id);
        if (rank != null) {
          gang.run().tracker().started(rank);
        }
      }
    }

    @Override
    public void onStartContainerError(ContainerId id, Throwable t) {
      notStarted(id, t);
    }

    @Override
    public void onContainerReInitializeError(ContainerId id, Throwable t) {
      notStarted(id, t);
    }

    private void notStarted(ContainerId id, Throwable t) {
      synchronized (GangMaster.this) {
        Integer rank = rankInRun(id);
        if (rank != null) {
          gang.run().tracker().startFailed(rank, String.valueOf(t.getMessage()));
          gang.run().tracker().failure().ifPresent(GangMaster.this::failed);
        }
      }
    }

    @Override
    public void onContainerStatusReceived(ContainerId id, ContainerStatus status) {}
    @Override
    public void onGetContainerStatusError(ContainerId id, Throwable t) {}

    @Override
    public void onContainerStopped(ContainerId id) {}

    @Override
    public void onStopContainerError(ContainerId id, Throwable t) {}

    @Override
    public void onContainerResourceIncreased(ContainerId id, org.apache.hadoop.yarn.api.records.Resource r) {}

    @Override
    public void onContainerResourceUpdated(ContainerId id, org.apache.hadoop.yarn.api.records.Resource r) {}

    @Override
    public void onIncreaseContainerResourceError(ContainerId id, Throwable t) {}

    @Override
    public void onUpdateContainerResourceError(ContainerId id, Throwable t) {}
  }
}
