package io.spindle.web;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** The few things every handler does with an exchange. */
final class HttpExchanges {

  private HttpExchanges() {}

  static void send(HttpExchange exchange, int status, String contentType, byte[] body) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", contentType);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    boolean head = "HEAD".equals(exchange.getRequestMethod());
    exchange.sendResponseHeaders(status, head || body.length == 0 ? -1 : body.length);
    if (!head && body.length > 0) {
      try (OutputStream os = exchange.getResponseBody()) {
        os.write(body);
      }
    }
  }

  /** {@code {"error": message}}, the shape every refusal of Spindle's HTTP server has. */
  static void sendError(HttpExchange exchange, int status, String message) throws IOException {
    byte[] body = StatusJson.MAPPER.writerWithDefaultPrettyPrinter()
        .writeValueAsBytes(StatusJson.MAPPER.createObjectNode().put("error", message));
    send(exchange, status, "application/json; charset=utf-8", body);
  }

  static Map<String, String> query(HttpExchange exchange) {
    Map<String, String> out = new LinkedHashMap<>();
    String raw = exchange.getRequestURI().getRawQuery();
    if (raw == null || raw.isEmpty()) {
      return out;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
      String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      out.putIfAbsent(key, value);
    }
    return out;
  }
}
