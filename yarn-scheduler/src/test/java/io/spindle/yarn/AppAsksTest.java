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
    assertThat(asks.takesGang(name)).isTrue();
    assertThat(asks.changed(name, KEY, EACH, 2)).isTrue();
    asks.allocated(name);
    asks.allocated(name);
    assertThat(asks.takesGang(name)).as("a started gang's later asks are single containers").isFalse();
    assertThat(asks.changed(name, KEY, EACH, 0)).as("the AM withdrew what it got").isFalse();

    // Both members preempted: the engine re-queued the gang and YARN's ask holds it again.
    asks.requeued(name, KEY, EACH);
    asks.requeued(name, KEY, EACH);
    assertThat(asks.takesGang(name)).isTrue();
    assertThat(asks.changed(name, KEY, EACH, 2)).as("the AM asking for its two again tells the engine nothing new")
        .isFalse();
    assertThat(asks.changed(name, KEY, EACH, 3)).as("asking for more is a change").isTrue();
  }

  @Test
  void aPreemptedContainerOfARequestNeverForwardedIsRecordedUnderItsKey() {
    AppAsks asks = new AppAsks(SpindleTags.NONE, false);
    String name = AppAsks.keyName(KEY);
    asks.requeued(name, KEY, EACH); // A container recovered after a restart, then preempted.
    assertThat(asks.ask(name)).isEqualTo(new AppAsks.Ask(KEY, EACH, 1));
    assertThat(asks.takesGang(name)).isFalse();
  }
}
