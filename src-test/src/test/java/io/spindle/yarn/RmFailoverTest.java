package io.spindle.yarn;

import static io.spindle.yarn.MiniClusterSupport.await;
import static io.spindle.yarn.MiniClusterSupport.gpus;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.client.CheckpointNoticeView;
import io.spindle.client.SpindleCheckpointClient;
import io.spindle.core.engine.QueueSnapshot;
import io.spindle.core.model.AppId;
import io.spindle.core.model.ResourceVector;
import io.spindle.local.RmHaPair;
import io.spindle.testing.ZooKeeperEnsembles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.curator.test.TestingCluster;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.client.api.NMClient;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A YARN HA pair (two ResourceManagers, each with Spindle) on a 3-server ZooKeeper ensemble, which holds YARN's
 * state store and Spindle's leader election and state. Queue a runs two gangs of 2 x 2 GPUs (real containers under
 * the NodeManagers); queue b's urgent gang starves and one of a's gangs has a checkpoint notice in flight when the
 * active ResourceManager fails over. The new one's Spindle takes over: the gangs are whole and charged once, the
 * notice keeps its id and deadline and is carried out at that deadline, and no container is handed out twice.
 */
class RmFailoverTest {

  private static final long GRACE_SECONDS = 25;
  private static TestingCluster zk;
  private static MiniYARNCluster cluster;
  private static YarnClient client;
  private static NMClient nm;

  @TempDir
  static Path confDir;

  @BeforeAll
  static void start() throws Exception {
    zk = ZooKeeperEnsembles.startServing(3);
    YarnConfiguration c = new YarnConfiguration();
    RmHaPair.configure(c, zk.getConnectString(), "spindle-ha", 3_000);
    c.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 16_384);
    c.setInt(YarnConfiguration.NM_VCORES, 8);
    c.set("yarn.scheduler.spindle.zk.auth", "digest:spindle-rm:failover-test");
    MiniClusterSupport.gpuPreemption(c, zk.getConnectString(), GRACE_SECONDS);
    c.set("yarn.scheduler.spindle.preemption.max-extensions", "0");
    Configuration queues = new Configuration(false);
    MiniClusterSupport.halvesAandB(queues);
    try (java.io.OutputStream out = Files.newOutputStream(confDir.resolve("capacity-scheduler.xml"))) {
      queues.writeXml(out);
    }
    // An RM becoming active re-reads yarn-site.xml from the shared store (AdminService.refreshAll): the cluster's
    // maximum application priority lives there, as it would for an admin's HA pair.
    Configuration site = new Configuration(false);
    site.setInt(YarnConfiguration.MAX_CLUSTER_LEVEL_APPLICATION_PRIORITY, 10);
    try (java.io.OutputStream out = Files.newOutputStream(confDir.resolve("yarn-site.xml"))) {
      site.writeXml(out);
    }
    c.setInt(YarnConfiguration.MAX_CLUSTER_LEVEL_APPLICATION_PRIORITY, 10);
    RmHaPair.shareConfiguration(c, confDir.toUri());
    QueueMetrics.clearQueueMetrics();
    ResourceUtils.resetResourceTypes(c);
    cluster = new MiniYARNCluster("failover", 2, 2, 1, 1);
    cluster.init(c);
    cluster.start();
    client = YarnClient.createYarnClient();
    client.init(cluster.getConfig());
    client.start();
    MiniClusterSupport.awaitEngineGpus(cluster, 8);
    nm = NMClient.createNMClient();
    nm.init(cluster.getConfig());
    nm.start();
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(nm, client, cluster, zk);
  }

  @Test
  void theStandbyTakesOverGangsAndTheCheckpointDeadlineAndHandsOutNoContainerTwice() throws Exception {
    Set<ContainerId> handedOut = new HashSet<>();
    try (UnmanagedAm first = runningGang("trainer-1", handedOut);
        UnmanagedAm second = runningGang("trainer-2", handedOut);
        UnmanagedAm urgent = UnmanagedAm.register(client, cluster.getConfig(),
            UnmanagedAm.submit(client, "urgent", "b", Set.of("spindle.gang.size=2")))) {
      urgent.ask(2, gpus(2));
      UnmanagedAm victim = awaitNotice(urgent, first, second);
      UnmanagedAm spared = victim == first ? second : first;
      CheckpointNoticeView before = notice(victim);
      assertThat(spindle(0).queueSnapshots()).isNotEmpty();
      // A priority changed on the old leader (yarn application -updatePriority) is the one the new leader schedules
      // by: YARN's state store carries it, and recovery gives it to Spindle. The spared gang only rises, so the
      // notice already out stays the one the test follows.
      assertThat(client.updateApplicationPriority(spared.applicationId(), Priority.newInstance(6)).getPriority())
          .isEqualTo(6);

      RmHaPair.handOver(cluster, 0, 1);
      assertThat(cluster.getActiveRMIndex()).isEqualTo(1);

      // The NodeManagers re-register with the new RM and report their running containers; the AMs, heartbeating
      // as always, re-register and send their asks again.
      await(Duration.ofSeconds(60), () -> {
        for (UnmanagedAm am : List.of(urgent, first, second)) {
          am.heartbeat();
        }
        return usage(spindle(1), "root.a").gpus() == 8 && spindle(1).takeOverReport().isPresent();
      });
      assertThat(spindle(1).takeOverReport().orElseThrow()).satisfies(r -> {
        assertThat(r.units()).as("both gangs regrouped").isEqualTo(2);
        assertThat(r.notices()).isEqualTo(1);
        assertThat(r.reservations()).as("the urgent gang's reservation").isEqualTo(1);
        assertThat(r.dropped()).isEmpty();
      });
      assertThat(spindle(1).metrics().registry().meter("spindle.recovered.containers").getCount())
          .as("both gangs' containers, from the NodeManagers").isEqualTo(4);
      assertThat(usage(spindle(1), "root.b").gpus()).as("nothing started for the urgent gang yet").isZero();
      assertThat(client.getApplicationReport(spared.applicationId()).getPriority().getPriority()).isEqualTo(6);
      assertThat(spindle(1).status().app(AppId.of(spared.applicationId().toString())).orElseThrow().priority())
          .as("the updated priority, after the failover").isEqualTo(6);
      CheckpointNoticeView after = notice(victim);
      assertThat(after.noticeId()).isEqualTo(before.noticeId());
      assertThat(after.deadlineMillis()).as("the deadline is honoured, not restarted").isEqualTo(before.deadlineMillis());

      // At the deadline the new leader reclaims the silent victim whole and the urgent gang starts.
      long deadline = System.nanoTime() + Duration.ofSeconds(GRACE_SECONDS + 30).toNanos();
      while (urgent.held().size() < 2 && System.nanoTime() < deadline) {
        for (UnmanagedAm am : List.of(urgent, first, second)) {
          for (Container got : am.heartbeat()) {
            assertThat(handedOut.add(got.getId())).as("%s handed out twice", got.getId()).isTrue();
          }
        }
        Thread.sleep(100);
      }
      assertThat(urgent.held()).hasSize(2);
      assertThat(System.currentTimeMillis()).as("not before the deadline set before the failover")
          .isGreaterThanOrEqualTo(before.deadlineMillis() - 200);
      assertThat(victim.completed()).extracting(ContainerStatus::getExitStatus)
          .containsOnly(ContainerExitStatus.PREEMPTED).hasSize(2);
      assertThat(spared.completed()).as("the other gang is untouched").isEmpty();
      assertThat(usage(spindle(1), "root.a").gpus()).isEqualTo(4);
      assertThat(usage(spindle(1), "root.b").gpus()).isEqualTo(4);
    }
  }

  /** A gang of 2 x 2 GPUs in queue a whose containers really run under the NodeManagers. */
  private static UnmanagedAm runningGang(String name, Set<ContainerId> handedOut) throws Exception {
    UnmanagedAm am = UnmanagedAm.register(client, cluster.getConfig(),
        UnmanagedAm.submit(client, name, "a", Set.of("spindle.gang.size=2"), true));
    am.ask(2, gpus(2));
    assertThat(am.awaitHeld(2, Duration.ofSeconds(30))).isEqualTo(2);
    for (Container c : am.held()) {
      assertThat(handedOut.add(c.getId())).isTrue();
      nm.startContainer(c, ContainerLaunchContext.newInstance(Map.of(), Map.of(), List.of("sleep 600"), null, null,
          null));
    }
    for (Container c : am.held()) {
      await(Duration.ofSeconds(30), () -> nm.getContainerStatus(c.getId(), c.getNodeId()).getState()
          == ContainerState.RUNNING);
    }
    return am;
  }

  private static UnmanagedAm awaitNotice(UnmanagedAm urgent, UnmanagedAm a, UnmanagedAm b) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      urgent.heartbeat();
      for (UnmanagedAm am : List.of(a, b)) {
        am.heartbeat();
        if (!am.lastContract().isEmpty()) {
          return am;
        }
      }
      Thread.sleep(100);
    }
    throw new AssertionError("no checkpoint notice within 30 s");
  }

  private static CheckpointNoticeView notice(UnmanagedAm am) throws Exception {
    try (SpindleCheckpointClient c = SpindleCheckpointClient.connect(zk.getConnectString(), "/spindle/spindle-ha",
        am.applicationId().toString(), am.amRmTokenPassword())) {
      List<CheckpointNoticeView> open = new ArrayList<>();
      await(Duration.ofSeconds(10), () -> {
        open.clear();
        open.addAll(c.openNotices());
        return !open.isEmpty();
      });
      return open.get(0);
    }
  }

  private static SpindleScheduler spindle(int rm) {
    return (SpindleScheduler) cluster.getResourceManager(rm).getResourceScheduler();
  }

  private static ResourceVector usage(SpindleScheduler s, String queue) {
    return s.queueSnapshots().stream().filter(q -> q.path().equals(queue)).map(QueueSnapshot::usage).findFirst()
        .orElseThrow();
  }
}
