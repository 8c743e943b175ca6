package io.spindle.local;

import com.fasterxml.jackson.databind.JsonNode;
import io.spindle.client.CheckpointDecision;
import io.spindle.client.CheckpointNoticeView;
import io.spindle.client.SpindleCheckpointClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationAttemptState;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.NMClient;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One application of the seed demo with an unmanaged ApplicationMaster on a thread of its own, as
 * {@link DemoWorkload}'s: asks for all its containers at once, runs {@code sleep} in each it gets, and ends once
 * every container has run to completion. Unlike the small demo's it answers Spindle's checkpoint notices through
 * {@link SpindleCheckpointClient} (writes a checkpoint file, answers DONE with its location), and when it gets
 * containers back after a preemption it asks the cluster where to resume from (Spindle's status API) before it
 * starts them. What it saw is kept for the demo's checks, each fact as the cluster gave it to the AM.
 */
final class SeedAm implements Runnable {

  private static final Logger LOG = LoggerFactory.getLogger(SeedAm.class);
  private static final long TIMEOUT_MS = 150_000;

  /** What to run: {@code containers} x ({@code gpus} GPUs, memory), each {@code sleep runSeconds}. */
  record Spec(String name, String queue, int priority, Set<String> tags, int containers, int gpus, long memoryMb,
      int runSeconds, int resumedRunSeconds) {}

  /** A container as the ResourceManager handed it out, with this JVM's clock at the allocate answer. */
  record Allocation(ContainerId id, String node, long atMillis, int batch) {}

  /** The checkpoint notice as the handler got it from ZooKeeper, and what it answered. */
  record Notice(long noticeId, List<String> containerIds, String reason, long receivedMillis, String location) {}

  final Spec spec;
  private final YarnClient yarn;
  private final Configuration conf;
  private final String zkAddress;
  private final String zkRoot;
  private final SpindleStatus status;
  private final Path checkpointDir;
  private final String gpuResource;

  volatile ApplicationId appId;
  final List<Allocation> allocations = new CopyOnWriteArrayList<>();
  final List<ContainerStatus> completed = new CopyOnWriteArrayList<>();
  /** Sizes of the non-empty allocate answers, in order: a gang comes in one. */
  final List<Integer> batches = new CopyOnWriteArrayList<>();
  final List<Notice> notices = new CopyOnWriteArrayList<>();
  /** The preemption entry of this application's history, read from the status API when containers came back. */
  volatile JsonNode resumedFrom;
  /** Called with the containers of each allocate answer, before they are started. */
  volatile java.util.function.Consumer<List<Container>> onAllocated = c -> { };
  volatile int succeeded;
  volatile String problem;
  volatile boolean ended;
  private volatile boolean stop;

  SeedAm(Spec spec, YarnClient yarn, Configuration conf, String zkAddress, String zkRoot, SpindleStatus status,
      Path checkpointDir, String gpuResource) {
    this.spec = spec;
    this.yarn = yarn;
    this.conf = conf;
    this.zkAddress = zkAddress;
    this.zkRoot = zkRoot;
    this.status = status;
    this.checkpointDir = checkpointDir;
    this.gpuResource = gpuResource;
  }

  /** Starts the application on a daemon thread of its own. */
  SeedAm start() {
    Thread t = new Thread(this, "seed-am-" + spec.name());
    t.setDaemon(true);
    t.start();
    return this;
  }

  void stop() {
    stop = true;
  }

  int preempted() {
    return (int) completed.stream().filter(s -> s.getExitStatus() == ContainerExitStatus.PREEMPTED).count();
  }

  /** Waits until {@code condition} holds or {@code timeoutMs} passes, or the application ended; whether it holds. */
  boolean await(java.util.function.BooleanSupplier condition, long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline || (ended && !condition.getAsBoolean())) {
        return false;
      }
      Thread.sleep(50);
    }
    return true;
  }

  @Override
  public void run() {
    try {
      ApplicationSubmissionContext ctx = yarn.createApplication().getApplicationSubmissionContext();
      ctx.setApplicationName("spindle-seed-" + spec.name());
      ctx.setApplicationType("SPINDLE-DEMO");
      ctx.setQueue(spec.queue());
      ctx.setApplicationTags(spec.tags());
      ctx.setUnmanagedAM(true);
      ctx.setPriority(Priority.newInstance(spec.priority()));
      ctx.setResource(Resource.newInstance(128, 1));
      ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
      appId = ctx.getApplicationId();
      yarn.submitApplication(ctx);
      ApplicationAttemptId attempt = launchedAttempt();
      Token<AMRMTokenIdentifier> token = yarn.getAMRMToken(appId);
      token.setService(ClientRMProxy.getAMRMTokenService(conf));
      UserGroupInformation ugi = UserGroupInformation.createRemoteUser(attempt.toString());
      ugi.addToken(token);
      ugi.doAs((PrivilegedExceptionAction<Void>) () -> {
        applicationMaster(token.getPassword());
        return null;
      });
    } catch (Exception e) {
      Throwable cause = e;
      while (cause instanceof java.lang.reflect.UndeclaredThrowableException && cause.getCause() != null) {
        cause = cause.getCause();
      }
      LOG.warn("seed demo application {} failed", spec.name(), cause);
      problem = cause.getClass().getSimpleName() + ": " + cause.getMessage();
    } finally {
      ended = true;
    }
  }

  private ApplicationAttemptId launchedAttempt() throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    while (System.currentTimeMillis() < deadline) {
      ApplicationReport r = yarn.getApplicationReport(appId);
      if (Set.of(YarnApplicationState.FAILED, YarnApplicationState.KILLED, YarnApplicationState.FINISHED)
          .contains(r.getYarnApplicationState())) {
        throw new IllegalStateException("application " + r.getYarnApplicationState() + " before its AM started: "
            + r.getDiagnostics());
      }
      ApplicationAttemptId a = r.getCurrentApplicationAttemptId();
      if (a != null && yarn.getApplicationAttemptReport(a).getYarnApplicationAttemptState()
          == YarnApplicationAttemptState.LAUNCHED) {
        return a;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("the AM's attempt was not launched within 60 s");
  }

  private void applicationMaster(byte[] secret) throws Exception {
    try (UnmanagedAmClients clients = UnmanagedAmClients.start(conf);
        SpindleCheckpointClient checkpoints = SpindleCheckpointClient.connect(zkAddress, zkRoot, appId.toString(),
            secret)) {
      AMRMClient<ContainerRequest> rm = clients.rm();
      NMClient nm = clients.nm();
      rm.registerApplicationMaster("", 0, "");
      checkpoints.register(this::checkpoint);
      Resource each = Resource.newInstance(spec.memoryMb(), 1);
      each.setResourceValue(gpuResource, spec.gpus());
      ask(rm, each, spec.containers());
      Set<ContainerId> running = new HashSet<>();
      Set<ContainerId> released = new HashSet<>();
      long deadline = System.currentTimeMillis() + TIMEOUT_MS;
      while (succeeded < spec.containers() && !stop) {
        if (System.currentTimeMillis() > deadline) {
          // After what went wrong before, which is usually why.
          problem = (problem == null ? "" : problem + "; ") + "ran " + succeeded + " of " + spec.containers()
              + " containers to the end within " + TIMEOUT_MS / 1000 + " s";
          break;
        }
        AllocateResponse response = rm.allocate(0.5f);
        long now = System.currentTimeMillis();
        List<Container> got = new ArrayList<>();
        for (Container c : response.getAllocatedContainers()) {
          rm.removeContainerRequest(new ContainerRequest(each, null, null, Priority.newInstance(1)));
          if (running.size() + got.size() >= spec.containers() - succeeded) {
            rm.releaseAssignedContainer(c.getId());
            released.add(c.getId());
          } else {
            got.add(c);
          }
        }
        if (!got.isEmpty()) {
          batches.add(got.size());
          for (Container c : got) {
            allocations.add(new Allocation(c.getId(), c.getNodeId().getHost(), now, batches.size()));
          }
          onAllocated.accept(got);
          String resumeFrom = preempted() > 0 ? resumeLocation() : null;
          for (Container c : got) {
            nm.startContainer(c, launchContext(resumeFrom));
            running.add(c.getId());
          }
        }
        for (ContainerStatus s : response.getCompletedContainersStatuses()) {
          if (released.remove(s.getContainerId())) {
            continue;
          }
          running.remove(s.getContainerId());
          completed.add(s);
          if (s.getExitStatus() == ContainerExitStatus.SUCCESS) {
            succeeded++;
          } else if (s.getExitStatus() == ContainerExitStatus.PREEMPTED) {
            // Asked again, as YARN AMs do; Spindle already re-queued it on our behalf, so this total simply stands.
            ask(rm, each, 1);
          } else {
            problem = (problem == null ? "" : problem + "; ") + "container " + s.getContainerId()
                + " ended with exit status " + s.getExitStatus() + ": " + s.getDiagnostics().strip();
            ask(rm, each, 1);
          }
        }
        Thread.sleep(100);
      }
      rm.unregisterApplicationMaster(succeeded == spec.containers() ? FinalApplicationStatus.SUCCEEDED
          : FinalApplicationStatus.FAILED, "spindle-local seed demo", null);
    }
  }

  private static void ask(AMRMClient<ContainerRequest> rm, Resource each, int n) {
    for (int i = 0; i < n; i++) {
      rm.addContainerRequest(new ContainerRequest(each, null, null, Priority.newInstance(1)));
    }
  }

  private ContainerLaunchContext launchContext(String resumeFrom) {
    int seconds = resumeFrom == null ? spec.runSeconds() : spec.resumedRunSeconds();
    // The location travels to the "training" process as a real job's would; sleep ignores it.
    Map<String, String> env = resumeFrom == null ? Map.of() : Map.of("SPINDLE_RESUME_FROM", resumeFrom);
    return ContainerLaunchContext.newInstance(null, env, List.of("sleep " + seconds), null, null, null);
  }

  /** Where Spindle says this application resumes from: the last preemption of its history, as the API gives it. */
  private String resumeLocation() {
    try {
      JsonNode entry = null;
      for (JsonNode h : status.get("api/v1/apps/" + appId).path("history")) {
        if (h.path("type").asText().equals("preempted")) {
          entry = h;
        }
      }
      resumedFrom = entry;
      return entry == null || entry.path("checkpointLocation").isNull() ? null
          : entry.path("checkpointLocation").asText();
    } catch (Exception e) {
      LOG.warn("{}: cannot read where to resume from: {}", spec.name(), e.toString());
      return null;
    }
  }

  /** The checkpoint handler: saves "the model" to a file and tells Spindle it may take the containers. */
  private CheckpointDecision checkpoint(CheckpointNoticeView notice) throws Exception {
    Files.createDirectories(checkpointDir);
    Path file = checkpointDir.resolve(spec.name() + "-" + notice.noticeId() + ".ckpt");
    Files.writeString(file, "app=" + appId + " step=" + (1000 + 100 * succeeded) + "\n", StandardCharsets.UTF_8);
    String location = file.toUri().toString();
    notices.add(new Notice(notice.noticeId(), notice.containerIds(), notice.reason(), System.currentTimeMillis(),
        location));
    LOG.info("{}: checkpoint notice {} for {}; saved to {}", spec.name(), notice.noticeId(), notice.containerIds(),
        location);
    return CheckpointDecision.done(location, System.currentTimeMillis());
  }
}
