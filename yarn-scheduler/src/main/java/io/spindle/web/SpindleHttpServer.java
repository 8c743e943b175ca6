package io.spindle.web;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Spindle's own small HTTP server in the ResourceManager: the Prometheus endpoint now, and the place later status
 * handlers are added to ({@link #handle}). The JDK's server is enough for a few scrapes a minute and adds nothing to
 * the RM's classpath.
 */
public final class SpindleHttpServer implements AutoCloseable {

  private final HttpServer server;
  private final ExecutorService threads;
  private final List<Filter> filters;

  private SpindleHttpServer(HttpServer server, ExecutorService threads, List<Filter> filters) {
    this.server = server;
    this.threads = threads;
    this.filters = filters;
  }

  /** Binds {@code host:port} (port 0: any free port) without serving yet; add handlers, then {@link #start}. */
  public static SpindleHttpServer bind(String host, int port) throws IOException {
    return bind(host, port, List.of());
  }

  /** As {@link #bind(String, int)}, with {@code filters} (authentication) in front of every handler, in order. */
  public static SpindleHttpServer bind(String host, int port, List<Filter> filters) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 0);
    // Two threads: a slow scraper must not hold up another, and the scheduler's own threads are never used.
    ExecutorService threads = Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "spindle-http");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(threads);
    return new SpindleHttpServer(server, threads, List.copyOf(filters));
  }

  public SpindleHttpServer handle(String path, HttpHandler handler) {
    server.createContext(path, handler).getFilters().addAll(filters);
    return this;
  }

  /** As {@link #handle}, without the filters: a path the admin chose to serve to anyone (see SpindleWeb). */
  public SpindleHttpServer handleUnauthenticated(String path, HttpHandler handler) {
    server.createContext(path, handler);
    return this;
  }

  public void start() {
    server.start();
  }

  /** The bound address, with the actual port when 0 was asked for. */
  public InetSocketAddress address() {
    return server.getAddress();
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
