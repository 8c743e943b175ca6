package io.spindle.launcher.yarn;

import io.spindle.launcher.RankPlan;
import io.spindle.launcher.RestartBudget;
import io.spindle.launcher.RunSpec;
import io.spindle.launcher.RunSpecParser;
import io.spindle.launcher.ShellWords;
import io.spindle.launcher.WorkerSlot;
import io.spindle.launcher.WorkerTracker;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.api.ApplicationConstants;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.LocalResource;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.UpdatedContainer;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.async.AMRMClientAsync;
import org.apache.hadoop.yarn.client.api.async.NMClientAsync;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

/**
 * The ApplicationMaster of a {@code spindle-run} job. It asks for the workers as one request, which Spindle's
 * {@code spindle.gang.size} tag makes one gang; once all are allocated it numbers them by topology
 * ({@link RankPlan}), starts each with its rank's environment, and watches them: when every worker exits 0 the job
 * succeeds; when one exits non-zero, is lost with its node, or stops reporting progress for {@code --hang-timeout},
 * the others are stopped and, within {@code --max-restarts}, the whole gang is asked for again after a backoff and
 * started from the newest checkpoint in {@code --checkpoint-dir}.
 */
public final class GangMaster implements ProgressServer.Master {

  /** The workers' request; the AM container is YARN's priority 0. */
  static final Priority WORKERS = Priority.newInstance(1);

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
  private int preemptions;
  private Map<String, LocalResource> workerResources;

  private int attempt = -1;
  private Run run;
  private long askAtMillis;
  private FinalApplicationStatus outcome;
  private String outcomeText;

  /** One start of the whole gang. */
  private static final class Run {
    final int attempt;
    final List<Container> allocated = new ArrayList<>();
    final Map<ContainerId, Integer> rankOf = new HashMap<>();
    final List<ContainerRequest> asked = new ArrayList<>();
    WorkerTracker tracker;
    boolean stopping;

    Run(int attempt) {
      this.attempt = attempt;
    }
  }

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
    workerResources = StagedFiles.workerResources(fs, new Path(System.getenv(StagedFiles.STAGING_ENV)));
    String host = InetAddress.getLocalHost().getCanonicalHostName();
    progress = new ProgressServer(host, this);
    rm = AMRMClientAsync.createAMRMClientAsync(1_000, new RmCallbacks());
    rm.init(conf);
    rm.start();
    nm = NMClientAsync.createNMClientAsync(new NmCallbacks());
    nm.init(conf);
    nm.start();
    rm.registerApplicationMaster(host, 0, progress.url() + "/status");
    checkpoints = CheckpointRelay.connect(conf, appId.toString(), this::note, clock);
    note("gang of " + spec.workers() + " worker(s) asked: " + spec);
    synchronized (this) {
      askAtMillis = clock.getAsLong();
      while (outcome == null) {
        long now = clock.getAsLong();
        if (run == null && now >= askAtMillis) {
          askGang();
        } else if (run != null && run.tracker != null && !run.stopping) {
          run.tracker.checkHangs().ifPresent(this::failed);
        }
        wait(250);
      }
    }
    rm.unregisterApplicationMaster(outcome, outcomeText + (budget.restarts() > 0
        ? "; restarts: " + String.join("; ", budget.reasons()) : "") + (preemptions > 0
        ? "; preempted by Spindle " + preemptions + " time(s), resumed each time" : ""), null);
    checkpoints.close();
    nm.stop();
    rm.stop();
    progress.close();
    return outcome == FinalApplicationStatus.SUCCEEDED ? 0 : 1;
  }

  private void askGang() {
    attempt++;
    run = new Run(attempt);
    for (int i = 0; i < spec.workers(); i++) {
      ContainerRequest r = new ContainerRequest(WorkerShape.of(spec), null, null, WORKERS);
      run.asked.add(r);
      rm.addContainerRequest(r);
    }
    note("run " + attempt + ": asked for " + spec.workers() + " worker(s) together");
  }

  private synchronized void allocated(List<Container> containers) {
    for (Container c : containers) {
      if (run == null || run.tracker != null || run.allocated.size() >= spec.workers()) {
        rm.releaseAssignedContainer(c.getId()); // not asked for (a late grant of a stopped run)
        continue;
      }
      run.allocated.add(c);
      rm.removeContainerRequest(run.asked.remove(run.asked.size() - 1));
    }
    if (run != null && run.tracker == null && run.allocated.size() == spec.workers()) {
      launch(run);
    }
  }

  private void launch(Run r) {
    List<WorkerSlot> slots = GangTopology.slots(r.allocated, racks(), SpindleStatusApi.of(conf)
        .flatMap(api -> api.get("nodes")));
    RankPlan plan = new RankPlan(slots, masterPort(appId, r.attempt));
    List<String> hosts = plan.ranked().stream().map(WorkerSlot::host).toList();
    r.tracker = new WorkerTracker(r.attempt, hosts, spec.hangTimeout(), clock);
    Optional<String> resume = newestCheckpoint();
    note("run " + r.attempt + ": all " + spec.workers() + " worker(s) allocated; ranks:");
    plan.describe().forEach(this::note);
    resume.ifPresent(c -> note("run " + r.attempt + ": resuming from " + c));
    for (Container c : r.allocated) {
      int rank = plan.rankOf(c.getId().toString());
      r.rankOf.put(c.getId(), rank);
      Map<String, String> env = new LinkedHashMap<>(plan.environment(c.getId().toString()));
      if (env.get("CUDA_VISIBLE_DEVICES").isEmpty() || spec.migProfile() != null || spec.gpuMilli() > 0) {
        // Unknown here, or a MIG instance or share (named by UUID, with MPS limits): the NodeManager's plugin sets it.
        env.remove("CUDA_VISIBLE_DEVICES");
      }
      env.putAll(spec.env());
      env.put("SPINDLE_RUN_APP_ID", appId.toString());
      env.put("SPINDLE_RUN_ATTEMPT", Integer.toString(r.attempt));
      env.put("SPINDLE_PROGRESS_URL", progress.url() + "/progress?attempt=" + r.attempt + "&rank=" + rank);
      if (spec.checkpointDir() != null) {
        env.put("SPINDLE_CHECKPOINT_DIR", spec.checkpointDir());
      }
      resume.ifPresent(p -> env.put("SPINDLE_RESUME_FROM", p));
      String command = ShellWords.join(spec.command()) + " 1>" + ApplicationConstants.LOG_DIR_EXPANSION_VAR
          + "/stdout 2>" + ApplicationConstants.LOG_DIR_EXPANSION_VAR + "/stderr";
      ContainerLaunchContext ctx = ContainerLaunchContext.newInstance(workerResources, env, List.of(command), null,
          (ByteBuffer) null, null);
      nm.startContainerAsync(c, ctx);
    }
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
      Integer rank = run == null ? null : run.rankOf.get(s.getContainerId());
      if (rank == null || run.stopping) {
        continue; // a stopped run's workers, or a container never started
      }
      int exit = s.getExitStatus();
      if (exit == ContainerExitStatus.PREEMPTED) {
        // Spindle takes gangs back whole and has already asked for them again on this job's behalf: not a failure.
        preempted(rank);
        return;
      }
      String why = exit == ContainerExitStatus.ABORTED ? "lost: its node left or YARN aborted it"
          : s.getDiagnostics();
      run.tracker.ended(rank, exit, why);
    }
    if (run != null && run.tracker != null && !run.stopping) {
      if (run.tracker.succeeded()) {
        finish(FinalApplicationStatus.SUCCEEDED, "all " + spec.workers() + " worker(s) exited 0");
      } else {
        run.tracker.failure().ifPresent(this::failed);
      }
    }
  }

  /**
   * Spindle reclaimed the gang (after the checkpoint handshake, or at its deadline). The run ends without using a
   * restart, and the gang is asked for again at once, in the same callback: the re-queued containers Spindle asked
   * for on the job's behalf may come with the next heartbeat, and must find a run waiting for them.
   */
  private void preempted(int rank) {
    preemptions++;
    note("run " + run.attempt + " preempted by Spindle (rank " + rank + "'s container was reclaimed);"
        + " the gang is asked for again and resumes from the newest checkpoint");
    stop(run);
    run = null;
    askGang();
  }

  private void stop(Run r) {
    r.stopping = true;
    for (Container c : r.allocated) {
      nm.stopContainerAsync(c.getId(), c.getNodeId());
      rm.releaseAssignedContainer(c.getId());
    }
    for (ContainerRequest req : r.asked) {
      rm.removeContainerRequest(req);
    }
  }

  private synchronized void failed(String reason) {
    if (run == null || run.stopping) {
      return;
    }
    note("run " + run.attempt + " failed: " + reason);
    stop(run);
    if (!budget.allowsAnother()) {
      finish(FinalApplicationStatus.FAILED, reason + " (no restart left of --max-restarts " + spec.maxRestarts()
          + ")");
      return;
    }
    Duration wait = budget.restartAfter("run " + run.attempt + ": " + reason);
    note(String.format(Locale.ROOT, "restart %d of %d in %d s", budget.restarts(), spec.maxRestarts(),
        wait.toSeconds()));
    run = null;
    askAtMillis = clock.getAsLong() + wait.toMillis();
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
      run.tracker.progress(rank, step);
    }
    return checkpoints.pendingNotice().map(id -> "checkpoint " + id + "\n").orElse("ok\n");
  }

  @Override
  public synchronized String checkpointed(int reportedAttempt, int rank, long step, String path) {
    if (!isCurrent(reportedAttempt, rank)) {
      return "ignored: not a worker of the current run\n";
    }
    run.tracker.progress(rank, step);
    note("run " + run.attempt + ": rank " + rank + " wrote the checkpoint of step " + step + ": " + path);
    checkpoints.checkpointed(path);
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
    return run != null && run.tracker != null && reportedAttempt == run.attempt && rank >= 0
        && rank < spec.workers();
  }

  @Override
  public synchronized String status() {
    StringBuilder b = new StringBuilder();
    log.forEach(l -> b.append(l).append('\n'));
    if (run != null && run.tracker != null) {
      b.append("-- workers of run ").append(run.attempt).append('\n');
      run.tracker.describe().forEach(l -> b.append(l).append('\n'));
    }
    return b.toString();
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

  private final class NmCallbacks extends NMClientAsync.AbstractCallbackHandler {
    @Override
    public void onContainerStarted(ContainerId id, Map<String, ByteBuffer> allServiceResponse) {
      synchronized (GangMaster.this) {
        Integer rank = run == null ? null : run.rankOf.get(id);
        if (rank != null) {
          run.tracker.started(rank);
        }
      }
    }

    @Override
    public void onStartContainerError(ContainerId id, Throwable t) {
      synchronized (GangMaster.this) {
        Integer rank = run == null ? null : run.rankOf.get(id);
        if (rank != null && !run.stopping) {
          run.tracker.startFailed(rank, String.valueOf(t.getMessage()));
          run.tracker.failure().ifPresent(GangMaster.this::failed);
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
