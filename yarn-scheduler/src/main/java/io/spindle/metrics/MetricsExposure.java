package io.spindle.metrics;

import com.codahale.metrics.JmxReporter;
import com.sun.net.httpserver.HttpHandler;

/**
 * Where Spindle's metrics are visible from outside the RM: JMX (domain {@value #JMX_DOMAIN}) and the Prometheus
 * handler that Spindle's HTTP server mounts at {@value #PATH}.
 */
public final class MetricsExposure implements AutoCloseable {

  public static final String JMX_ENABLED = "yarn.scheduler.spindle.metrics.jmx.enabled";
  public static final String JMX_DOMAIN = "spindle";
  public static final String PATH = "/metrics";

  private final SpindleMetrics metrics;
  private final JmxReporter jmx;

  private MetricsExposure(SpindleMetrics metrics, JmxReporter jmx) {
    this.metrics = metrics;
    this.jmx = jmx;
  }

  public static MetricsExposure start(SpindleMetrics metrics, boolean jmxEnabled) {
    JmxReporter jmx = null;
    if (jmxEnabled) {
      jmx = JmxReporter.forRegistry(metrics.registry()).inDomain(JMX_DOMAIN).build();
      jmx.start();
    }
    return new MetricsExposure(metrics, jmx);
  }

  /** The Prometheus text endpoint over the same registry. */
  public HttpHandler prometheus() {
    return new PrometheusHandler(metrics.registry());
  }

  @Override
  public void close() {
    if (jmx != null) {
      jmx.stop();
    }
  }
}
