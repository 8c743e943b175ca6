package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.PrivilegedExceptionAction;
import java.time.Duration;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Queue ACLs as YARN enforces them through Spindle ({@code yarn.acl.enable=true}), with users from Hadoop's
 * {@link UserGroupInformation} — no user is known to Spindle itself: who may submit to a queue, and who may
 * administer (kill) another user's application there. Each unauthorised action is denied with a reason.
 */
class QueueAclTest {

  private static MiniYARNCluster cluster;
  private static Configuration conf;

  @BeforeAll
  static void start() throws Exception {
    YarnConfiguration c = new YarnConfiguration();
    MiniClusterSupport.spindleWithGpus(c, 4);
    c.setBoolean(YarnConfiguration.YARN_ACL_ENABLE, true);
    // Cluster administrators may do anything; nobody in this test is one.
    c.set(YarnConfiguration.YARN_ADMIN_ACL, "yarnadmin");
    MiniClusterSupport.halvesAandB(c);
    String p = "yarn.scheduler.capacity.root.";
    c.set(p + "acl_submit_applications", " ");
    c.set(p + "acl_administer_queue", " ");
    c.set(p + "a.acl_submit_applications", "alice,carol");
    c.set(p + "a.acl_administer_queue", "carol");
    c.set(p + "b.acl_submit_applications", "bob");
    c.set(p + "b.acl_administer_queue", " ");
    cluster = MiniClusterSupport.startCluster("acls", c, 1);
    conf = cluster.getConfig();
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(cluster);
  }

  @Test
  void onlyTheSubmitAclMaySubmitToAQueue() throws Exception {
    assertThatThrownBy(() -> as("bob", client -> submit(client, "a")))
        .hasStackTraceContaining("User bob does not have permission to submit").hasStackTraceContaining("root.a");
    ApplicationId ok = as("alice", client -> submit(client, "a"));
    assertThat(ok).isNotNull();
    as("alice", client -> {
      client.killApplication(ok);
      return null;
    });
  }

  @Test
  void anotherUsersApplicationMayBeKilledByTheQueueAdministratorOnly() throws Exception {
    ApplicationId alices = as("alice", client -> submit(client, "a"));
    assertThatThrownBy(() -> as("bob", client -> {
      client.killApplication(alices);
      return null;
    })).hasStackTraceContaining("bob").hasStackTraceContaining("MODIFY_APP");
    assertThat(state(alices)).isNotEqualTo(YarnApplicationState.KILLED);

    as("carol", client -> {
      client.killApplication(alices);
      return null;
    });
    MiniClusterSupport.await(Duration.ofSeconds(20), () -> state(alices) == YarnApplicationState.KILLED);
  }

  @Test
  void aUserCannotAdministerAQueueWithoutItsAcl() throws Exception {
    SpindleScheduler spindle = (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
    assertThat(spindle.checkAccess(UserGroupInformation.createRemoteUser("carol"),
        org.apache.hadoop.yarn.api.records.QueueACL.ADMINISTER_QUEUE, "root.a")).isTrue();
    assertThat(spindle.checkAccess(UserGroupInformation.createRemoteUser("alice"),
        org.apache.hadoop.yarn.api.records.QueueACL.ADMINISTER_QUEUE, "root.a")).isFalse();
    assertThat(spindle.checkAccess(UserGroupInformation.createRemoteUser("carol"),
        org.apache.hadoop.yarn.api.records.QueueACL.ADMINISTER_QUEUE, "root.b")).isFalse();
  }

  private static YarnApplicationState state(ApplicationId app) throws Exception {
    return as("yarnadmin", client -> client.getApplicationReport(app).getYarnApplicationState());
  }

  @FunctionalInterface
  private interface ClientCall<T> {
    T call(YarnClient client) throws Exception;
  }

  /** Runs {@code call} with a YarnClient of {@code user}, as Hadoop's RPC authenticates it (simple auth here). */
  private static <T> T as(String user, ClientCall<T> call) throws Exception {
    return UserGroupInformation.createRemoteUser(user).doAs((PrivilegedExceptionAction<T>) () -> {
      YarnClient client = YarnClient.createYarnClient();
      client.init(conf);
      client.start();
      try {
        return call.call(client);
      } finally {
        client.stop();
      }
    });
  }

  private static ApplicationId submit(YarnClient client, String queue) throws Exception {
    ApplicationSubmissionContext ctx = client.createApplication().getApplicationSubmissionContext();
    ctx.setApplicationName("acl-" + queue);
    ctx.setQueue(queue);
    ctx.setUnmanagedAM(true);
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
    ctx.setResource(Resource.newInstance(1024, 1));
    client.submitApplication(ctx);
    return ctx.getApplicationId();
  }
}
