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
import java.util.OptionalLong;
import java.util.concurrent.Executors;

/**
 * The ApplicationMaster's small HTTP server: workers report progress to {@code /progress} (the hang detector's
 * heartbeat), and {@code spindle-run} reads the job's state from {@code /status}. Plain text both ways, so a worker
 * reports with one {@code curl} or one line of Python (docs/training-guide.md).
 */
final class ProgressServer implements AutoCloseable {

  /** What the server asks of the master. */
  interface Master {
    /**
     * A report of {@code rank} in run {@code attempt}; returns the answer the worker reads: {@code ok}, or
     * {@code checkpoint <notice>} while Spindle waits for the job to checkpoint before it takes the GPUs back.
     */
    String progress(int attempt, int rank, long step);

    /**
     * The worker wrote a checkpoint of {@code step} at {@code path} (after being asked, or on its own schedule), in
     * {@code writeMillis} if it said: Spindle advises the checkpoint interval from it.
     */
    String checkpointed(int attempt, int rank, long step, String path, OptionalLong writeMillis);

    /** The worker needs {@code seconds} more to write the checkpoint it was asked for. */
    String extend(int attempt, int rank, long seconds);

    /** The job's state, several lines. */
    String status();
  }

  private final HttpServer server;

  ProgressServer(String host, Master master) throws IOException {
    server = HttpServer.create(new InetSocketAddress(0), 0);
    server.createContext("/progress", ex -> answer(ex, q -> master.progress((int) number(q, "attempt"),
        (int) number(q, "rank"), number(q, "step"))));
    server.createContext("/checkpointed", ex -> answer(ex, q -> {
      String path = q.get("path");
      if (path == null || path.isBlank()) {
        throw new IllegalArgumentException("path= names the checkpoint written");
      }
      return master.checkpointed((int) number(q, "attempt"), (int) number(q, "rank"), number(q, "step"), path,
          writeMillis(q.get("write_seconds")));
    }));
    server.createContext("/extend", ex -> answer(ex, q -> master.extend((int) number(q, "attempt"),
        (int) number(q, "rank"), number(q, "seconds"))));
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

  /** Replies what {@code handler} answers for the request's query, or 400 with the reason a parameter is wrong. */
  private static void answer(HttpExchange ex, java.util.function.Function<Map<String, String>, String> handler)
      throws IOException {
    String body;
    try {
      body = handler.apply(query(ex));
    } catch (IllegalArgumentException e) {
      reply(ex, 400, e.getMessage() + "\n");
      return;
    }
    reply(ex, 200, body);
  }

  /** A whole-number parameter; absent reads as -1 (attempt, rank and step are optional for a plain heartbeat). */
  /** {@code write_seconds=}, decimal, how long the checkpoint took to write; absent when not given. */
  private static OptionalLong writeMillis(String seconds) {
    if (seconds == null || seconds.isBlank()) {
      return OptionalLong.empty();
    }
    try {
      double s = Double.parseDouble(seconds);
      if (s >= 0 && s <= 86_400) {
        return OptionalLong.of(Math.round(s * 1000));
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new IllegalArgumentException("write_seconds= must be a number of seconds (0..86400), not '" + seconds + "'");
  }

  private static long number(Map<String, String> q, String name) {
    String v = q.get(name);
    if (v == null) {
      return -1;
    }
    try {
      long n = Long.parseLong(v);
      if (!name.equals("step") && !name.equals("seconds") && (n < Integer.MIN_VALUE || n > Integer.MAX_VALUE)) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + "= must be a whole number, not '" + v + "'");
    }
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
