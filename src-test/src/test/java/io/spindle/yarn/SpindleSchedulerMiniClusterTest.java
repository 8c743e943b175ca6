package io.spindle.yarn;

import static io.spindle.yarn.MiniClusterSupport.gpus;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.PrivilegedExceptionAction;
import java.time.Duration;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.server.api.protocolrecords.UpdateNodeResourceRequest;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
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
    // Queue b admits alice and the user running the tests; bob is refused.
    c.set(p + "b.acl_submit_applications", "alice," + UserGroupInformation.getCurrentUser().getShortUserName());
    cluster = MiniClusterSupport.startCluster("spindle", c, 2);
    conf = cluster.getConfig();
    client = MiniClusterSupport.startClient(conf);
    waitFor(() -> client.getNodeReports(NodeState.RUNNING).size() == 2, Duration.ofSeconds(30));
    MiniClusterSupport.awaitEngineGpus(cluster, 16);
  }

  @AfterAll
  static void stopCluster() throws Exception {
    MiniClusterSupport.stopAll(client, cluster);
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
    try (UnmanagedAm am = UnmanagedAm.register(client, conf, app)) {
      am.ask(4, gpus(4));
      assertThat(am.awaitHeld(4, Duration.ofSeconds(30))).isEqualTo(4);
      assertThat(am.held()).allMatch(c -> c.getResource().getResourceValue(GPU) == 4);
      // The first non-empty answer held the whole gang: never part of it.
      assertThat(am.firstBatch()).isEqualTo(4);
    }
  }

  @Test
  void twoQueuesWithEqualGuaranteesConvergeToHalfTheGpusEach() throws Exception {
    ApplicationId first = submit("borrower", "a", Set.of());
    try (UnmanagedAm a = UnmanagedAm.register(client, conf, first)) {
      // Alone, queue a borrows every GPU.
      a.ask(16, gpus(1));
      assertThat(a.awaitHeld(16, Duration.ofSeconds(30))).isEqualTo(16);
      try (UnmanagedAm b = UnmanagedAm.register(client, conf, submitTo("owner-b", "b"))) {
        b.ask(16, gpus(1));
        assertThat(b.awaitHeld(1, Duration.ofSeconds(2))).isZero();
        // a keeps asking; as its containers end, the freed GPUs go to b, below its fair share, until 8 / 8.
        a.release(8);
        a.ask(8, gpus(1));
        assertThat(b.awaitHeld(8, Duration.ofSeconds(30))).isEqualTo(8);
        a.awaitHeld(9, Duration.ofSeconds(2));
        assertThat(a.held()).hasSize(8);
        assertThat(b.held()).hasSize(8);
      }
    }
  }

  @Test
  void anImpossibleGangIsRejectedAtOnce() throws Exception {
    ApplicationId app = submit("too-big", "a", Set.of("spindle.gang.size=5"));
    UnmanagedAm am = UnmanagedAm.register(client, conf, app);
    am.ask(5, gpus(4));
    try {
      am.awaitHeld(1, Duration.ofSeconds(3));
    } catch (Exception expected) {
      // The attempt may be gone already when the application is killed.
    }
    ApplicationReport r = waitForState(app, YarnApplicationState.KILLED);
    assertThat(r.getDiagnostics()).contains("Spindle rejected").contains("larger than the cluster");
  }

  @Test
  void anUnknownQueueIsRejectedWithAReadableDiagnostic() {
    // YarnClient waits for the verdict and raises the diagnostic to the submitter, as for any rejected submission.
    assertThatThrownBy(() -> submit("lost", "nosuch", Set.of()))
        .hasMessageContaining("unknown queue 'nosuch'").hasMessageContaining("root.a");
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

  @Test
  void anAdminResourceUpdateReachesTheEngine() throws Exception {
    NodeReport first = client.getNodeReports(NodeState.RUNNING).get(0);
    Resource smaller = Resource.newInstance(first.getCapability());
    smaller.setResourceValue(GPU, 2);
    updateNode(first, smaller);
    try {
      ApplicationId app = submit("after-update", "a", Set.of());
      try (UnmanagedAm am = UnmanagedAm.register(client, conf, app)) {
        am.ask(12, gpus(1));
        // 8 GPUs on one node, 2 left on the updated one: ten containers and not one more.
        assertThat(am.awaitHeld(10, Duration.ofSeconds(30))).isEqualTo(10);
        assertThat(am.awaitHeld(11, Duration.ofSeconds(2))).isEqualTo(10);
        assertThat(am.held().stream().filter(c -> c.getNodeId().equals(first.getNodeId()))).hasSize(2);
      }
    } finally {
      updateNode(first, first.getCapability());
    }
    // The engine re-reads the node once its containers are gone; the next test must not see it half-sized. Not in
    // the finally block: a failure there hid the one of the case itself.
    try {
      MiniClusterSupport.awaitEngineGpus(cluster, 16);
    } catch (AssertionError e) {
      // Seen about one run in five on a loaded machine (docs/reliability.md): say what YARN still has on the node.
      var node = cluster.getResourceManager().getResourceScheduler().getSchedulerNode(first.getNodeId());
      throw new AssertionError("the engine never re-read " + first.getNodeId() + "; YARN's node holds "
          + (node == null ? "nothing (gone)" : node.getNumContainers() + " containers "
              + node.getCopiedListOfRunningContainers() + " of " + node.getTotalResource()), e);
    }
  }

  // ------------------------------------------------------------------ helpers

  /** What {@code yarn rmadmin -updateNodeResource} does. */
  private static void updateNode(NodeReport node, Resource to) throws Exception {
    cluster.getResourceManager().getRMContext().getRMAdminService().updateNodeResource(UpdateNodeResourceRequest.newInstance(
        java.util.Map.of(node.getNodeId(), ResourceOption.newInstance(to, -1))));
  }

  private static ApplicationId submitTo(String name, String queue) throws Exception {
    return submit(name, queue, Set.of());
  }

  private static ApplicationId submit(String name, String queue, Set<String> tags) throws Exception {
    return UnmanagedAm.submit(client, name, queue, tags);
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
}
