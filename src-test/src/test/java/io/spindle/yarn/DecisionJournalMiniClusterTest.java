package io.spindle.yarn;

import static io.spindle.yarn.MiniClusterSupport.gpus;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.client.CheckpointDecision;
import io.spindle.client.SpindleCheckpointClient;
import io.spindle.core.engine.Decision;
import io.spindle.journal.JournalEntry;
import io.spindle.journal.JournalReader;
import io.spindle.journal.JournalReplay;
import io.spindle.journal.JournalSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #10, item 5: a real MiniYARNCluster run (2 NodeManagers x 4 GPUs, ZooKeeper, preemption on) with the decision
 * journal on, replayed through a fresh engine with exactly the same decisions. The run has gangs that start whole, an
 * urgent gang of another queue that waits for GPUs the first queue borrowed (with a reservation), a checkpoint notice
 * its victim answers DONE, the reclaim, single containers, containers that finish and applications that end.
 */
class DecisionJournalMiniClusterTest {

  @TempDir
  Path journalDir;

  @Test
  void aMiniClusterRunReplaysWithExactlyTheSameDecisions() throws Exception {
    TestingServer zk = new TestingServer(true);
    YarnConfiguration c = new YarnConfiguration();
    MiniClusterSupport.gpuPreemption(c, zk.getConnectString(), 20);
    MiniClusterSupport.halvesAandB(c);
    c.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 32_768);
    c.setInt(YarnConfiguration.NM_VCORES, 16);
    c.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, 32_768);
    c.set(JournalSettings.DIR, journalDir.toString());
    MiniYARNCluster cluster = MiniClusterSupport.startCluster("journal", c, 2);
    YarnClient client = null;
    try {
      Configuration conf = cluster.getConfig();
      client = MiniClusterSupport.startClient(conf);
      MiniClusterSupport.awaitEngineGpus(cluster, 8);
      run(client, conf, zk.getConnectString());
    } finally {
      MiniClusterSupport.stopAll(client, cluster, zk); // Stopping the scheduler closes the journal.
    }

    Path journal;
    try (Stream<Path> files = Files.list(journalDir)) {
      journal = files.filter(p -> p.getFileName().toString().startsWith("spindle-journal-")).findFirst().orElseThrow();
    }
    // Kept for a look with scripts/spindle-sim --replay (docs/simulator.md shows its output).
    Path kept = Files.createDirectories(Path.of("target", "journal"));
    Files.copy(journal, kept.resolve("mini-cluster-run.avro"), StandardCopyOption.REPLACE_EXISTING);

    Map<Class<?>, Long> kinds = decisionKinds(journal);
    assertThat(kinds).as("what the run decided").containsKeys(Decision.Allocate.class, Decision.Wait.class,
        Decision.RequestCheckpoint.class, Decision.Preempt.class);
    assertThat(kinds.get(Decision.Allocate.class)).as("2 gangs, the urgent gang, the victim's return, 3 singles")
        .isGreaterThanOrEqualTo(11);

    JournalReplay.Result result = JournalReplay.replay(journal);

    assertThat(result.mismatch()).as("the first difference").isNull();
    assertThat(result.identical()).isTrue();
    assertThat(result.closed()).as("closed by the scheduler's stop").isTrue();
    assertThat(result.decisions()).as("decisions compared").isEqualTo(kinds.values().stream().mapToLong(n -> n)
        .sum()).isGreaterThanOrEqualTo(15);
    assertThat(result.events()).isGreaterThanOrEqualTo(20);
    assertThat(result.cycles()).isGreaterThan(result.idleCycles()).isGreaterThan(20);
  }

  /**
   * Queue a borrows every GPU with two gangs of 2 x 2; an urgent gang of queue b waits for them, and the victim of the
   * reclaim answers its notice DONE. The urgent job ends, the victim gets its gang back, a job of single CPU
   * containers runs, everything ends.
   */
  private static void run(YarnClient client, Configuration conf, String zk) throws Exception {
    try (UnmanagedAm first = gang(client, conf, "trainer-1", "a");
        UnmanagedAm second = gang(client, conf, "trainer-2", "a");
        SpindleCheckpointClient notices1 = answerDone(zk, first);
        SpindleCheckpointClient notices2 = answerDone(zk, second)) {
      assertThat(first.awaitHeld(2, Duration.ofSeconds(30))).isEqualTo(2);
      assertThat(second.awaitHeld(2, Duration.ofSeconds(30))).isEqualTo(2);
      try (UnmanagedAm urgent = gang(client, conf, "urgent", "b")) {
        UnmanagedAm victim = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (victim == null && System.nanoTime() < deadline) {
          urgent.heartbeat();
          for (UnmanagedAm am : List.of(first, second)) {
            am.heartbeat();
            if (am.completed().size() == 2) {
              victim = am;
            }
          }
          Thread.sleep(50);
        }
        assertThat(victim).as("one gang of queue a was reclaimed").isNotNull();
        assertThat(victim.completed()).extracting(ContainerStatus::getExitStatus)
            .containsOnly(ContainerExitStatus.PREEMPTED);
        assertThat(urgent.awaitHeld(2, Duration.ofSeconds(15))).isEqualTo(2);
        urgent.release(2);
        urgent.close();
        victim.ask(2, gpus(2));
        assertThat(victim.awaitHeld(2, Duration.ofSeconds(30))).isEqualTo(2);
      }
      try (UnmanagedAm singles = UnmanagedAm.register(client, conf,
          UnmanagedAm.submit(client, "singles", "b", Set.of()))) {
        singles.ask(3, gpus(0));
        assertThat(singles.awaitHeld(3, Duration.ofSeconds(15))).isEqualTo(3);
        singles.release(3);
      }
      first.release(2);
      second.release(2);
    }
  }

  private static UnmanagedAm gang(YarnClient client, Configuration conf, String name, String queue)
      throws Exception {
    ApplicationId app = UnmanagedAm.submit(client, name, queue, Set.of("spindle.gang.size=2"));
    UnmanagedAm am = UnmanagedAm.register(client, conf, app);
    am.ask(2, gpus(2));
    return am;
  }

  /** The AM's answer to a checkpoint notice: written at once, DONE. */
  private static SpindleCheckpointClient answerDone(String zk, UnmanagedAm am) throws Exception {
    SpindleCheckpointClient notices = SpindleCheckpointClient.connect(zk, "/spindle/default",
        am.applicationId().toString(), am.amRmTokenPassword());
    notices.register(notice -> CheckpointDecision.done("hdfs:///ckpt/" + am.applicationId(),
        System.currentTimeMillis()));
    return notices;
  }

  private static Map<Class<?>, Long> decisionKinds(Path journal) throws Exception {
    try (JournalReader reader = JournalReader.open(journal)) {
      Stream.Builder<Decision> all = Stream.builder();
      Optional<JournalEntry> e;
      while ((e = reader.next()).isPresent()) {
        if (e.get() instanceof JournalEntry.Cycle cycle) {
          cycle.decisions().forEach(all::add);
        }
      }
      return all.build().collect(Collectors.groupingBy(Object::getClass, Collectors.counting()))
          .entrySet().stream().collect(Collectors.toMap(en -> (Class<?>) en.getKey(), Map.Entry::getValue));
    }
  }
}
