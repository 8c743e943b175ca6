package io.spindle.web;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The GPU map: one self-contained page (no external scripts, so it works on a cluster without internet access) that
 * draws nodes x GPUs from {@code /api/v1/nodes} and lists pending gangs from {@code /api/v1/gangs}, refreshing
 * every few seconds. Served for {@code /} and {@code /gpu-map}; anything else under {@code /} is 404.
 */
final class GpuMapPage implements HttpHandler {

  private static final String RESOURCE = "gpu-map.html";
  private final byte[] page;

  GpuMapPage() {
    try (InputStream in = GpuMapPage.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("the scheduler JAR lacks " + RESOURCE);
      }
      page = in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getPath();
      if (!path.equals("/") && !path.equals("/gpu-map")) {
        HttpExchanges.send(exchange, 404, "text/plain; charset=utf-8",
            ("no page " + path + "; the GPU map is at /, the status API under " + StatusApi.PREFIX)
                .getBytes(StandardCharsets.UTF_8));
        return;
      }
      if (!"GET".equals(exchange.getRequestMethod()) && !"HEAD".equals(exchange.getRequestMethod())) {
        HttpExchanges.send(exchange, 405, "text/plain; charset=utf-8", new byte[0]);
        return;
      }
      HttpExchanges.send(exchange, 200, "text/html; charset=utf-8", page);
    }
  }
}
