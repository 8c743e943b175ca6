package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.junit.jupiter.api.Test;

/** What the adapter tells the engine about an application's asks, around a gang's start and its preemption. */
class AppAsksTest {

  private static final SchedulerRequestKey KEY = SchedulerRequestKey.create(
      org.apache.hadoop.yarn.api.records.ResourceRequest.newInstance(Priority.newInstance(1), "*",
          Resource.newInstance(2048, 1), 2));
  private static final Resource EACH = Resource.newInstance(2048, 1);

  @Test
  void aPreemptedGangIsAGangAgainAndTheAmsReAskOfItIsNoChange() {
    AppAsks asks = new AppAsks(new SpindleTags(2, null, false, 0), true);
    String name = AppAsks.keyName(KEY);
    assertThat(asks.takesGang(name, 2)).isTrue();
    assertThat(asks.changed(name, KEY, EACH, 2)).isTrue();
    asks.allocated(name);
    asks.allocated(name);
    assertThat(asks.takesGang(name, 1)).as("a started gang's later asks are single containers").isFalse();
    assertThat(asks.changed(name, KEY, EACH, 0)).as("the AM withdrew what it got").isFalse();

    // Both members preempted: the engine re-queued the gang and YARN's ask holds it again.
    asks.requeued(name, KEY, EACH, false);
    asks.requeued(name, KEY, EACH, false);
    assertThat(asks.takesGang(name, 2)).isTrue();
    assertThat(asks.changed(name, KEY, EACH, 2)).as("the AM asking for its two again tells the engine nothing new")
        .isFalse();
    assertThat(asks.changed(name, KEY, EACH, 3)).as("asking for more is a change").isTrue();
  }

  /** spindle-run restarting a failed gang: it stops every member, then asks for all N again under the same key. */
  @Test
  void anAskForTheWholeGangAgainAfterItsMembersWereHandedOutIsANewGang() {
    AppAsks asks = new AppAsks(new SpindleTags(2, null, false, 0), true);
    String name = AppAsks.keyName(KEY);
    assertThat(asks.takesGang(name, 2)).isTrue();
    asks.changed(name, KEY, EACH, 2);
    asks.allocated(name);
    asks.allocated(name);
    assertThat(asks.takesGang(name, 1)).as("a replacement of one member is a single container").isFalse();
    asks.changed(name, KEY, EACH, 1);
    asks.allocated(name);
    assertThat(asks.restarts()).isEmpty();
    asks.failedExit("container_1_0001_01_000003", 3, "Exception from container-launch.\nmore");
    assertThat(asks.takesGang(name, 2)).as("all members again, nothing outstanding: a new run").isTrue();
    assertThat(asks.restarts()).as("for Spindle's why").containsExactly("Its ApplicationMaster asked for its whole"
        + " gang of 2 again (restart 1, after container container_1_0001_01_000003 exited with status 3 (Exception"
        + " from container-launch.)).");
    asks.changed(name, KEY, EACH, 2);
    assertThat(asks.takesGang(name, 2)).as("until it starts").isTrue();
  }

  /**
   * A preempted gang re-admitted on its AM's behalf before the AM's own re-ask arrived: the re-ask is more wanted,
   * and when the AM withdraws it YARN drops the request key instead of listing it at 0. The engine must hear of the
   * withdrawal all the same, once.
   */
  @Test
  void aRequestYarnNoLongerListsIsWithdrawnOnce() {
    AppAsks asks = new AppAsks(new SpindleTags(2, null, false, 0), true);
    String name = AppAsks.keyName(KEY);
    asks.requeued(name, KEY, EACH, false);
    asks.requeued(name, KEY, EACH, false);
    asks.allocated(name);
    asks.allocated(name);
    assertThat(asks.changed(name, KEY, EACH, 2)).as("the AM's late re-ask").isTrue();
    assertThat(asks.withdrawnUnless(java.util.Set.of(name))).as("still listed").isEmpty();
    assertThat(asks.withdrawnUnless(java.util.Set.of())).containsExactly(name);
    assertThat(asks.ask(name).count()).isZero();
    assertThat(asks.withdrawnUnless(java.util.Set.of())).as("told once").isEmpty();
  }

  @Test
  void aPreemptedContainerOfARequestNeverForwardedIsRecordedUnderItsKey() {
    AppAsks asks = new AppAsks(SpindleTags.NONE, false);
    String name = AppAsks.keyName(KEY);
    asks.requeued(name, KEY, EACH, false); // A container recovered after a restart, then preempted.
    assertThat(asks.ask(name)).isEqualTo(new AppAsks.Ask(KEY, EACH, 1));
    assertThat(asks.takesGang(name, 1)).isFalse();
  }

  /**
   * Spark on YARN: the ResourceManager asks the AM container at priority 0 and Spark's YarnAllocator asks its
   * executors at priority 0 too, so both come under one key. Once the AM container is out, that key is the executors'
   * and, with {@code spindle.gang=executors}, their gang of whatever count Spark first asks.
   */
  @Test
  void withGangExecutorsTheFirstWorkerAskUnderTheAmsOwnKeyIsTheGangWhateverItsCount() {
    SchedulerRequestKey p0 = SchedulerRequestKey.create(
        org.apache.hadoop.yarn.api.records.ResourceRequest.newInstance(Priority.newInstance(0), "*", EACH, 1));
    AppAsks asks = new AppAsks(SpindleTags.parse(java.util.List.of("spindle.gang=executors")), false);
    String name = AppAsks.keyName(p0);
    assertThat(asks.expectsAmAsk(null)).isTrue();
    asks.markAm(name);
    assertThat(asks.isAm(name)).isTrue();
    assertThat(asks.changed(name, p0, EACH, 1)).isTrue();
    asks.allocated(name); // the AM container
    assertThat(asks.expectsAmAsk(null)).as("later allocate() calls come from the AM").isFalse();

    assertThat(asks.isAm(name)).as("the AM has its container; Spark's executors ask under the same key").isFalse();
    assertThat(asks.takesGang(name, 3)).isTrue();
    assertThat(asks.changed(name, p0, EACH, 3)).as("spark.executor.instances=3").isTrue();
    assertThat(asks.tags().gangSize()).as("no fixed size: the gang is the request's count").isZero();
    for (int i = 0; i < 3; i++) {
      asks.allocated(name);
    }
    assertThat(asks.takesGang(name, 3)).as("a replacement executor asked later, even as many as the first ask, is a single container").isFalse();
  }

  @Test
  void withoutAGangTagNoRequestIsAGang() {
    AppAsks asks = new AppAsks(SpindleTags.parse(java.util.List.of("spindle.topology.preferred=rack")), true);
    assertThat(asks.takesGang(AppAsks.keyName(KEY), 2)).isFalse();
  }
}
