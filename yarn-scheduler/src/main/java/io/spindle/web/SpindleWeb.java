package io.spindle.web;

import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * Spindle's web endpoints in the ResourceManager, on one port: the Prometheus endpoint, the status API and the GPU
 * map page.
 */
public final class SpindleWeb implements AutoCloseable {

  public static final String PORT = "yarn.scheduler.spindle.http.port";
  /** Off by default: two RMs of an HA pair on one host, or tests with several, would fight over a fixed port. */
  public static final int DEFAULT_PORT = -1;
  public static final String BIND_ADDRESS = "yarn.scheduler.spindle.http.bind-address";
  public static final String DEFAULT_BIND_ADDRESS = "0.0.0.0";
  public static final String MAP_PATH = "/";

  private final SpindleHttpServer http;

  private SpindleWeb(SpindleHttpServer http) {
    this.http = http;
  }

  /** Serves nothing when {@code port} < 0; port 0 takes any free port. */
  public static SpindleWeb start(String bindAddress, int port, String metricsPath, HttpHandler metrics,
      SchedulerView view, RequestUser users) throws IOException {
    if (port < 0) {
      return new SpindleWeb(null);
    }
    SpindleHttpServer http = SpindleHttpServer.bind(bindAddress, port)
        .handle(metricsPath, metrics)
        .handle(StatusApi.PREFIX, new StatusApi(view, users))
        .handle(MAP_PATH, new GpuMapPage());
    http.start();
    return new SpindleWeb(http);
  }

  public Optional<InetSocketAddress> address() {
    return Optional.ofNullable(http).map(SpindleHttpServer::address);
  }

  @Override
  public void close() {
    if (http != null) {
      http.close();
    }
  }
}
