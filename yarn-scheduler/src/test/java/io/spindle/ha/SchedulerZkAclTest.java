package io.spindle.ha;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.channel.mig.MigStatePaths;
import io.spindle.channel.mig.MigStateStore;
import io.spindle.ha.avro.MigLayoutRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * With a ZooKeeper identity configured, what only the leading scheduler may write — the leader epoch, the latch,
 * the scheduler state, desired MIG layouts it wrote — is refused to any other ZooKeeper client, which may still read
 * it. Without one (a made-up identity), the znodes are open, as the admin guide warns.
 */
class SchedulerZkAclTest {

  private static final String ROOT = "/spindle/acl-test";
  private TestingServer server;
  private SchedulerZk zk;
  private SchedulerLeadership leadership;
  private CuratorFramework rogue;

  @BeforeEach
  void start() throws Exception {
    server = new TestingServer(true);
    SchedulerZkIdentity identity = SchedulerZkIdentity.digest("spindle-rm", "s3cret");
    Configuration conf = new Configuration(false);
    zk = SchedulerZk.connect(new ZkSettings(server.getConnectString(), ROOT), identity, conf);
    java.util.concurrent.BlockingQueue<Long> elected = new java.util.concurrent.LinkedBlockingQueue<>();
    leadership = SchedulerLeadership.start(zk.client(), ROOT, "rm1", identity.schedulerOnlyAcl(),
        new SchedulerLeadership.Listener() {
          @Override
          public void elected(long epoch, long heldSince) {
            elected.add(epoch);
          }

          @Override
          public void deposed(String why) {}
        }, System::currentTimeMillis);
    assertThat(elected.poll(10, TimeUnit.SECONDS)).isEqualTo(1L);
    new SchedulerStateStore(zk.client(), ROOT, leadership, identity.schedulerOnlyAcl())
        .write(leadership.term(), "state".getBytes(StandardCharsets.UTF_8));
    new MigStateStore(zk.client(), ROOT, leadership.currentFence(), identity.schedulerOnlyAcl())
        .writeDesired(new MigLayoutRecord("node-1", 0, true, List.of(), 1L, 0L, null, null, -1, null, "exclusive", 0L, "HEALTHY", List.of()));
    rogue = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
    rogue.start();
    assertThat(rogue.blockUntilConnected((int) Duration.ofSeconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
  }

  @AfterEach
  void stop() throws Exception {
    rogue.close();
    leadership.close();
    zk.close();
    server.close();
  }

  @Test
  void anotherClientCanReadButNeitherChangeNorDeleteWhatTheSchedulerOwns() throws Exception {
    String epoch = ROOT + "/leader/epoch";
    String state = ROOT + "/scheduler/state";
    String desired = new MigStatePaths(ROOT).desired("node-1", 0);
    for (String path : List.of(epoch, state, desired)) {
      assertThat(rogue.getData().forPath(path)).as("%s is world-readable", path).isNotEmpty();
      assertThatThrownBy(() -> rogue.setData().forPath(path, new byte[] {1})).as("overwrite %s", path)
          .isInstanceOf(KeeperException.NoAuthException.class);
    }
    assertThatThrownBy(() -> rogue.delete().forPath(epoch)).as("reset the fence by deleting the epoch")
        .isInstanceOf(KeeperException.NoAuthException.class);
    assertThatThrownBy(() -> rogue.delete().forPath(state)).isInstanceOf(KeeperException.NoAuthException.class);
    String latch = ROOT + "/leader/latch";
    for (String candidate : rogue.getChildren().forPath(latch)) {
      assertThatThrownBy(() -> rogue.delete().forPath(latch + "/" + candidate)).as("depose the leader")
          .isInstanceOf(KeeperException.NoAuthException.class);
    }
    assertThatThrownBy(() -> rogue.create().forPath(latch + "/fake-candidate"))
        .isInstanceOf(KeeperException.NoAuthException.class);
    assertThat(leadership.isLeading()).isTrue();
  }

  @Test
  void aDesiredLayoutSomeoneElseCreatedIsTakenBackWhenTheSchedulerWritesIt() throws Exception {
    String path = new MigStatePaths(ROOT).desired("node-2", 0);
    rogue.create().creatingParentsIfNeeded().forPath(path, new byte[] {1});
    SchedulerZkIdentity identity = SchedulerZkIdentity.digest("spindle-rm", "s3cret");
    new MigStateStore(zk.client(), ROOT, leadership.currentFence(), identity.schedulerOnlyAcl())
        .writeDesired(new MigLayoutRecord("node-2", 0, true, List.of(), 1L, 0L, null, null, -1, null, "exclusive", 0L, "HEALTHY", List.of()));
    assertThatThrownBy(() -> rogue.setData().forPath(path, new byte[] {2}))
        .isInstanceOf(KeeperException.NoAuthException.class);
  }
}
