package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.junit.jupiter.api.Test;

/**
 * CapacityScheduler's activation: max-parallel-apps per queue (the queues above count too) and per user, and the AM
 * resource limit of a leaf; first come first.
 */
class AppActivationTest {

  private static final String P = "yarn.scheduler.capacity.";

  private static ApplicationId app(int n) {
    return ApplicationId.newInstance(1, n);
  }

  @Test
  void aParentsLimitCountsItsLeavesAndTheLongestWaitingStartsFirst() {
    Configuration c = new Configuration(false);
    c.set(P + "root.eng.max-parallel-apps", "2");
    AppActivation p = new AppActivation(leaf -> Resources.none(), Resources::none);
    p.configure(c);
    assertThat(p.admit(app(1), "root.eng.train", "u", Resources.none(), false)).isTrue();
    assertThat(p.admit(app(2), "root.eng.serve", "v", Resources.none(), false)).isTrue();
    assertThat(p.admit(app(3), "root.eng.serve", "v", Resources.none(), false)).isFalse();
    assertThat(p.admit(app(4), "root.eng.train", "u", Resources.none(), false)).isFalse();
    assertThat(p.admit(app(5), "root.ops", "u", Resources.none(), false)).as("another branch").isTrue();
    assertThat(p.whyWaiting(app(3)).orElseThrow()).contains("queue root.eng runs its max-parallel-apps (2)");
    assertThat(p.ended(app(1))).containsExactly(app(3));
    assertThat(p.runs(app(4))).isFalse();
    assertThat(p.ended(app(4))).as("a waiting application that ends frees nothing").isEmpty();
    assertThat(p.admit(app(6), "root.eng.train", "u", Resources.none(), true)).as("a recovered one ran before: it runs").isTrue();
  }

  @Test
  void aUsersLimitHoldsAcrossQueuesAndARaisedLimitStartsWhatWaits() {
    Configuration c = new Configuration(false);
    c.set(P + "user.alice.max-parallel-apps", "1");
    AppActivation p = new AppActivation(leaf -> Resources.none(), Resources::none);
    p.configure(c);
    assertThat(p.admit(app(1), "root.a", "alice", Resources.none(), false)).isTrue();
    assertThat(p.admit(app(2), "root.b", "alice", Resources.none(), false)).isFalse();
    assertThat(p.admit(app(3), "root.b", "bob", Resources.none(), false)).isTrue();
    assertThat(p.whyWaiting(app(2)).orElseThrow()).contains("user alice runs their max-parallel-apps (1)");
    c.set(P + "user.alice.max-parallel-apps", "2");
    assertThat(p.configure(c)).containsExactly(app(2));
  }

  @Test
  void applicationMastersBeyondTheLeafsAmLimitWaitButTheFirstAlwaysRuns() {
    Resource cluster = Resource.newInstance(10_240, 10);
    Resource[] limit = {Resource.newInstance(1_024, 10)};
    AppActivation p = new AppActivation(leaf -> leaf.equals("root.a") ? limit[0] : Resources.none(), () -> cluster);
    p.configure(new Configuration(false));
    Resource am = Resource.newInstance(768, 1);
    assertThat(p.admit(app(1), "root.b", "u", am, false)).as("the first of a leaf, whatever its limit").isTrue();
    assertThat(p.admit(app(2), "root.a", "u", am, false)).isTrue();
    assertThat(p.admit(app(3), "root.a", "u", am, false)).as("768 + 768 MB above the 1024 MB limit").isFalse();
    assertThat(p.admit(app(4), "root.a", "u", Resources.none(), false)).as("an unmanaged AM holds nothing").isTrue();
    assertThat(p.whyWaiting(app(3)).orElseThrow()).contains("Queue's AM resource limit exceeded")
        .contains("Queue Resource Limit for AM = <memory:1024, vCores:10>");
    limit[0] = Resource.newInstance(2_048, 10);
    assertThat(p.clusterChanged()).as("a larger cluster raises the limit").containsExactly(app(3));
    assertThat(p.admit(app(5), "root.a", "u", am, false)).isFalse();
    assertThat(p.ended(app(2))).as("an ended application frees its AM's share").containsExactly(app(5));
  }

  @Test
  void eachUsersApplicationMastersHoldAtMostTheirShareOfTheLeafsAmLimit() {
    Resource cluster = Resource.newInstance(10_240, 10);
    AppActivation p = new AppActivation(leaf -> Resource.newInstance(4_096, 10), () -> cluster);
    Configuration c = new Configuration(false);
    c.set(P + "root.a.user-limit-factor", "0.5");
    p.configure(c);
    Resource am = Resource.newInstance(1_024, 1);
    assertThat(p.admit(app(1), "root.a", "alice", am, false)).isTrue();
    assertThat(p.admit(app(2), "root.a", "alice", am, false)).as("2048 MB: half of the 4096 MB AM limit").isTrue();
    assertThat(p.admit(app(3), "root.a", "alice", am, false)).isFalse();
    assertThat(p.whyWaiting(app(3)).orElseThrow()).contains("User's AM resource limit exceeded")
        .contains("User AM Resource Limit of the queue = <memory:2048, vCores:5>");
    assertThat(p.admit(app(4), "root.a", "bob", am, false)).as("another user's share has room").isTrue();
    assertThat(p.ended(app(1))).containsExactly(app(3));
  }
}
