package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.junit.jupiter.api.Test;

/** CapacityScheduler's max-parallel-apps: per queue (the queues above count too) and per user, first come first. */
class ParallelAppsTest {

  private static final String P = "yarn.scheduler.capacity.";

  private static ApplicationId app(int n) {
    return ApplicationId.newInstance(1, n);
  }

  @Test
  void aParentsLimitCountsItsLeavesAndTheLongestWaitingStartsFirst() {
    Configuration c = new Configuration(false);
    c.set(P + "root.eng.max-parallel-apps", "2");
    ParallelApps p = new ParallelApps();
    p.configure(c);
    assertThat(p.admit(app(1), "root.eng.train", "u", false)).isTrue();
    assertThat(p.admit(app(2), "root.eng.serve", "v", false)).isTrue();
    assertThat(p.admit(app(3), "root.eng.serve", "v", false)).isFalse();
    assertThat(p.admit(app(4), "root.eng.train", "u", false)).isFalse();
    assertThat(p.admit(app(5), "root.ops", "u", false)).as("another branch").isTrue();
    assertThat(p.whyWaiting(app(3)).orElseThrow()).contains("queue root.eng runs its max-parallel-apps (2)");
    assertThat(p.ended(app(1))).containsExactly(app(3));
    assertThat(p.runs(app(4))).isFalse();
    assertThat(p.ended(app(4))).as("a waiting application that ends frees nothing").isEmpty();
    assertThat(p.admit(app(6), "root.eng.train", "u", true)).as("a recovered one ran before: it runs").isTrue();
  }

  @Test
  void aUsersLimitHoldsAcrossQueuesAndARaisedLimitStartsWhatWaits() {
    Configuration c = new Configuration(false);
    c.set(P + "user.alice.max-parallel-apps", "1");
    ParallelApps p = new ParallelApps();
    p.configure(c);
    assertThat(p.admit(app(1), "root.a", "alice", false)).isTrue();
    assertThat(p.admit(app(2), "root.b", "alice", false)).isFalse();
    assertThat(p.admit(app(3), "root.b", "bob", false)).isTrue();
    assertThat(p.whyWaiting(app(2)).orElseThrow()).contains("user alice runs their max-parallel-apps (1)");
    c.set(P + "user.alice.max-parallel-apps", "2");
    assertThat(p.configure(c)).containsExactly(app(2));
  }
}
