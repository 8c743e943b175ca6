package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.PrivilegedExceptionAction;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationAttemptState;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Spindle as the scheduler of a real MiniYARNCluster (1 RM, 2 NodeManagers with 8 GPUs each), driven through the
 * real client and AMRM protocols with unmanaged ApplicationMasters.
 */
class SpindleSchedulerMiniClusterTest {

  private static final String GPU = "yarn.io/gpu";
  private static MiniYARNCluster cluster;
  private static YarnClient client;
  private static Configuration conf;

  @BeforeAll
  static void startCluster() throws Exception {
    YarnConfiguration c = new YarnConfiguration();
    c.set(YarnConfiguration.RM_SCHEDULER, SpindleScheduler.class.getName());
    c.set(YarnConfiguration.RESOURCE_TYPES, GPU);
    c.set("yarn.nodemanager.resource-type." + GPU, "8");
    c.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 65_536);
    c.setInt(YarnConfiguration.NM_VCORES, 32);
    c.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, 65_536);
    c.setInt(YarnConfiguration.NM_LOG_RETAIN_SECONDS, 0);
    c.setBoolean(YarnConfiguration.YARN_ACL_ENABLE, true);
    c.set(YarnConfiguration.YARN_ADMIN_ACL, "*");
    // The test jar ships a capacity-scheduler.xml with a 'default' queue; it stays, with no capacity.
    String p = "yarn.scheduler.capacity.root.";
    c.set(p + "queues", "a,b,default");
    c.set(p + "a.capacity", "50");
    c.set(p + "b.capacity", "50");
    c.set(p + "default.capacity", "0");
    c.set(p + "a.user-limit-factor", "-1");
    c.set(p + "b.user-limit-factor", "-1");
    c.set(p + "acl_submit_applications", " ");
    c.set(p + "acl_administer_queue", " ");
    c.set(p + "a.acl_submit_applications", "*");
    c.set(p + "default.acl_submit_applications", "*");
    c.set(p + "b.acl_submit_applications", "alice");
    QueueMetrics.clearQueueMetrics();
    ResourceUtils.resetResourceTypes(c);
    cluster = new MiniYARNCluster("spindle", 1, 2, 1, 1);
    cluster.init(c);
    cluster.start();
    conf = cluster.getConfig();
    client = YarnClient.createYarnClient();
    client.init(conf);
    client.start();
    waitFor(() -> client.getNodeReports(NodeState.RUNNING).size() == 2, Duration.ofSeconds(30));
  }

  @AfterAll
  static void stopCluster() {
    if (client != null) {
      client.stop();
    }
    if (cluster != null) {
      cluster.stop();
    }
  }

  @Test
  void nodesAdvertiseGpusAndQueuesAreVisible() throws Exception {
    for (NodeReport n : client.getNodeReports(NodeState.RUNNING)) {
      assertThat(n.getCapability().getResourceValue(GPU)).isEqualTo(8);
    }
    QueueInfo a = client.getQueueInfo("a");
    assertThat(a.getQueuePath()).isEqualTo("root.a");
    assertThat(a.getCapacity()).isEqualTo(0.5f);
  }

  @Test
  void aGangOfFourFourGpuContainersArrivesAllAtOnce() throws Exception {
    ApplicationId app = submit("gang", "a", Set.of("spindle.gang.size=4"));
    List<Container> containers = runAm(app, am -> {
      for (int i = 0; i < 4; i++) {
        am.addContainerRequest(new ContainerRequest(gpus(4), null, null, Priority.newInstance(1)));
      }
    }, 4);
    assertThat(containers).hasSize(4);
    assertThat(containers).allMatch(c -> c.getResource().getResourceValue(GPU) == 4);
    // The first non-empty answer held the whole gang (see runAm): never part of it.
    assertThat(lastFirstBatch).isEqualTo(4);
  }

  @Test
  void anUnknownQueueIsRejectedWithAReadableDiagnostic() {
    // YarnClient waits for the verdict and raises the diagnostic to the submitter, as for any rejected submission.
    assertThatThrownBy(() -> submit("lost", "nosuch", Set.of()))
        .hasMessageContaining("unknown queue 'nosuch'").hasMessageContaining("root.a");
  }

  @Test
  void anImpossibleGangIsRejectedAtOnce() throws Exception {
    ApplicationId app = submit("too-big", "a", Set.of("spindle.gang.size=5"));
    runAm(app, am -> {
      for (int i = 0; i < 5; i++) {
        am.addContainerRequest(new ContainerRequest(gpus(4), null, null, Priority.newInstance(1)));
      }
    }, 0);
    ApplicationReport r = waitForState(app, YarnApplicationState.KILLED);
    assertThat(r.getDiagnostics()).contains("Spindle rejected").contains("larger than the cluster");
  }

  @Test
  void aUserOutsideTheSubmitAclIsDenied() {
    UserGroupInformation bob = UserGroupInformation.createRemoteUser("bob");
    assertThatThrownBy(() -> bob.doAs((PrivilegedExceptionAction<ApplicationId>) () -> {
      YarnClient asBob = YarnClient.createYarnClient();
      asBob.init(conf);
      asBob.start();
      try {
        ApplicationSubmissionContext ctx = asBob.createApplication().getApplicationSubmissionContext();
        ctx.setApplicationName("denied");
        ctx.setQueue("b");
        ctx.setUnmanagedAM(true);
        ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
        ctx.setResource(Resource.newInstance(1024, 1));
        asBob.submitApplication(ctx);
        return ctx.getApplicationId();
      } finally {
        asBob.stop();
      }
    })).hasStackTraceContaining("User bob does not have permission to submit").hasStackTraceContaining("root.b");
  }

  // ------------------------------------------------------------------ helpers

  private static volatile int lastFirstBatch;

  interface Asks {
    void add(AMRMClient<ContainerRequest> am) throws Exception;
  }

  private static Resource gpus(int n) {
    Resource r = Resource.newInstance(2048, 1);
    r.setResourceValue(GPU, n);
    return r;
  }

  private static ApplicationId submit(String name, String queue, Set<String> tags) throws Exception {
    ApplicationSubmissionContext ctx = client.createApplication().getApplicationSubmissionContext();
    ctx.setApplicationName(name);
    ctx.setQueue(queue);
    ctx.setUnmanagedAM(true);
    ctx.setApplicationTags(tags);
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
    ctx.setResource(Resource.newInstance(1024, 1));
    client.submitApplication(ctx);
    return ctx.getApplicationId();
  }

  /** Runs an unmanaged AM for the application until {@code expected} containers arrived (or 15 s for 0). */
  private static List<Container> runAm(ApplicationId app, Asks asks, int expected) throws Exception {
    waitFor(() -> {
      ApplicationReport r = client.getApplicationReport(app);
      return r.getCurrentApplicationAttemptId() != null && client.getApplicationAttemptReport(
          r.getCurrentApplicationAttemptId()).getYarnApplicationAttemptState() == YarnApplicationAttemptState.LAUNCHED;
    }, Duration.ofSeconds(30));
    ApplicationReport report = client.getApplicationReport(app);
    Token<AMRMTokenIdentifier> token = client.getAMRMToken(app);
    token.setService(ClientRMProxy.getAMRMTokenService(conf));
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(report.getCurrentApplicationAttemptId().toString());
    ugi.addToken(token);
    return ugi.doAs((PrivilegedExceptionAction<List<Container>>) () -> {
      AMRMClient<ContainerRequest> am = AMRMClient.createAMRMClient();
      am.init(conf);
      am.start();
      List<Container> got = new ArrayList<>();
      try {
        am.registerApplicationMaster("localhost", 0, "");
        asks.add(am);
        long deadline = System.nanoTime() + Duration.ofSeconds(expected == 0 ? 5 : 30).toNanos();
        int firstBatch = -1;
        while (got.size() < Math.max(1, expected) && System.nanoTime() < deadline) {
          AllocateResponse response = am.allocate(0.1f);
          if (!response.getAllocatedContainers().isEmpty() && firstBatch < 0) {
            firstBatch = response.getAllocatedContainers().size();
          }
          got.addAll(response.getAllocatedContainers());
          Thread.sleep(100);
        }
        lastFirstBatch = firstBatch;
        if (expected > 0) {
          am.unregisterApplicationMaster(FinalApplicationStatus.SUCCEEDED, "done", "");
        }
      } catch (Exception e) {
        if (expected > 0) {
          throw e;
        }
      } finally {
        am.stop();
      }
      return got;
    });
  }

  private static ApplicationReport waitForState(ApplicationId app, YarnApplicationState state) throws Exception {
    waitFor(() -> client.getApplicationReport(app).getYarnApplicationState() == state, Duration.ofSeconds(30));
    return client.getApplicationReport(app);
  }

  interface Check {
    boolean ok() throws Exception;
  }

  private static void waitFor(Check check, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!check.ok()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within " + timeout);
      }
      Thread.sleep(100);
    }
  }

  @SuppressWarnings("unused")
  private static final EnumSet<YarnApplicationState> DONE =
      EnumSet.of(YarnApplicationState.FINISHED, YarnApplicationState.FAILED, YarnApplicationState.KILLED);
}
