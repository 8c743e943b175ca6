package io.spindle.yarn;

import static io.spindle.yarn.MiniClusterSupport.gpus;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.metrics.MetricsExposure;
import io.spindle.web.SpindleWeb;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Spindle's Prometheus endpoint and JMX beans, read from a MiniYARNCluster (1 RM, 2 NodeManagers with 8 GPUs each)
 * while one gang runs and another waits, and checked against what the cluster did.
 */
class MetricsEndpointTest {

  private static MiniYARNCluster cluster;
  private static YarnClient client;
  private static Configuration conf;

  @BeforeAll
  static void startCluster() throws Exception {
    YarnConfiguration c = new YarnConfiguration();
    MiniClusterSupport.spindleWithGpus(c, 8);
    c.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 65_536);
    c.setInt(YarnConfiguration.NM_VCORES, 32);
    MiniClusterSupport.halvesAandB(c);
    c.setInt(SpindleWeb.PORT, 0);
    c.set(SpindleWeb.BIND_ADDRESS, "127.0.0.1");
    cluster = MiniClusterSupport.startCluster("spindle-metrics", c, 2);
    conf = cluster.getConfig();
    client = MiniClusterSupport.startClient(conf);
    MiniClusterSupport.await(Duration.ofSeconds(30), () -> client.getNodeReports(NodeState.RUNNING).size() == 2);
    MiniClusterSupport.awaitEngineGpus(cluster, 16);
  }

  @AfterAll
  static void stopCluster() throws Exception {
    MiniClusterSupport.stopAll(client, cluster);
  }

  @Test
  void theEndpointShowsARunningGangAndAWaitingOne() throws Exception {
    ApplicationId running = UnmanagedAm.submit(client, "running-gang", "a", Set.of("spindle.gang.size=2"));
    ApplicationId waiting = UnmanagedAm.submit(client, "waiting-gang", "a", Set.of("spindle.gang.size=3"));
    try (UnmanagedAm first = UnmanagedAm.register(client, conf, running);
        UnmanagedAm second = UnmanagedAm.register(client, conf, waiting)) {
      first.ask(2, gpus(4));
      assertThat(first.awaitHeld(2, Duration.ofSeconds(30))).isEqualTo(2);
      // 8 of 16 GPUs are left: three containers of 4 cannot start together, so this gang waits, whole.
      second.ask(3, gpus(4));
      second.awaitHeld(1, Duration.ofSeconds(2));
      assertThat(second.held()).isEmpty();

      Map<String, Double> m = new HashMap<>();
      MiniClusterSupport.await(Duration.ofSeconds(20), () -> {
        m.clear();
        m.putAll(scrape());
        return m.getOrDefault("spindle_pending_gangs", -1.0) == 1.0
            && m.getOrDefault("spindle_queue_usage_gpus{queue=\"root.a\",}", -1.0) == 8.0;
      });

      assertThat(m).containsEntry("spindle_queue_usage_gpus{queue=\"root.a\",}", 8.0)
          .containsEntry("spindle_queue_pending_gpus{queue=\"root.a\",}", 12.0)
          .containsEntry("spindle_queue_usage_gpus{queue=\"root.b\",}", 0.0)
          .containsEntry("spindle_queue_guarantee_gpus{queue=\"root.a\",}", 8.0)
          .containsEntry("spindle_gpus_total", 16.0)
          .containsEntry("spindle_gpus_used", 8.0)
          .containsEntry("spindle_gpus_free", 8.0)
          .containsEntry("spindle_pending_gangs", 1.0)
          .containsEntry("spindle_running_containers", 2.0);
      assertThat(m.get("spindle_decisions_total{type=\"allocate\",}")).isGreaterThanOrEqualTo(2.0);
      assertThat(m.get("spindle_decisions_total{type=\"reject\",}")).isEqualTo(0.0);
      assertThat(m.get("spindle_cycle_seconds_count")).isGreaterThan(0.0);
      assertThat(m.get("spindle_pending_gang_oldest_age_seconds")).isGreaterThanOrEqualTo(0.0);

      // The same registry over JMX, as the bridge's JmxReporter publishes it.
      MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
      Set<ObjectName> names = jmx.queryNames(new ObjectName(MetricsExposure.JMX_DOMAIN + ":name=spindle.pending.gangs,*"),
          null);
      assertThat(names).hasSize(1);
      assertThat(((Number) jmx.getAttribute(names.iterator().next(), "Value")).doubleValue()).isEqualTo(1.0);
    }
  }

  private static Map<String, Double> scrape() throws Exception {
    return MiniClusterSupport.scrapePrometheus(cluster);
  }
}
