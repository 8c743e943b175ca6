package io.spindle.metrics;

import com.codahale.metrics.MetricRegistry;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.dropwizard.DropwizardExports;
import io.prometheus.client.exporter.common.TextFormat;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;

/**
 * Serves a Dropwizard registry in Prometheus' text format through the maintained bridge
 * ({@code simpleclient_dropwizard}), with Spindle's labels ({@link PrometheusNames}).
 */
public final class PrometheusHandler implements HttpHandler {

  private final CollectorRegistry collectors = new CollectorRegistry();

  public PrometheusHandler(MetricRegistry registry) {
    collectors.register(new DropwizardExports(registry, new PrometheusNames()));
  }

  /** The whole exposition as text, as a scrape receives it. */
  public String scrape() throws IOException {
    StringWriter out = new StringWriter();
    TextFormat.write004(out, collectors.metricFamilySamples());
    return out.toString();
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!"GET".equals(exchange.getRequestMethod()) && !"HEAD".equals(exchange.getRequestMethod())) {
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      byte[] body = scrape().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", TextFormat.CONTENT_TYPE_004);
      boolean head = "HEAD".equals(exchange.getRequestMethod());
      exchange.sendResponseHeaders(200, head ? -1 : body.length);
      if (!head) {
        try (OutputStream os = exchange.getResponseBody()) {
          os.write(body);
        }
      }
    }
  }
}
