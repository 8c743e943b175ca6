package io.spindle.web;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;

/**
 * Answers {@code OPTIONS} for every path with 200 and the methods the server knows. hadoop-auth's client
 * ({@code AuthenticatedURL}) authenticates with an {@code OPTIONS} request, SPNEGO or pseudo, and takes nothing but
 * a 2xx as success; the handlers themselves only know {@code GET}, {@code HEAD} and {@code POST}.
 */
final class OptionsFilter extends Filter {

  @Override
  public String description() {
    return "OPTIONS for every path";
  }

  @Override
  public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
    if (!"OPTIONS".equals(exchange.getRequestMethod())) {
      chain.doFilter(exchange);
      return;
    }
    try (exchange) {
      exchange.getResponseHeaders().set("Allow", "GET, HEAD, POST, OPTIONS");
      exchange.sendResponseHeaders(200, -1);
    }
  }
}
