package io.spindle.yarn;

import static io.spindle.yarn.MiniClusterSupport.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.engine.EngineStatus;
import io.spindle.core.model.AppId;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ApplicationTimeoutType;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.YarnApplicationAttemptState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * CapacityScheduler keys that Spindle honours as CapacityScheduler does, through a real ResourceManager:
 * application priorities — asked at submission ({@code mapreduce.job.priority}, {@code spark.yarn.priority}), else
 * the queue's default, capped at the cluster's maximum, changed at runtime by {@code yarn application
 * -updatePriority}, the higher served first within a queue (and kept after an RM failover: {@link RmFailoverTest});
 * a STOPPED queue, which refuses submissions and may then be deleted by a refresh; {@code maximum-applications}.
 * Refusals carry CapacityScheduler's wording.
 */
class CapacitySchedulerKeysTest {

  private static MiniYARNCluster cluster;
  private static YarnClient client;
  private static YarnConfiguration conf;

  @BeforeAll
  static void start() throws Exception {
    YarnConfiguration c = new YarnConfiguration();
    MiniClusterSupport.spindleWithGpus(c, 4);
    c.setInt(YarnConfiguration.MAX_CLUSTER_LEVEL_APPLICATION_PRIORITY, 10);
    MiniClusterSupport.halvesAandB(c);
    String q = "yarn.scheduler.capacity.root.";
    c.set(q + "queues", "a,b,default,closed,retired,small,few,amq");
    c.set(q + "b.capacity", "30");
    c.set(q + "amq.capacity", "20");
    c.set(q + "amq.user-limit-factor", "-1");
    // CapacityScheduler's AM limit is a percentage of the larger of the guarantee and the current limit, which its
    // maximum bounds: at most 20% of 30% of the NodeManager's 4 GB (245 MB), while an AM takes 1 GB.
    c.set(q + "amq.maximum-am-resource-percent", "0.2");
    c.set(q + "amq.maximum-capacity", "30");
    c.set(q + "a.capacity", "40");
    c.set(q + "few.capacity", "10");
    c.set(q + "few.max-parallel-apps", "1");
    c.set(q + "few.user-limit-factor", "-1");
    c.set(q + "a.default-application-priority", "2");
    for (String stopped : List.of("closed", "retired")) {
      c.set(q + stopped + ".capacity", "0");
      c.set(q + stopped + ".state", "STOPPED");
    }
    c.set(q + "b.maximum-application-lifetime", "100");
    c.set(q + "small.capacity", "0");
    c.set(q + "small.maximum-applications", "3");
    conf = c;
    cluster = MiniClusterSupport.startCluster("cs-keys", c, 1);
    client = MiniClusterSupport.startClient(cluster.getConfig());
    MiniClusterSupport.awaitEngineGpus(cluster, 4);
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(client, cluster);
  }

  @Test
  void aSubmissionGetsTheQueueDefaultOrWhatItAskedCappedAtTheClusterMaximum() throws Exception {
    ApplicationId unasked = submit("unasked", null);
    ApplicationId asked = submit("asked", 9);
    ApplicationId above = submit("above", 20);
    assertThat(priority(unasked)).as("root.a's default-application-priority").isEqualTo(2);
    assertThat(priority(asked)).isEqualTo(9);
    assertThat(priority(above)).as("yarn.cluster.max-application-priority").isEqualTo(10);
    await(Duration.ofSeconds(20), () -> engine(above).map(EngineStatus.App::priority).orElse(-1) == 10);
    for (ApplicationId app : List.of(unasked, asked, above)) {
      client.killApplication(app);
    }
  }

  @Test
  void theHigherPriorityIsServedFirstAndAnUpdateReordersWhatWaits() throws Exception {
    try (UnmanagedAm holder = register("holder", 1)) {
      holder.ask(4, oneGpu());
      assertThat(holder.awaitHeld(4, Duration.ofSeconds(30))).isEqualTo(4);
      try (UnmanagedAm low = register("low", 1); UnmanagedAm high = register("high", 9);
          UnmanagedAm mid = register("mid", 5)) {
        for (UnmanagedAm am : List.of(low, high, mid)) {
          am.ask(1, oneGpu());
        }
        awaitWaiting(low, high, mid);

        holder.release(1);
        assertThat(high.awaitHeld(1, Duration.ofSeconds(30))).as("priority 9 before 5 and 1").isEqualTo(1);
        low.heartbeat();
        mid.heartbeat();
        assertThat(low.held()).isEmpty();
        assertThat(mid.held()).isEmpty();

        // yarn application -appId <low> -updatePriority 7: low now outranks mid.
        assertThat(client.updateApplicationPriority(low.applicationId(), Priority.newInstance(7)).getPriority())
            .isEqualTo(7);
        assertThat(priority(low.applicationId())).isEqualTo(7);
        await(Duration.ofSeconds(20), () -> engine(low.applicationId()).map(EngineStatus.App::priority)
            .orElse(-1) == 7);
        holder.release(1);
        assertThat(low.awaitHeld(1, Duration.ofSeconds(30))).as("the updated priority 7 before 5").isEqualTo(1);
        mid.heartbeat();
        assertThat(mid.held()).isEmpty();
      }
    }
  }

  @Test
  void aLifetimeAboveTheQueuesMaximumIsCappedAndNoneAskedGetsTheMaximum() throws Exception {
    ApplicationSubmissionContext ctx = client.createApplication().getApplicationSubmissionContext();
    ctx.setApplicationName("long");
    ctx.setQueue("b");
    ctx.setUnmanagedAM(true);
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
    ctx.setResource(org.apache.hadoop.yarn.api.records.Resource.newInstance(512, 1));
    ctx.setApplicationTimeouts(Map.of(ApplicationTimeoutType.LIFETIME, 1_000L));
    client.submitApplication(ctx);
    ApplicationId capped = ctx.getApplicationId();
    ApplicationId unasked = UnmanagedAm.submit(client, "unasked", "b", Set.of());
    assertThat(client.getApplicationReport(capped).getApplicationTimeouts().get(ApplicationTimeoutType.LIFETIME)
        .getRemainingTime()).as("seconds left: root.b's maximum, not the 1000 asked").isBetween(1L, 100L);
    assertThat(client.getApplicationReport(unasked).getApplicationTimeouts().get(ApplicationTimeoutType.LIFETIME)
        .getRemainingTime()).as("no default set: the maximum").isBetween(1L, 100L);
    client.killApplication(capped);
    client.killApplication(unasked);
  }

  @Test
  void beyondMaxParallelAppsAnApplicationWaitsUntilOneEnds() throws Exception {
    UnmanagedAm first = register("first", "few", 0);
    first.ask(1, oneGpu());
    assertThat(first.awaitHeld(1, Duration.ofSeconds(30))).isEqualTo(1);
    UnmanagedAm second = register("second", "few", 0);
    second.ask(1, oneGpu());
    assertThat(second.awaitHeld(1, Duration.ofSeconds(3))).as("root.few runs one application at most").isZero();
    SpindleScheduler spindle = (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
    assertThat(spindle.explain(second.applicationId()).text()).contains("max-parallel-apps (1)");
    first.close(); // The first ends: the second runs, with the asks it made while it waited.
    assertThat(second.awaitHeld(1, Duration.ofSeconds(30))).isEqualTo(1);
    second.close();
  }

  @Test
  void applicationMastersBeyondTheQueuesAmResourceLimitWaitUntilRoomFrees() throws Exception {
    ApplicationId first = submitManaged("am-1", "amq");
    awaitAttempt(first, YarnApplicationAttemptState.LAUNCHED);
    ApplicationId second = submitManaged("am-2", "amq");
    ApplicationId elsewhere = submitManaged("am-other", "a");
    awaitAttempt(elsewhere, YarnApplicationAttemptState.LAUNCHED);
    assertThat(attemptState(second)).as("the second AM's 1 GB is above root.amq's 245 MB AM limit; the first "
        + "of a queue always runs").isEqualTo(YarnApplicationAttemptState.SCHEDULED);
    SpindleScheduler spindle = (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
    assertThat(spindle.explain(second).text()).contains("Queue's AM resource limit exceeded");
    client.killApplication(first);
    awaitAttempt(second, YarnApplicationAttemptState.LAUNCHED);
    client.killApplication(second);
    client.killApplication(elsewhere);
  }

  @Test
  void aStoppedQueueRefusesSubmissionsWithCapacitySchedulersMessage() {
    assertThatThrownBy(() -> UnmanagedAm.submit(client, "late", "closed", Set.of()))
        .hasMessageContaining("Queue root.closed is STOPPED. Cannot accept submission of application: application_");
  }

  @Test
  void theApplicationBeyondMaximumApplicationsIsRefused() throws Exception {
    List<ApplicationId> three = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      three.add(UnmanagedAm.submit(client, "ok-" + i, "small", Set.of()));
    }
    assertThatThrownBy(() -> UnmanagedAm.submit(client, "fourth", "small", Set.of()))
        .hasMessageContaining("Queue root.small already has 3 applications, cannot accept submission of application");
    for (ApplicationId app : three) {
      client.killApplication(app);
    }
  }

  @Test
  void aRefreshMayDeleteAStoppedQueueButNotARunningOne() throws Exception {
    SpindleScheduler spindle = (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
    YarnConfiguration withoutB = new YarnConfiguration(conf);
    withoutB.set("yarn.scheduler.capacity.root.queues", "a,default,closed,retired,small,few,amq");
    withoutB.set("yarn.scheduler.capacity.root.a.capacity", "70");
    assertThatThrownBy(() -> spindle.reinitialize(withoutB, cluster.getResourceManager().getRMContext()))
        .hasMessageContaining("root.b cannot be deleted from the capacity scheduler configuration, as the queue is "
            + "not yet in stopped state. Current State : RUNNING");
    assertThat(client.getQueueInfo("root.retired")).isNotNull();

    YarnConfiguration withoutRetired = new YarnConfiguration(conf);
    withoutRetired.set("yarn.scheduler.capacity.root.queues", "a,b,default,closed,small,few,amq");
    spindle.reinitialize(withoutRetired, cluster.getResourceManager().getRMContext());
    assertThat(spindle.queueSnapshots()).extracting(q -> q.path()).doesNotContain("root.retired")
        .contains("root.closed");
    // The retired queue's keys stay in the file, as admins leave them: ignored, not an error.
    assertThat(client.getQueueInfo("root.closed").getQueueState())
        .isEqualTo(org.apache.hadoop.yarn.api.records.QueueState.STOPPED);
  }

  /** An application whose AM is a real container (a sleep that never registers: the test only watches it start). */
  private static ApplicationId submitManaged(String name, String queue) throws Exception {
    ApplicationSubmissionContext ctx = client.createApplication().getApplicationSubmissionContext();
    ctx.setApplicationName(name);
    ctx.setQueue(queue);
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, List.of("sleep 300"), null, null, null));
    ctx.setResource(org.apache.hadoop.yarn.api.records.Resource.newInstance(512, 1));
    client.submitApplication(ctx);
    return ctx.getApplicationId();
  }

  private static YarnApplicationAttemptState attemptState(ApplicationId app) throws Exception {
    ApplicationAttemptId attempt = client.getApplicationReport(app).getCurrentApplicationAttemptId();
    return attempt == null ? null : client.getApplicationAttemptReport(attempt).getYarnApplicationAttemptState();
  }

  private static void awaitAttempt(ApplicationId app, YarnApplicationAttemptState state) throws Exception {
    await(Duration.ofSeconds(30), () -> attemptState(app) == state);
  }

  /** Small enough in memory that the NodeManager's 4 GPUs, not its 4 GB, are what runs out. */
  private static org.apache.hadoop.yarn.api.records.Resource oneGpu() {
    org.apache.hadoop.yarn.api.records.Resource r = org.apache.hadoop.yarn.api.records.Resource.newInstance(512, 1);
    r.setResourceValue(MiniClusterSupport.GPU, 1);
    return r;
  }

  private static void awaitWaiting(UnmanagedAm... ams) throws Exception {
    await(Duration.ofSeconds(30), () -> {
      boolean all = true;
      for (UnmanagedAm am : ams) {
        am.heartbeat();
        all &= engine(am.applicationId()).map(a -> !a.requests().isEmpty()).orElse(false);
      }
      return all;
    });
  }

  private static ApplicationId submit(String name, Integer priority) throws Exception {
    return UnmanagedAm.submit(client, name, "a", Set.of(), false,
        priority == null ? null : Priority.newInstance(priority));
  }

  private static UnmanagedAm register(String name, int priority) throws Exception {
    return UnmanagedAm.register(client, cluster.getConfig(), submit(name, priority));
  }

  private static UnmanagedAm register(String name, String queue, int priority) throws Exception {
    return UnmanagedAm.register(client, cluster.getConfig(), UnmanagedAm.submit(client, name, queue, Set.of(), false,
        Priority.newInstance(priority)));
  }

  private static int priority(ApplicationId app) throws Exception {
    return client.getApplicationReport(app).getPriority().getPriority();
  }

  private static java.util.Optional<EngineStatus.App> engine(ApplicationId app) {
    SpindleScheduler s = (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
    return s.status().app(AppId.of(app.toString()));
  }
}
