package io.spindle.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision;
import io.spindle.core.engine.EngineStats;
import io.spindle.core.engine.QueueSnapshot;
import io.spindle.core.model.AppId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.placement.MigSlices;
import io.spindle.web.SpindleHttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SpindleMetricsTest {

  private static QueueSnapshot queue(String path, long gpusUsed, long gpusPending) {
    return new QueueSnapshot(path, ResourceVector.of(1024, 8, 4), ResourceVector.of(2048, 16, 8),
        ResourceVector.of(512, 4, 2), ResourceVector.of(256, 2, gpusUsed), ResourceVector.of(0, 0, gpusPending));
  }

  @Test
  void snapshotFiguresBecomeLabelledPrometheusSamples() throws IOException {
    SpindleMetrics metrics = new SpindleMetrics();
    metrics.publish(new EngineStats(2, 90_000, 1, 16, 5, Map.of("1g.10gb", 7), new MigSlices(14, 4, 3), 12, 3,
        45_000, new EngineStats.GpuServiceCounts(2, 1, 1, 5)),
        List.of(queue("root", 3, 8), queue("root.a", 3, 8)));
    metrics.decided(List.of(new Decision.Wait(AppId.of("app_1"), "k", "full"), new Decision.Wait(AppId.of("app_1"), "k", "full"),
        new Decision.Reject(AppId.of("app_2"), "k", "never"),
        new Decision.Preempt(7, AppId.of("app_3"), "k", List.of(1L, 2L), null, "deadline passed")),
        app -> app.equals(AppId.of("app_3")) ? java.util.Optional.of("root.a") : java.util.Optional.empty());
    metrics.timeCycle().stop();
    metrics.checkpointAnswered("done", 1500);

    String text = new PrometheusHandler(metrics.registry()).scrape();

    assertThat(text)
        .contains("spindle_queue_usage_gpus{queue=\"root.a\",} 3.0")
        .contains("spindle_queue_preempted_containers_total{queue=\"root.a\",} 2.0")
        .contains("spindle_queue_preempted_containers_total{queue=\"root\",} 0.0")
        .contains("spindle_queue_pending_gpus{queue=\"root.a\",} 8.0")
        .contains("spindle_queue_fair_share_memory_mb{queue=\"root.a\",} 512.0")
        .contains("spindle_queue_guarantee_vcores{queue=\"root\",} 8.0")
        .contains("spindle_pending_gangs 2.0")
        .contains("spindle_pending_gang_oldest_age_seconds 90.0")
        .contains("spindle_reservations 1.0")
        .contains("spindle_reservation_oldest_age_seconds 45.0")
        .contains("spindle_gpus_total 16.0")
        .contains("spindle_gpus_free 5.0")
        .contains("spindle_gpus_out_of_service 2.0")
        .contains("spindle_gpus_degraded 1.0")
        .contains("spindle_gpus_quarantined 1.0")
        .contains("spindle_gpu_failures 5.0")
        .contains("spindle_gpus_used 3.0")
        .contains("spindle_gpus_utilisation 0.1875")
        .contains("spindle_mig_free_instances{profile=\"1g.10gb\",} 7.0")
        .contains("spindle_mig_slices_total 14.0")
        .contains("spindle_mig_slices_used 4.0")
        .contains("spindle_mig_slices_stranded 3.0")
        .contains("spindle_mig_utilisation 0.2857")
        .contains("spindle_decisions_total{type=\"wait\",} 2.0")
        .contains("spindle_decisions_total{type=\"reject\",} 1.0")
        .contains("spindle_decisions_total{type=\"allocate\",} 0.0")
        .contains("spindle_decisions_total{type=\"request_checkpoint\",} 0.0")
        .contains("spindle_preempted_containers_total 2.0")
        .contains("spindle_recovered_containers_total 0.0")
        .contains("spindle_cycle_seconds_count 1.0")
        .contains("spindle_checkpoint_ack_seconds_count 1.0")
        .contains("spindle_checkpoint_outcomes_total{outcome=\"done\",} 1.0");
  }

  @Test
  void aRemovedQueueLeavesTheOutput() throws IOException {
    SpindleMetrics metrics = new SpindleMetrics();
    metrics.publish(EngineStats.EMPTY, List.of(queue("root", 0, 0), queue("root.a", 1, 0), queue("root.a.b", 1, 0)));
    metrics.publish(EngineStats.EMPTY, List.of(queue("root", 0, 0), queue("root.a", 2, 0)));

    String text = new PrometheusHandler(metrics.registry()).scrape();

    assertThat(text).contains("spindle_queue_usage_gpus{queue=\"root.a\",} 2.0").doesNotContain("root.a.b");
  }

  @Test
  void theHttpServerServesTheTextFormat() throws IOException {
    SpindleMetrics metrics = new SpindleMetrics();
    metrics.publish(new EngineStats(1, 0, 0, 8, 8, Map.of(), MigSlices.NONE, 4, 0, 0), List.of(queue("root", 0, 4)));
    try (MetricsExposure exposure = MetricsExposure.start(metrics, false);
        SpindleHttpServer http = SpindleHttpServer.bind("127.0.0.1", 0).handle(MetricsExposure.PATH,
            exposure.prometheus())) {
      http.start();
      URL url = new URL("http://127.0.0.1:" + http.address().getPort() + MetricsExposure.PATH);
      HttpURLConnection c = (HttpURLConnection) url.openConnection();
      assertThat(c.getResponseCode()).isEqualTo(200);
      assertThat(c.getContentType()).startsWith("text/plain");
      try (InputStream in = c.getInputStream()) {
        assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).contains("spindle_pending_gangs 1.0");
      }
    }
  }

  @Test
  void decisionTypesAreSnakeCase() {
    assertThat(SpindleMetrics.snakeCase("RequestCheckpoint")).isEqualTo("request_checkpoint");
    assertThat(SpindleMetrics.snakeCase("ReconfigureMig")).isEqualTo("reconfigure_mig");
  }
}
