package io.spindle.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.bench.FailoverBenchmark.Trial;
import java.util.List;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.Test;

/** The failover harness at toy scale: both ways of losing the leader hand over every gang and the notice. */
class FailoverBenchmarkTest {

  @Test
  void theStandbyTakesOverAfterAHandoverAndAfterACrashWithinTheSessionTimeoutPlusTwoSeconds() throws Exception {
    try (TestingCluster ensemble = new TestingCluster(3)) {
      ensemble.start();
      for (String mode : List.of("handover", "crash")) {
        Trial t = FailoverBenchmark.run(ensemble, mode, 50, 2_000, 1).get(0);
        assertThat(t.report().units()).as("%s: every gang regrouped", mode).isEqualTo(50);
        assertThat(t.report().notices()).isEqualTo(1);
        assertThat(t.report().dropped()).isEmpty();
        assertThat(t.stateBytes()).isPositive();
        assertThat(t.takeOverMs()).as("%s: %s", mode, t).isLessThan(2_000 + 2_000);
      }
    }
  }
}
