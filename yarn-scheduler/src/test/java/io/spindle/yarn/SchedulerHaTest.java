package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.ha.SchedulerLeadership;
import io.spindle.ha.SchedulerZk;
import io.spindle.ha.SchedulerZkIdentity;
import io.spindle.ha.ZkSettings;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The adapter's side of leadership: who may schedule, what a new leader takes over, and a fenced leader's end. */
class SchedulerHaTest {

  private TestingServer zk;
  private final java.util.List<AutoCloseable> open = new java.util.ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    zk = new TestingServer(true);
  }

  @AfterEach
  void stop() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    zk.close();
  }

  private record Rm(SchedulerHa ha, BlockingQueue<String> fatal, SchedulerZk session) {}

  private Rm rm(String id) throws Exception {
    SchedulerZk session = SchedulerZk.connect(new ZkSettings(zk.getConnectString(), "/spindle/ha-test"),
        SchedulerZkIdentity.digest("spindle-rm", "secret"), new Configuration(false));
    open.add(session);
    BlockingQueue<String> fatal = new LinkedBlockingQueue<>();
    SchedulerHa ha = new SchedulerHa(session, SchedulerZkIdentity.digest("spindle-rm", "secret"), id, 0,
        System::currentTimeMillis, () -> { },
        fatal::add);
    ha.start();
    open.add(ha);
    return new Rm(ha, fatal, session);
  }

  private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition within 10 s").isLessThan(deadline);
      Thread.sleep(20);
    }
  }

  @Test
  void aDeposedLeadersLateWriteIsRefusedAndItNeverSchedulesAgain() throws Exception {
    Rm first = rm("rm1");
    await(() -> first.ha().term() != null);
    SchedulerLeadership.Term firstTerm = first.ha().term();
    assertThat(first.ha().takeOver()).as("nobody led before").isEmpty();
    first.ha().save(firstTerm, () -> "epoch-1 state".getBytes(StandardCharsets.UTF_8));

    Rm second = rm("rm2");
    assertThat(second.ha().term()).as("a standby does not schedule").isNull();
    first.ha().close(); // rm1 loses the lead (here: hands it over), but its scheduling thread still holds the term.
    await(() -> second.ha().term() != null);
    await(() -> {
      try {
        return second.ha().takeOver().map(b -> new String(b, StandardCharsets.UTF_8).equals("epoch-1 state"))
            .orElse(false);
      } catch (Exception e) {
        return false;
      }
    });
    assertThat(second.ha().term().epoch()).isEqualTo(2);
  }

  @Test
  void aWriteUnderAnOutdatedTermIsFencedAndTheResourceManagerIsToldToStop() throws Exception {
    Rm first = rm("rm1");
    await(() -> first.ha().term() != null);
    SchedulerLeadership.Term stale = first.ha().term();
    first.ha().save(stale, () -> "epoch-1 state".getBytes(StandardCharsets.UTF_8));
    Rm second = rm("rm2");
    // rm1's latch node vanishes (as when its session expires on the quorum): rm2 takes the lead and raises the epoch,
    // while rm1's scheduling thread may still act on the term it read before.
    // Only the schedulers' identity may touch the latch: the ZooKeeper admin deletes it as that identity.
    try (CuratorFramework admin = CuratorFrameworkFactory.builder().connectString(zk.getConnectString())
        .retryPolicy(new RetryOneTime(100)).authorization(SchedulerZkIdentity.digest("spindle-rm", "secret").auth())
        .build()) {
      admin.start();
      String latch = "/spindle/ha-test/leader/latch";
      String oldest = admin.getChildren().forPath(latch).stream()
          .min(java.util.Comparator.comparing(n -> n.substring(n.lastIndexOf('-') + 1))).orElseThrow();
      admin.delete().forPath(latch + "/" + oldest);
    }
    await(() -> second.ha().term() != null);
    assertThat(second.ha().term().epoch()).isEqualTo(2);

    first.ha().save(stale, () -> "zombie".getBytes(StandardCharsets.UTF_8));
    String why = first.fatal().poll(10, TimeUnit.SECONDS);
    assertThat(why).as("the ResourceManager is told").isNotNull().contains("epoch");
    assertThat(first.ha().term()).as("it never schedules again").isNull();
    assertThat(new String(second.ha().takeOver().orElseThrow(), StandardCharsets.UTF_8)).isEqualTo("epoch-1 state");
    Thread.sleep(500);
    assertThat(first.ha().term()).as("not even if it wins a later election").isNull();
  }

  @Test
  void aReElectionAfterAnUnannouncedClaimOfItsOwnResumesButOneAfterAnotherLeaderIsFatal() throws Exception {
    Rm rm = rm("rm1");
    await(() -> rm.ha().term() != null);
    // Epoch 2 was claimed by rm1 too, but its latch was lost before the election was announced (session flapping).
    rm.ha().elected(3, 1);
    assertThat(rm.fatal().poll(200, TimeUnit.MILLISECONDS)).as("nobody else led: no false fence").isNull();
    assertThat(rm.ha().term()).isNotNull();
    // Epoch 4 belonged to another scheduler: rm1's view is stale.
    rm.ha().elected(5, 5);
    assertThat(rm.fatal().poll(5, TimeUnit.SECONDS)).contains("epochs 4 to 4");
    assertThat(rm.ha().term()).isNull();
  }

  @Test
  void aWriteOfTheTermBeforeItsOwnReElectionIsWrittenAgainNotFatal() throws Exception {
    Rm rm = rm("rm1");
    await(() -> rm.ha().term() != null);
    SchedulerLeadership.Term before = rm.ha().term();
    // Its session expires (a ZooKeeper outage, as in FaultMatrixTest's quorum loss); nobody else is there, so it is
    // elected again, under the next epoch, while a write decided in the old term is still to be made.
    rm.session().client().getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
    await(() -> rm.ha().term() != null && rm.ha().term().epoch() == before.epoch() + 1);

    rm.ha().save(before, () -> "decided in epoch 1".getBytes(StandardCharsets.UTF_8));
    assertThat(rm.fatal().poll(2, TimeUnit.SECONDS)).as("nobody else led: no fence, no stop").isNull();
    assertThat(rm.ha().term()).as("it goes on leading").isNotNull();
    try (CuratorFramework admin = CuratorFrameworkFactory.builder().connectString(zk.getConnectString())
        .retryPolicy(new RetryOneTime(100)).authorization(SchedulerZkIdentity.digest("spindle-rm", "secret").auth())
        .build()) {
      admin.start();
      await(() -> {
        try {
          return new String(admin.getData().forPath("/spindle/ha-test/scheduler/state"), StandardCharsets.UTF_8)
              .equals("decided in epoch 1");
        } catch (Exception notYet) {
          return false;
        }
      });
    }
  }
}
