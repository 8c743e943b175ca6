package io.spindle.ha;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.channel.mig.MigStateStore;
import io.spindle.ha.avro.LeaderEpochRecord;
import io.spindle.ha.avro.MigLayoutRecord;
import io.spindle.testing.ZooKeeperEnsembles;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Leader election and fenced state writes on a real 3-server ZooKeeper ensemble. The leader's "crash" is a network
 * partition: it talks to one server only, and that server is stopped, so its session expires on the quorum while it
 * can still believe it leads.
 */
class SchedulerLeadershipTest {

  private static final int SESSION_MS = 3_000;
  private static TestingCluster ensemble;
  private static int tests;
  private String root;
  private final java.util.List<AutoCloseable> open = new java.util.ArrayList<>();

  /** One scheduler instance: its own session, leadership and state store, and what its listener heard. */
  private record Instance(CuratorFramework client, SchedulerLeadership leadership, SchedulerStateStore store,
      BlockingQueue<String> heard) {}

  @BeforeAll
  static void startEnsemble() throws Exception {
    ensemble = ZooKeeperEnsembles.startServing(3);
  }

  @AfterAll
  static void stopEnsemble() throws Exception {
    ensemble.close();
  }

  @BeforeEach
  void ownRoot() {
    root = "/spindle/test-" + (++tests);
  }

  @AfterEach
  void closeInstances() {
    for (int i = open.size() - 1; i >= 0; i--) {
      try {
        open.get(i).close();
      } catch (Exception ignored) {
        // Best effort: a partitioned client may fail to close cleanly.
      }
    }
  }

  private Instance instance(String id, String connect) throws Exception {
    CuratorFramework client = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(SESSION_MS)
        .connectionTimeoutMs(1_000).retryPolicy(new RetryNTimes(100, 200)).build();
    client.start();
    assertThat(client.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
    open.add(client);
    BlockingQueue<String> heard = new LinkedBlockingQueue<>();
    SchedulerLeadership leadership = SchedulerLeadership.start(client, root, id, ZooDefs.Ids.OPEN_ACL_UNSAFE,
        new SchedulerLeadership.Listener() {
          @Override
          public void elected(long epoch, long heldSince) {
            heard.add("elected " + epoch);
          }

          @Override
          public void deposed(String why) {
            heard.add("deposed " + why);
          }
        }, System::currentTimeMillis);
    open.add(leadership);
    return new Instance(client, leadership, new SchedulerStateStore(client, root, leadership,
        ZooDefs.Ids.OPEN_ACL_UNSAFE), heard);
  }

  private static String next(Instance i, Duration timeout) throws InterruptedException {
    String s = i.heard().poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    assertThat(s).as("an election event within %s", timeout).isNotNull();
    return s;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aStandbyTakesOverWhenTheLeaderIsPartitionedAndTheOldLeadersWritesAreRefused() throws Exception {
    List<InstanceSpec> servers = List.copyOf(ensemble.getInstances());
    Instance a = instance("rm1", servers.get(0).getConnectString());
    assertThat(next(a, Duration.ofSeconds(10))).isEqualTo("elected 1");
    Instance b = instance("rm2", servers.get(1).getConnectString() + "," + servers.get(2).getConnectString());
    SchedulerLeadership.Term aTerm = a.leadership().term();
    a.store().write(aTerm, bytes("state of epoch 1"));
    assertThat(b.leadership().isLeading()).isFalse();
    assertThat(b.heard()).isEmpty();

    long cut = System.nanoTime();
    ensemble.killServer(servers.get(0));
    // Curator tells the latch and the connection listener in either order; whichever comes first deposes.
    assertThat(next(a, Duration.ofSeconds(10))).as("the partitioned leader stops at once").startsWith("deposed ");
    assertThat(a.leadership().isLeading()).isFalse();
    assertThat(next(b, Duration.ofMillis(SESSION_MS + 10_000))).isEqualTo("elected 2");
    long failoverMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
    int negotiated = a.client().getZookeeperClient().getZooKeeper().getSessionTimeout();
    System.out.printf("Leader failover (partition to new leader elected, negotiated session timeout %d ms): %d ms%n",
        negotiated, failoverMs);
    assertThat(failoverMs).as("within the session timeout plus 2 s").isLessThan(negotiated + 2_000);
    assertThat(b.store().load()).hasValueSatisfying(s -> assertThat(s).isEqualTo(bytes("state of epoch 1")));
    b.store().write(b.leadership().term(), bytes("state of epoch 2"));

    // The partition heals; the old leader, acting on the term it was elected with, tries to write.
    ensemble.restartServer(servers.get(0));
    assertThat(a.client().blockUntilConnected(20, TimeUnit.SECONDS)).isTrue();
    assertThatThrownBy(() -> a.store().write(aTerm, bytes("zombie write")))
        .isInstanceOf(FencedException.class).hasMessageContaining("epoch");
    assertThat(b.store().load()).hasValueSatisfying(s -> assertThat(s).isEqualTo(bytes("state of epoch 2")));
    // Its other writes are fenced the same way: it cannot re-partition a GPU.
    MigStateStore zombieMig = new MigStateStore(a.client(), root, a.leadership().fenceOf(aTerm),
        ZooDefs.Ids.OPEN_ACL_UNSAFE);
    MigLayoutRecord layout =
        new MigLayoutRecord("node-1", 0, true, List.of(), 7L, 0L, null, null, -1, null, "exclusive", 0L, "HEALTHY", List.of());
    assertThatThrownBy(() -> zombieMig.writeDesired(layout)).hasMessageContaining("refused");
    assertThat(new MigStateStore(b.client(), root).desired("node-1", 0)).isEmpty();
    new MigStateStore(b.client(), root, b.leadership().currentFence(), ZooDefs.Ids.OPEN_ACL_UNSAFE).writeDesired(layout);
    assertThat(new MigStateStore(b.client(), root).desired("node-1", 0)).isPresent();
    LeaderEpochRecord epoch = b.leadership().currentEpoch();
    assertThat(epoch.getEpoch()).isEqualTo(2);
    assertThat(epoch.getLeaderId().toString()).isEqualTo("rm2");
    assertThat(b.leadership().isLeading()).isTrue();
  }

  @Test
  void aLeaderThatStepsDownCleanlyHandsOverAtOnceAndEpochsOnlyGrow() throws Exception {
    Instance a = instance("rm1", ensemble.getConnectString());
    assertThat(next(a, Duration.ofSeconds(10))).isEqualTo("elected 1");
    Instance b = instance("rm2", ensemble.getConnectString());
    long t0 = System.nanoTime();
    a.leadership().close();
    assertThat(next(b, Duration.ofSeconds(5))).isEqualTo("elected 2");
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(2_000);
    Instance c = instance("rm3", ensemble.getConnectString());
    b.leadership().close();
    assertThat(next(c, Duration.ofSeconds(5))).isEqualTo("elected 3");
    assertThatThrownBy(() -> b.store().write(new SchedulerLeadership.Term(2, 1), bytes("late")))
        .isInstanceOf(FencedException.class);
  }

  @Test
  void aRunOfClaimsGoesOnOnlyFromTheEpochThisVeryInstanceClaimedLast() {
    // rm1 claimed 1 (announced) and 2 (latch lost before it was announced), and now claims 3: its run began at 1.
    assertThat(SchedulerLeadership.runStart(new LeaderEpochRecord(2L, "rm1", 0L), 2, 1, "rm1")).isEqualTo(1);
    // rm2 held 2: rm1's new run starts with 3, and a listener that last heard of 1 knows someone else led.
    assertThat(SchedulerLeadership.runStart(new LeaderEpochRecord(2L, "rm2", 0L), 1, 1, "rm1")).isEqualTo(3);
    // Same id, but not the epoch this process claimed last (a restarted rm1, or a claim it never made).
    assertThat(SchedulerLeadership.runStart(new LeaderEpochRecord(2L, "rm1", 0L), 0, 0, "rm1")).isEqualTo(3);
    assertThat(SchedulerLeadership.runStart(new LeaderEpochRecord(5L, "rm1", 0L), 2, 1, "rm1")).isEqualTo(6);
    // The first claim ever, over the empty record.
    assertThat(SchedulerLeadership.runStart(new LeaderEpochRecord(0L, "", 0L), 0, 0, "rm1")).isEqualTo(1);
  }
}
