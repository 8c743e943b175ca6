package io.spindle.yarn;

import static io.spindle.yarn.MiniClusterSupport.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.spindle.core.engine.EngineStatus;
import io.spindle.core.engine.QueueSnapshot;
import io.spindle.core.model.AppId;
import java.lang.reflect.UndeclaredThrowableException;
import java.security.PrivilegedExceptionAction;
import java.time.Duration;
import java.util.Set;
import org.apache.hadoop.security.Groups;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * CapacityScheduler's queue mappings and auto-created queues under Spindle, through a real ResourceManager: a user
 * mapping ({@code u:alice:research}), a group mapping ({@code g:ml:ml}, groups from Hadoop's static mapping), a
 * {@code %user} mapping that creates the user's leaf under a legacy managed parent and one under a flexible (v2)
 * parent, the rules deciding only for applications submitted to {@code default} (override off), and created queues
 * that take work, show in {@code yarn queue -status} and survive a refresh.
 */
class QueueMappingsTest {

  private static MiniYARNCluster cluster;
  private static YarnConfiguration conf;

  @BeforeAll
  static void start() throws Exception {
    YarnConfiguration c = new YarnConfiguration();
    MiniClusterSupport.spindleWithGpus(c, 4);
    c.set("hadoop.user.group.static.mapping.overrides", "alice=staff;bob=staff,ml;carol=staff;erin=staff;hana=design");
    // The groups service is one per JVM, made by the first user of it: load it with this configuration, as
    // `yarn rmadmin -refreshUserToGroupsMappings` does after an admin edits core-site.xml.
    Groups.getUserToGroupsMappingServiceWithLoadedConfiguration(c);
    String q = "yarn.scheduler.capacity.root.";
    c.set(q + "queues", "default,research,ml,users,teams");
    for (String leaf : new String[] {"default", "research", "ml", "users", "teams"}) {
      c.set(q + leaf + ".capacity", "20");
    }
    c.set(q + "users.auto-create-child-queue.enabled", "true");
    c.set(q + "users.leaf-queue-template.capacity", "50");
    c.set(q + "users.leaf-queue-template.user-limit-factor", "-1");
    c.set(q + "teams.auto-queue-creation-v2.enabled", "true");
    c.set("yarn.scheduler.capacity.queue-mappings",
        "u:alice:research,g:ml:ml,u:erin:root.teams.%user,u:frank:root.teams.%user,"
            + "u:hana:root.teams.%primary_group.%user,u:%user:root.users.%user");
    // CapacityScheduler's deletion policy for idle flexible queues, which Spindle runs itself.
    c.setBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, true);
    c.set(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES,
        "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.AutoCreatedQueueDeletionPolicy");
    c.set("yarn.scheduler.capacity.auto-queue-creation-v2.queue-expiration-time", "1");
    conf = c;
    cluster = MiniClusterSupport.startCluster("queue-mappings", c, 1);
    MiniClusterSupport.awaitEngineGpus(cluster, 4);
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(null, cluster);
  }

  @Test
  void aUserMappingPlacesAliceInResearch() throws Exception {
    ApplicationId app = submitAs("alice", "default");
    assertThat(engineQueue(app)).isEqualTo("root.research");
  }

  @Test
  void aGroupMappingPlacesAMemberOfMlInMl() throws Exception {
    ApplicationId app = submitAs("bob", "default");
    assertThat(engineQueue(app)).isEqualTo("root.ml");
  }

  @Test
  void aQueueTheUserNamesIsKeptWhenMappingsMayNotOverride() throws Exception {
    ApplicationId app = submitAs("alice", "ml");
    assertThat(engineQueue(app)).isEqualTo("root.ml");
  }

  @Test
  void aPercentUserMappingCreatesTheUsersLeafUnderTheManagedParentAndItTakesWork() throws Exception {
    ApplicationId app = submitAs("carol", "default");
    assertThat(engineQueue(app)).isEqualTo("root.users.carol");
    SpindleScheduler spindle = spindle();
    QueueSnapshot carol = spindle.queueSnapshots().stream().filter(s -> s.path().equals("root.users.carol"))
        .findFirst().orElseThrow();
    assertThat(carol.guarantee().gpus()).as("50% of root.users' 20% of 4 GPUs").isCloseTo(0.4, within(1e-6));
    UserGroupInformation carolUgi = UserGroupInformation.createRemoteUser("carol");
    try (YarnClient yarn = carolUgi.doAs((PrivilegedExceptionAction<YarnClient>) () ->
            MiniClusterSupport.startClient(cluster.getConfig()));
        UnmanagedAm am = carolUgi.doAs((PrivilegedExceptionAction<UnmanagedAm>) () ->
            UnmanagedAm.register(yarn, cluster.getConfig(), app))) {
      assertThat(yarn.getQueueInfo("root.users.carol")).isNotNull();
      Resource oneGpu = Resource.newInstance(512, 1);
      oneGpu.setResourceValue(MiniClusterSupport.GPU, 1);
      am.ask(1, oneGpu);
      assertThat(am.awaitHeld(1, Duration.ofSeconds(30))).as("a container in the created queue").isEqualTo(1);
    }
    // A refresh of the file, which never names carol's queue, keeps it: it was created, not removed.
    spindle.reinitialize(new YarnConfiguration(conf), cluster.getResourceManager().getRMContext());
    assertThat(spindle.queueSnapshots()).extracting(QueueSnapshot::path).contains("root.users.carol");
  }

  @Test
  void aFlexibleParentCreatesTheLeafItsMappingNames() throws Exception {
    ApplicationId app = submitAs("erin", "default");
    assertThat(engineQueue(app)).isEqualTo("root.teams.erin");
  }

  @Test
  void aFlexibleParentCreatesTheMissingGroupParentWithTheUsersLeafAndBothGoWhenIdle() throws Exception {
    ApplicationId app = submitAs("hana", "default");
    assertThat(engineQueue(app)).isEqualTo("root.teams.design.hana");
    assertThat(spindle().queueSnapshots()).extracting(QueueSnapshot::path).contains("root.teams.design");
    try (YarnClient yarn = MiniClusterSupport.startClient(cluster.getConfig())) {
      yarn.killApplication(app);
    }
    await(Duration.ofSeconds(30), () -> spindle().queueSnapshots().stream()
        .noneMatch(q -> q.path().startsWith("root.teams.design")));
  }

  @Test
  void anIdleFlexibleQueueIsRemovedAfterItsExpirationWhereTheDeletionPolicyIsOn() throws Exception {
    ApplicationId app = submitAs("frank", "default");
    ApplicationId legacy = submitAs("gina", "default");
    assertThat(engineQueue(app)).isEqualTo("root.teams.frank");
    assertThat(engineQueue(legacy)).isEqualTo("root.users.gina");
    try (YarnClient yarn = MiniClusterSupport.startClient(cluster.getConfig())) {
      yarn.killApplication(app);
      yarn.killApplication(legacy);
    }
    await(Duration.ofSeconds(30), () -> spindle().queueSnapshots().stream()
        .noneMatch(q -> q.path().equals("root.teams.frank")));
    assertThat(spindle().queueSnapshots()).extracting(QueueSnapshot::path)
        .as("a legacy created queue stays, as in CapacityScheduler").contains("root.users.gina");
  }

  @Test
  void noApplicationGoesToAManagedParentItself() {
    assertThatThrownBy(() -> submitAs("alice", "users")).hasMessageContaining("is a parent queue");
  }

  private static SpindleScheduler spindle() {
    return (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
  }

  /** Submits as {@code user}, as that user's own client does (the RM takes the user from the connection). */
  private static ApplicationId submitAs(String user, String queue) throws Exception {
    try {
      return UserGroupInformation.createRemoteUser(user).doAs((PrivilegedExceptionAction<ApplicationId>) () -> {
        try (YarnClient yarn = MiniClusterSupport.startClient(cluster.getConfig())) {
          return UnmanagedAm.submit(yarn, user + "-job", queue, Set.of());
        }
      });
    } catch (UndeclaredThrowableException e) {
      throw (Exception) e.getCause(); // A YarnException: the submission's refusal.
    }
  }

  private static String engineQueue(ApplicationId app) throws Exception {
    await(Duration.ofSeconds(20), () -> spindle().status().app(AppId.of(app.toString())).isPresent());
    return spindle().status().app(AppId.of(app.toString())).map(EngineStatus.App::queue).orElseThrow();
  }
}
