package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.queue.QueueConfigParser;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code yarn rmadmin -refreshQueues} with a hostile capacity-scheduler.xml: {@link SpindleScheduler#reinitialize}
 * answers with an IOException naming the key and the reason, and the queues in force stay as they were. The cases
 * are the kinds {@code QueueConfigFuzzTest} generates, one of each.
 */
class SpindleSchedulerReloadTest {

  private static final String P = QueueConfigParser.PREFIX;
  private SpindleScheduler scheduler;

  @BeforeEach
  void start() {
    scheduler = new SpindleScheduler();
    scheduler.init(conf(Map.of(P + "root.queues", "a,b", P + "root.a.capacity", "40", P + "root.b.capacity", "60")));
  }

  @AfterEach
  void stop() {
    scheduler.stop();
  }

  static Object[][] hostile() {
    return new Object[][] {
        {Map.of(P + "root.queues", "a,b", P + "root.a.capacity", "NaN", P + "root.b.capacity", "60"),
            P + "root.a.capacity"},
        {Map.of(P + "root.queues", "a,b", P + "root.a.capacity", "50", P + "root.b.capacity", "60"),
            P + "root.queues"},
        {Map.of(P + "root.queues", "a,b", P + "root.a.capacity", "-40", P + "root.b.capacity", "140"),
            P + "root.a.capacity"},
        {Map.of(P + "root.queues", "a,b/c", P + "root.a.capacity", "40", P + "root.b.capacity", "60"),
            P + "root.queues"},
        {Map.of(P + "root.queues", "a,b", P + "root.a.capacity", "[memory=9223372036854775807Ti]",
            P + "root.b.capacity", "60"), P + "root.a.capacity"},
        {deep(200), P + "root" + ".q".repeat(QueueConfigParser.MAX_DEPTH) + ".queues"},
    };
  }

  @ParameterizedTest
  @MethodSource("hostile")
  void aRefusedReloadNamesTheKeyAndKeepsTheQueuesInForce(Map<String, String> keys, String key) throws Exception {
    String before = tree();
    assertThatThrownBy(() -> scheduler.reinitialize(conf(keys), null))
        .isInstanceOf(java.io.IOException.class)
        .hasMessageStartingWith("Spindle refused the new queue configuration, the previous one stays in force: "
            + key + ": ");
    assertThat(tree()).isEqualTo(before).isEqualTo("root[a, b]");
    assertThatThrownBy(() -> scheduler.getQueueInfo("q", false, false)).hasMessageContaining("Unknown queue");
  }

  @Test
  void aReloadWithKeysOfAnUndeclaredQueueIsTakenAndTheKeysIgnored() throws Exception {
    // CapacityScheduler takes such a file (a removed queue's keys, the shipped root.default.* ones): so does Spindle.
    scheduler.reinitialize(conf(Map.of(P + "root.queues", "a,b", P + "root.a.capacity", "30", P + "root.b.capacity",
        "70", P + "root.c.capacity", "10")), null);
    assertThat(tree()).isEqualTo("root[a, b]");
    assertThat(scheduler.getQueueInfo("a", false, false).getCapacity()).isEqualTo(0.3f);
  }

  /**
   * A reload keeps each remaining queue's metrics: YARN's registry is one JVM-wide map by queue name, which another
   * scheduler in the JVM (the other ResourceManager of an HA pair in a test cluster, re-reading its queues as it
   * becomes active) may have filled since. Before, the reload took the other scheduler's objects.
   */
  @Test
  void aReloadKeepsTheQueuesMetricsThoughAnotherSchedulerRegisteredItsOwn() throws Exception {
    Map<String, String> queues = Map.of(P + "root.queues", "a,b", P + "root.a.capacity", "40",
        P + "root.b.capacity", "60");
    QueueMetrics root = scheduler.getRootQueueMetrics();
    QueueMetrics.clearQueueMetrics();
    SpindleScheduler other = new SpindleScheduler();
    other.init(conf(queues));
    try {
      scheduler.reinitialize(conf(Map.of(P + "root.queues", "a,b", P + "root.a.capacity", "50",
          P + "root.b.capacity", "50")), null);

      assertThat(scheduler.getRootQueueMetrics()).isSameAs(root).isNotSameAs(other.getRootQueueMetrics());
      assertThat(tree()).isEqualTo("root[a, b]");
    } finally {
      other.stop();
    }
  }

  /** The queues YARN sees, by path. */
  private String tree() throws Exception {
    QueueInfo root = scheduler.getQueueInfo("root", true, true);
    return root.getQueueName() + root.getChildQueues().stream().map(QueueInfo::getQueueName).toList();
  }

  private static Map<String, String> deep(int depth) {
    Map<String, String> keys = new java.util.HashMap<>();
    StringBuilder path = new StringBuilder("root");
    for (int i = 0; i < depth; i++) {
      keys.put(P + path + ".queues", "q");
      path.append(".q");
      keys.put(P + path + ".capacity", "100");
    }
    return keys;
  }

  private static Configuration conf(Map<String, String> keys) {
    Configuration c = new YarnConfiguration();
    keys.forEach(c::set);
    return c;
  }
}
