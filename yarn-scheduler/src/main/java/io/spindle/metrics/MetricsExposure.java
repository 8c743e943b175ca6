package io.spindle.metrics;

import com.codahale.metrics.JmxReporter;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * Where Spindle's metrics are visible from outside the RM: JMX (domain {@value #JMX_DOMAIN}) and, when a port is
 * configured, the Prometheus endpoint {@value #PATH} on {@link SpindleHttpServer}.
 */
public final class MetricsExposure implements AutoCloseable {

  public static final String PORT = "yarn.scheduler.spindle.metrics.port";
  /** Off by default: two RMs of an HA pair on one host, or tests with several, would fight over a fixed port. */
  public static final int DEFAULT_PORT = -1;
  public static final String BIND_ADDRESS = "yarn.scheduler.spindle.metrics.bind-address";
  public static final String DEFAULT_BIND_ADDRESS = "0.0.0.0";
  public static final String JMX_ENABLED = "yarn.scheduler.spindle.metrics.jmx.enabled";
  public static final String JMX_DOMAIN = "spindle";
  public static final String PATH = "/metrics";

  private final JmxReporter jmx;
  private final SpindleHttpServer http;

  private MetricsExposure(JmxReporter jmx, SpindleHttpServer http) {
    this.jmx = jmx;
    this.http = http;
  }

  /** Starts what is enabled: {@code port} < 0 serves no HTTP, 0 any free port. */
  public static MetricsExposure start(SpindleMetrics metrics, boolean jmxEnabled, String bindAddress, int port)
      throws IOException {
    SpindleHttpServer http = null;
    if (port >= 0) {
      http = SpindleHttpServer.bind(bindAddress, port).handle(PATH, new PrometheusHandler(metrics.registry()));
      http.start();
    }
    JmxReporter jmx = null;
    if (jmxEnabled) {
      jmx = JmxReporter.forRegistry(metrics.registry()).inDomain(JMX_DOMAIN).build();
      jmx.start();
    }
    return new MetricsExposure(jmx, http);
  }

  /** The HTTP server's address, for other handlers and tests; empty when no port is configured. */
  public Optional<InetSocketAddress> httpAddress() {
    return Optional.ofNullable(http).map(SpindleHttpServer::address);
  }

  public Optional<SpindleHttpServer> http() {
    return Optional.ofNullable(http);
  }

  @Override
  public void close() {
    if (http != null) {
      http.close();
    }
    if (jmx != null) {
      jmx.stop();
    }
  }
}
