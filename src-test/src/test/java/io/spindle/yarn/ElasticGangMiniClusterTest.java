package io.spindle.yarn;

import static io.spindle.yarn.MiniClusterSupport.gpus;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.client.CheckpointDecision;
import io.spindle.client.CheckpointNoticeView;
import io.spindle.client.SpindleCheckpointClient;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An elastic gang through the whole ResourceManager path (2 NodeManagers x 4 GPUs, queues a and b at 50% each, a real
 * ZooKeeper): {@code spindle.gang.size=4, spindle.gang.min=2, spindle.gang.step=2} of 2 GPUs each starts with 2
 * members while a blocker holds half the GPUs, grows to 4 when the blocker ends, gives exactly 2 back through a
 * resize notice (YARN's strict preemption contract and Spindle's notice with its target size) when an urgent gang of
 * queue b starves, and grows back to 4 on its own once the urgent gang is done — its AM never asks again.
 */
class ElasticGangMiniClusterTest {

  private static final long GRACE_SECONDS = 6;
  private static TestingServer zk;
  private static MiniYARNCluster cluster;
  private static YarnClient client;
  private static Configuration conf;

  @BeforeAll
  static void start() throws Exception {
    zk = new TestingServer(true);
    YarnConfiguration c = new YarnConfiguration();
    MiniClusterSupport.gpuPreemption(c, zk.getConnectString(), GRACE_SECONDS);
    c.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 32_768);
    c.setInt(YarnConfiguration.NM_VCORES, 16);
    c.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, 32_768);
    MiniClusterSupport.halvesAandB(c);
    cluster = MiniClusterSupport.startCluster("elastic", c, 2);
    conf = cluster.getConfig();
    client = MiniClusterSupport.startClient(conf);
    MiniClusterSupport.awaitEngineGpus(cluster, 8);
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(client, cluster, zk);
  }

  @Test
  void startsAtItsMinimumGrowsIntoFreedGpusShrinksByANoticeAndGrowsBack() throws Exception {
    List<CheckpointNoticeView> notices = new CopyOnWriteArrayList<>();
    try (UnmanagedAm blocker = UnmanagedAm.register(client, conf, submit("blocker", "a", "spindle.gang.size=2"));
        UnmanagedAm elastic = UnmanagedAm.register(client, conf, submit("elastic", "a", "spindle.gang.size=4",
            "spindle.gang.min=2", "spindle.gang.step=2"))) {
      blocker.ask(2, gpus(2));
      assertThat(blocker.awaitHeld(2, Duration.ofSeconds(30))).isEqualTo(2);

      elastic.ask(4, gpus(2));
      assertThat(elastic.awaitHeld(2, Duration.ofSeconds(30))).isEqualTo(2);
      List<ContainerId> minimum = elastic.held().stream().map(Container::getId).toList();
      Thread.sleep(1_000); // A few scheduling cycles: nothing more is idle, so it stays at its minimum.
      elastic.heartbeat();
      assertThat(elastic.held()).hasSize(2);

      blocker.close();
      assertThat(elastic.awaitHeld(4, Duration.ofSeconds(30))).isEqualTo(4);
      assertThat(elastic.batches()).containsExactly(2, 2);

      try (SpindleCheckpointClient answers = SpindleCheckpointClient.connect(zk.getConnectString(),
          "/spindle/default", elastic.applicationId().toString(), elastic.amRmTokenPassword())) {
        answers.register(n -> {
          notices.add(n);
          return CheckpointDecision.done("file:///ckpt/elastic-step-300", System.currentTimeMillis());
        });
        try (UnmanagedAm urgent = UnmanagedAm.register(client, conf, submit("urgent", "b", "spindle.gang.size=2"))) {
          urgent.ask(2, gpus(2));
          Set<ContainerId> contract = Set.of();
          long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
          while (elastic.completed().size() < 2 && System.nanoTime() < until) {
            urgent.heartbeat();
            elastic.heartbeat();
            if (contract.isEmpty()) {
              contract = elastic.lastContract();
            }
            Thread.sleep(50);
          }
          assertThat(elastic.completed()).hasSize(2).extracting(ContainerStatus::getExitStatus)
              .containsOnly(ContainerExitStatus.PREEMPTED);
          List<ContainerId> gone = elastic.completed().stream().map(ContainerStatus::getContainerId).toList();
          assertThat(contract).as("YARN's contract named exactly the members that went").hasSameElementsAs(gone);
          assertThat(notices).singleElement().satisfies(n -> {
            assertThat(n.isResize()).isTrue();
            assertThat(n.targetSize()).isEqualTo(2);
            assertThat(n.containerIds()).hasSameElementsAs(gone.stream().map(ContainerId::toString).toList());
          });
          // The members it started with, its minimum, run on.
          assertThat(elastic.held()).extracting(Container::getId).hasSameElementsAs(minimum);
          assertThat(urgent.awaitHeld(2, Duration.ofSeconds(10))).isEqualTo(2);
        }
      }
      // The urgent gang is done: the two given back come back as growth, asked again on the AM's behalf.
      long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (elastic.held().size() < 4 && System.nanoTime() < until) {
        elastic.heartbeat();
        Thread.sleep(50);
      }
      assertThat(elastic.held()).hasSize(4);
      assertThat(elastic.batches()).containsExactly(2, 2, 2);
    }
  }

  @Test
  void badElasticTagsAreRefusedAtSubmissionWithTheTagAndItsValue() {
    assertThatThrownBy(() -> submit("too-small", "a", "spindle.gang.size=4", "spindle.gang.min=6"))
        .hasMessageContaining("spindle.gang.min=6").hasMessageContaining("above the gang's size");
    assertThatThrownBy(() -> submit("uneven", "a", "spindle.gang.size=8", "spindle.gang.min=2",
        "spindle.gang.step=4")).hasMessageContaining("spindle.gang.step=4").hasMessageContaining("does not divide");
    assertThatThrownBy(() -> submit("no-gang", "a", "spindle.gang.min=2"))
        .hasMessageContaining("spindle.gang.min=2").hasMessageContaining("is for gangs");
  }

  private static ApplicationId submit(String name, String queue, String... tags) throws Exception {
    return UnmanagedAm.submit(client, name, queue, Set.of(tags));
  }
}
