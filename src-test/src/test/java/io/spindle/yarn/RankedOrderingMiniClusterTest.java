package io.spindle.yarn;

import static io.spindle.yarn.MiniClusterSupport.gpus;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Set;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code spindle.ordering=least-attained} with preemption inside the queue, on a real MiniYARNCluster (one NodeManager
 * of 4 GPUs) and a real ZooKeeper, configured from CapacityScheduler keys as an admin writes them: a gang that has run
 * past the first level (4 GPU-seconds here) is asked to checkpoint for a newcomer of its own queue and priority, is
 * reclaimed with exit status PREEMPTED, and waits again without taking the GPUs back; {@code why} says so.
 */
class RankedOrderingMiniClusterTest {

  private static final long GRACE_SECONDS = 3;
  private static TestingServer zk;
  private static MiniYARNCluster cluster;
  private static YarnClient client;
  private static Configuration conf;

  @BeforeAll
  static void start() throws Exception {
    zk = new TestingServer(true);
    YarnConfiguration c = new YarnConfiguration();
    MiniClusterSupport.gpuPreemption(c, zk.getConnectString(), GRACE_SECONDS);
    c.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 16_384);
    String p = "yarn.scheduler.capacity.root.";
    c.set(p + "queues", "a,default");
    c.set(p + "a.capacity", "100");
    c.set(p + "default.capacity", "0");
    c.set(p + "a.user-limit-factor", "-1");
    c.set(p + "a.spindle.ordering", "least-attained");
    c.set(p + "a.spindle.ordering.attained-thresholds-gpu-seconds", "4");
    c.set(p + "a.spindle.ordering.preemption", "true");
    c.set(p + "a.spindle.ordering.preemption.min-runtime-seconds", "1");
    cluster = MiniClusterSupport.startCluster("ranked", c, 1);
    conf = cluster.getConfig();
    client = MiniClusterSupport.startClient(conf);
    MiniClusterSupport.awaitEngineGpus(cluster, 4);
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(client, cluster, zk);
  }

  @Test
  void aGangThatAttainedMoreServiceIsCheckpointedForANewcomerAndDoesNotTakeItBack() throws Exception {
    SpindleScheduler spindle = (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
    try (UnmanagedAm first = UnmanagedAm.register(client, conf,
        UnmanagedAm.submit(client, "long-training", "a", Set.of("spindle.gang.size=2")))) {
      first.ask(2, gpus(2));
      assertThat(first.awaitHeld(2, Duration.ofSeconds(30))).isEqualTo(2);
      Thread.sleep(2_000); // 4 GPUs for 2 s: 8 GPU-seconds, past the first level.
      try (UnmanagedAm newcomer = UnmanagedAm.register(client, conf,
          UnmanagedAm.submit(client, "short-eval", "a", Set.of("spindle.gang.size=2")))) {
        newcomer.ask(2, gpus(2));
        java.util.concurrent.atomic.AtomicReference<String> whileNoticed = new java.util.concurrent.atomic
            .AtomicReference<>();
        MiniClusterSupport.await(Duration.ofSeconds(30), () -> {
          newcomer.heartbeat();
          first.heartbeat();
          if (!first.lastContract().isEmpty() && whileNoticed.get() == null) {
            whileNoticed.set(spindle.explain(first.applicationId()).text());
          }
          return first.completed().size() == 2;
        });
        assertThat(whileNoticed.get()).as("why, while the notice is out")
            .contains("has attained less GPU service (level 0, this application 1)");
        assertThat(first.completed()).extracting(ContainerStatus::getExitStatus)
            .containsOnly(ContainerExitStatus.PREEMPTED);
        assertThat(newcomer.awaitHeld(2, Duration.ofSeconds(10))).isEqualTo(2);

        // The preempted gang asks again. It is at level 1, and so is the newcomer once it has run a second: a victim
        // must rank strictly after its taker, so nothing is taken back while both run their course.
        first.ask(2, gpus(2));
        long until = System.currentTimeMillis() + 5_000;
        while (System.currentTimeMillis() < until) {
          first.heartbeat();
          newcomer.heartbeat();
          assertThat(newcomer.lastContract()).as("no notice to the newcomer").isEmpty();
          Thread.sleep(100);
        }
        assertThat(spindle.explain(first.applicationId()).text())
            .contains("In order: its queue orders least-attained: level 1 of 2");
      }
      // The newcomer finished: the first gang gets its GPUs back.
      assertThat(first.awaitHeld(2, Duration.ofSeconds(30))).isEqualTo(2);
    }
  }
}
