package io.spindle.web;

import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;

/**
 * Spindle's web endpoints in the ResourceManager, on one port: the Prometheus endpoint, the status API and the GPU
 * map page, all behind the same authentication ({@link HttpAuthentication}).
 */
public final class SpindleWeb implements AutoCloseable {

  public static final String PORT = "yarn.scheduler.spindle.http.port";
  /** Off by default: two RMs of an HA pair on one host, or tests with several, would fight over a fixed port. */
  public static final int DEFAULT_PORT = -1;
  public static final String BIND_ADDRESS = "yarn.scheduler.spindle.http.bind-address";
  public static final String DEFAULT_BIND_ADDRESS = "0.0.0.0";
  public static final String MAP_PATH = "/";
  /**
   * {@code true}: the Prometheus endpoint is served without authentication even under Kerberos, for scrapers that
   * cannot negotiate. It shows queue names, counts and timings, never applications or users; off by default.
   */
  public static final String METRICS_UNAUTHENTICATED = "yarn.scheduler.spindle.http.metrics.unauthenticated";

  private final SpindleHttpServer http;
  private final HttpAuthentication authentication;

  private SpindleWeb(SpindleHttpServer http, HttpAuthentication authentication) {
    this.http = http;
    this.authentication = authentication;
  }

  /**
   * Serves on {@value #BIND_ADDRESS}:{@value #PORT} of {@code conf}: nothing when the port is < 0, any free port when
   * it is 0.
   *
   * @throws IllegalArgumentException if Kerberos is on and the SPNEGO keys are missing or wrong (it names the key):
   *     the server never serves without the authentication the cluster asks for
   */
  public static SpindleWeb start(Configuration conf, String metricsPath, HttpHandler metrics, SchedulerView view)
      throws IOException {
    int port = conf.getInt(PORT, DEFAULT_PORT);
    if (port < 0) {
      return new SpindleWeb(null, null);
    }
    String bindAddress = conf.getTrimmed(BIND_ADDRESS, DEFAULT_BIND_ADDRESS);
    HttpAuthentication authentication = HttpAuthentication.fromConfiguration(conf, bindAddress);
    try {
      SpindleHttpServer http = SpindleHttpServer.bind(bindAddress, port, authentication.filters());
      if (conf.getBoolean(METRICS_UNAUTHENTICATED, false)) {
        http.handleUnauthenticated(metricsPath, metrics);
      } else {
        http.handle(metricsPath, metrics);
      }
      http.handle(StatusApi.PREFIX, new StatusApi(view, authentication.users()))
          .handle(MAP_PATH, new GpuMapPage());
      http.start();
      return new SpindleWeb(http, authentication);
    } catch (IOException | RuntimeException e) {
      authentication.close();
      throw e;
    }
  }

  public Optional<InetSocketAddress> address() {
    return Optional.ofNullable(http).map(SpindleHttpServer::address);
  }

  @Override
  public void close() {
    if (http != null) {
      http.close();
      authentication.close();
    }
  }
}
