package io.spindle.yarn;

import java.security.PrivilegedExceptionAction;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
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
import org.apache.hadoop.yarn.api.records.PreemptionContainer;
import org.apache.hadoop.yarn.api.records.PreemptionMessage;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationAttemptState;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;

/**
 * An unmanaged ApplicationMaster for tests: speaks the real AMRM protocol as its attempt (AMRM token, attempt UGI),
 * asks for containers, collects what the scheduler hands out, releases some, and finishes.
 */
public final class UnmanagedAm implements AutoCloseable {
  // close() may block on the RM; tests call it from try-with-resources on their own thread.

  private final UserGroupInformation ugi;
  private final AMRMClient<ContainerRequest> client;
  private final List<Container> held = new ArrayList<>();
  /** Requests not yet matched by a container: like a well-behaved AM, one is withdrawn per container received. */
  private final java.util.ArrayDeque<ContainerRequest> open = new java.util.ArrayDeque<>();
  private final List<Integer> batches = new ArrayList<>();
  private int firstBatch = -1;

  private final List<ContainerStatus> completed = new java.util.concurrent.CopyOnWriteArrayList<>();
  private volatile Set<ContainerId> lastContract = Set.of();

  private final ApplicationId app;

  private UnmanagedAm(ApplicationId app, UserGroupInformation ugi, AMRMClient<ContainerRequest> client) {
    this.app = app;
    this.ugi = ugi;
    this.client = client;
  }

  public ApplicationId applicationId() {
    return app;
  }

  /** Submits an application with an unmanaged AM (the test registers as its AM with {@link #register}). */
  public static ApplicationId submit(YarnClient yarn, String name, String queue, Set<String> tags) throws Exception {
    return submit(yarn, name, queue, tags, false);
  }

  /** As {@link #submit(YarnClient, String, String, Set)}; {@code keepContainers} keeps them across attempts. */
  public static ApplicationId submit(YarnClient yarn, String name, String queue, Set<String> tags,
      boolean keepContainers) throws Exception {
    return submit(yarn, name, queue, tags, keepContainers, null);
  }

  /** As {@link #submit(YarnClient, String, String, Set, boolean)}, asking for {@code priority} ({@code null}: none). */
  public static ApplicationId submit(YarnClient yarn, String name, String queue, Set<String> tags,
      boolean keepContainers, Priority priority) throws Exception {
    ApplicationSubmissionContext ctx = yarn.createApplication().getApplicationSubmissionContext();
    if (priority != null) {
      ctx.setPriority(priority);
    }
    ctx.setKeepContainersAcrossApplicationAttempts(keepContainers);
    ctx.setApplicationName(name);
    ctx.setQueue(queue);
    ctx.setUnmanagedAM(true);
    ctx.setApplicationTags(tags);
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
    ctx.setResource(Resource.newInstance(1024, 1));
    yarn.submitApplication(ctx);
    return ctx.getApplicationId();
  }

  /** Waits for the application's attempt to be launched, then registers as its AM. */
  public static UnmanagedAm register(YarnClient yarn, Configuration conf, ApplicationId app) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      ApplicationReport r = yarn.getApplicationReport(app);
      if (r.getCurrentApplicationAttemptId() != null && yarn.getApplicationAttemptReport(
          r.getCurrentApplicationAttemptId()).getYarnApplicationAttemptState() == YarnApplicationAttemptState.LAUNCHED) {
        break;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("attempt of " + app + " never launched: " + r.getYarnApplicationState());
      }
      Thread.sleep(50);
    }
    ApplicationReport report = yarn.getApplicationReport(app);
    Token<AMRMTokenIdentifier> token = yarn.getAMRMToken(app);
    token.setService(ClientRMProxy.getAMRMTokenService(conf));
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(report.getCurrentApplicationAttemptId().toString());
    ugi.addToken(token);
    AMRMClient<ContainerRequest> client = ugi.doAs((PrivilegedExceptionAction<AMRMClient<ContainerRequest>>) () -> {
      AMRMClient<ContainerRequest> c = AMRMClient.createAMRMClient();
      c.init(conf);
      c.start();
      c.registerApplicationMaster("localhost", 0, "");
      return c;
    });
    return new UnmanagedAm(app, ugi, client);
  }

  public void ask(int containers, Resource each) {
    ask(containers, each, null);
  }

  /** As {@link #ask(int, Resource)}, on nodes of {@code label} ({@code null}: the queue's default). */
  public void ask(int containers, Resource each, String label) {
    for (int i = 0; i < containers; i++) {
      ContainerRequest request = new ContainerRequest(each, null, null, Priority.newInstance(label == null ? 1 : 2),
          true, label);
      client.addContainerRequest(request);
      open.add(request);
    }
  }

  /** Withdraws every request not yet matched by a container (sent with the next heartbeat). */
  public void withdraw() {
    while (!open.isEmpty()) {
      client.removeContainerRequest(open.poll());
    }
  }

  /** Heartbeats until {@code count} containers are held or the timeout passes; returns how many are held. */
  public int awaitHeld(int count, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (held.size() < count && System.nanoTime() < deadline) {
      heartbeat();
      Thread.sleep(100);
    }
    return held.size();
  }

  /** One heartbeat; returns the containers it brought. */
  public List<Container> heartbeat() throws Exception {
    AllocateResponse response = ugi.doAs((PrivilegedExceptionAction<AllocateResponse>) () -> client.allocate(0.5f));
    List<Container> got = response.getAllocatedContainers();
    if (!got.isEmpty() && firstBatch < 0) {
      firstBatch = got.size();
    }
    if (!got.isEmpty()) {
      batches.add(got.size());
    }
    for (int i = 0; i < got.size() && !open.isEmpty(); i++) {
      client.removeContainerRequest(open.poll());
    }
    held.addAll(got);
    for (ContainerStatus s : response.getCompletedContainersStatuses()) {
      completed.add(s);
      held.removeIf(c -> c.getId().equals(s.getContainerId()));
    }
    PreemptionMessage message = response.getPreemptionMessage();
    lastContract = message == null || message.getStrictContract() == null ? Set.of()
        : message.getStrictContract().getContainers().stream().map(PreemptionContainer::getId)
            .collect(Collectors.toSet());
    return got;
  }

  /** Containers that ended, with their exit status, as the RM reported them. */
  public List<ContainerStatus> completed() {
    return completed;
  }

  /** The containers the last allocate answer's strict preemption contract named. */
  public Set<ContainerId> lastContract() {
    return lastContract;
  }

  /** The password of this AM's AMRMToken: the secret Spindle's checkpoint client authenticates with. */
  public byte[] amRmTokenPassword() {
    return ugi.getTokens().stream().filter(t -> t.getKind().equals(AMRMTokenIdentifier.KIND_NAME))
        .findFirst().orElseThrow().getPassword();
  }

  /** Gives back {@code n} held containers. */
  public void release(int n) throws Exception {
    for (int i = 0; i < n && !held.isEmpty(); i++) {
      ContainerId id = held.remove(held.size() - 1).getId();
      client.releaseAssignedContainer(id);
    }
    heartbeat();
  }

  /** Requests asked and not yet matched by a container (what the next heartbeat's ask still counts). */
  public int openRequests() {
    return open.size();
  }

  public List<Container> held() {
    return held;
  }

  /** Sizes of the non-empty batches of containers, in order: a gang arrives in one. */
  public List<Integer> batches() {
    return batches;
  }

  /** Size of the first non-empty batch of containers: a gang arrives in one. */
  public int firstBatch() {
    return firstBatch;
  }

  @Override
  public void close() throws java.io.IOException, org.apache.hadoop.yarn.exceptions.YarnException {
    try {
      ugi.doAs((PrivilegedExceptionAction<Void>) () -> {
        client.unregisterApplicationMaster(FinalApplicationStatus.SUCCEEDED, "done", "");
        return null;
      });
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      client.stop();
    }
  }
}
