package io.spindle.launcher.yarn;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;

/**
 * The ApplicationMaster's small HTTP server: workers report progress to {@code /progress} (the hang detector's
 * heartbeat), and {@code spindle-run} reads the job's state from {@code /status}. Plain text both ways, so a worker
 * reports with one {@code curl} or one line of Python (docs/training-guide.md).
 */
final class ProgressServer implements AutoCloseable {

  /** What the server asks of the master. */
  interface Master {
    /** A report of {@code rank} in run {@code attempt}; returns the answer the worker reads ({@code ok}). */
    String progress(int attempt, int rank, long step);

    /** The job's state, several lines. */
    String status();
  }

  private final HttpServer server;

  ProgressServer(String host, Master master) throws IOException {
    server = HttpServer.create(new InetSocketAddress(0), 0);
    server.createContext("/progress", ex -> {
      Map<String, String> q = query(ex);
      try {
        reply(ex, 200, master.progress(Integer.parseInt(q.getOrDefault("attempt", "-1")),
            Integer.parseInt(q.getOrDefault("rank", "-1")), Long.parseLong(q.getOrDefault("step", "-1"))));
      } catch (NumberFormatException e) {
        reply(ex, 400, "attempt, rank and step are whole numbers: " + e.getMessage() + "\n");
      }
    });
    server.createContext("/status", ex -> reply(ex, 200, master.status()));
    server.createContext("/", ex -> reply(ex, 200, master.status()));
    server.setExecutor(Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "spindle-run-progress");
      t.setDaemon(true);
      return t;
    }));
    server.start();
    this.host = host;
  }

  private final String host;

  /** {@code http://host:port}, as workers and the client reach it. */
  String url() {
    return "http://" + host + ":" + server.getAddress().getPort();
  }

  private static Map<String, String> query(HttpExchange ex) {
    Map<String, String> out = new HashMap<>();
    String raw = ex.getRequestURI().getRawQuery();
    if (raw != null) {
      for (String kv : raw.split("&")) {
        int eq = kv.indexOf('=');
        if (eq > 0) {
          out.put(URLDecoder.decode(kv.substring(0, eq), StandardCharsets.UTF_8),
              URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
        }
      }
    }
    return out;
  }

  private static void reply(HttpExchange ex, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    ex.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
  }
}
