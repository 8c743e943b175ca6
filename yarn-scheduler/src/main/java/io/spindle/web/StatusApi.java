package io.spindle.web;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.spindle.core.engine.EngineStatus;
import io.spindle.core.model.AppId;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.queue.QueueTree;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The status API under {@value #PREFIX}: read-only views for everyone, admin operations for holders of the root
 * queue's administer ACL. Paths and fields are documented in docs/admin-guide.md, "Status API".
 */
public final class StatusApi implements HttpHandler {

  public static final String PREFIX = "/api/v1/";
  private static final Logger LOG = LoggerFactory.getLogger(StatusApi.class);
  private static final String JSON = "application/json; charset=utf-8";
  /** YARN's own application id syntax: anything else is refused before it reaches a lookup or a log line. */
  private static final Pattern APP_ID = Pattern.compile("application_\\d+_\\d+");
  private static final java.util.List<String> ADMIN_OPERATIONS = java.util.List.of("refresh-queues", "cordon",
      "uncordon", "cordon-gpu", "uncordon-gpu");

  private final SchedulerView view;
  private final RequestUser users;

  public StatusApi(SchedulerView view, RequestUser users) {
    this.view = view;
    this.users = users;
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getPath().substring(PREFIX.length());
      String method = exchange.getRequestMethod();
      try {
        if (path.startsWith("admin/")) {
          if (!"POST".equals(method)) {
            reply(exchange, 405, error("admin operations are POST requests"));
          } else {
            admin(exchange, path.substring("admin/".length()));
          }
          return;
        }
        if (!"GET".equals(method) && !"HEAD".equals(method)) {
          reply(exchange, 405, error("the status API is read-only except under " + PREFIX + "admin/"));
          return;
        }
        read(exchange, path);
      } catch (IllegalArgumentException e) {
        reply(exchange, 400, error(e.getMessage()));
      }
    }
  }

  private void read(HttpExchange exchange, String path) throws IOException {
    EngineStatus s = view.status();
    String[] parts = path.split("/");
    switch (parts[0]) {
      case "status" -> reply(exchange, 200, StatusJson.summary(s, view.info()));
      case "queues" -> reply(exchange, 200, StatusJson.queues(s));
      case "apps" -> {
        if (parts.length == 1) {
          reply(exchange, 200, StatusJson.apps(s));
          return;
        }
        AppId appId = appId(parts[1]);
        if (parts.length == 3 && parts[2].equals("why")) {
          reply(exchange, 200, StatusJson.explanation(view.explain(appId)));
        } else if (parts.length == 3 && parts[2].equals("checkpoint-advice")) {
          checkpointAdvice(exchange, s, appId);
        } else if (parts.length == 2) {
          Optional<EngineStatus.App> app = s.app(appId);
          ObjectNode o = app.map(a -> StatusJson.app(a, s.timeMillis())).orElseGet(() -> {
            ObjectNode unknown = StatusJson.MAPPER.createObjectNode();
            unknown.put("appId", appId.value());
            return unknown;
          });
          o.set("why", StatusJson.explanation(view.explain(appId)));
          o.set("history", StatusJson.history(view.history(appId)));
          reply(exchange, app.isPresent() || o.withArray("history").size() > 0 ? 200 : 404, o);
        } else {
          reply(exchange, 404, error("no such resource: " + PREFIX + path));
        }
      }
      case "gangs" -> reply(exchange, 200, StatusJson.gangs(s));
      case "nodes" -> reply(exchange, 200, StatusJson.nodes(s, id -> view.containerName(id).orElse(null)));
      default -> reply(exchange, 404, error("no such resource: " + PREFIX + path + "; see docs/admin-guide.md"));
    }
  }

  /** What {@code spindle-run} and {@code SpindleStatusClient} read: the app status's advice alone, cheap to poll. */
  private static void checkpointAdvice(HttpExchange exchange, EngineStatus s, AppId appId) throws IOException {
    Optional<EngineStatus.App> app = s.app(appId);
    if (app.isEmpty()) {
      reply(exchange, 404, error("application " + appId + " is not running or waiting under Spindle"));
    } else if (app.get().checkpointAdvice() == null) {
      reply(exchange, 404, error("application " + appId + " holds and asks for no GPU: no checkpoint advice"));
    } else {
      reply(exchange, 200, StatusJson.checkpointAdvice(app.get().checkpointAdvice()));
    }
  }

  private void admin(HttpExchange exchange, String operation) throws IOException {
    Optional<String> user = users.of(exchange);
    if (user.isEmpty()) {
      reply(exchange, 401, error(users.howToAuthenticate()));
      return;
    }
    if (!ADMIN_OPERATIONS.contains(operation)) {
      reply(exchange, 404, error("no admin operation '" + operation + "'; there are: "
          + String.join(", ", ADMIN_OPERATIONS)));
      return;
    }
    if (!view.isQueueAdmin(user.get(), QueueTree.ROOT)) {
      LOG.warn("Status API: user {} was refused {}: not an administrator of queue {}", user.get(), operation,
          QueueTree.ROOT);
      reply(exchange, 403, error("user " + user.get() + " may not " + operation + ": it needs the administer ACL"
          + " (acl_administer_queue) of queue " + QueueTree.ROOT));
      return;
    }
    try {
      String result = switch (operation) {
        case "cordon" -> view.cordon(required(exchange, "node"), required(exchange, "reason"));
        case "uncordon" -> view.cordon(required(exchange, "node"), null);
        case "cordon-gpu" -> view.cordonGpu(required(exchange, "node"), gpuIndex(exchange),
            required(exchange, "reason"));
        case "uncordon-gpu" -> view.cordonGpu(required(exchange, "node"), gpuIndex(exchange), null);
        default -> view.refreshQueues();
      };
      LOG.info("Status API: user {} ran {}: {}", user.get(), operation, result);
      reply(exchange, 200, StatusJson.MAPPER.createObjectNode().put("result", result));
    } catch (IOException e) {
      reply(exchange, 409, error(e.getMessage()));
    }
  }

  /** The {@code gpu} parameter: a GPU index on the node. */
  private static int gpuIndex(HttpExchange exchange) {
    String raw = required(exchange, "gpu");
    try {
      int index = Integer.parseInt(raw);
      if (index >= 0) {
        return index;
      }
    } catch (NumberFormatException e) {
      // Worded below.
    }
    throw new IllegalArgumentException("gpu must be a GPU index on the node (0, 1, ...), not '" + raw + "'");
  }

  /** A query parameter the operation cannot do without; a 400 naming it when it is missing or blank. */
  private static String required(HttpExchange exchange, String name) {
    String value = HttpExchanges.query(exchange).getOrDefault(name, "").strip();
    if (value.isEmpty()) {
      throw new IllegalArgumentException("admin operation needs the query parameter '" + name + "'");
    }
    return value;
  }

  private static AppId appId(String raw) {
    if (!APP_ID.matcher(raw).matches()) {
      throw new InvalidInputException("appId", raw, "not a YARN application id (application_<cluster>_<n>)");
    }
    return AppId.of(raw);
  }

  private static ObjectNode error(String message) {
    return StatusJson.MAPPER.createObjectNode().put("error", message);
  }

  private static void reply(HttpExchange exchange, int status, JsonNode body) throws IOException {
    byte[] bytes;
    try {
      bytes = StatusJson.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(body);
    } catch (JsonProcessingException e) {
      bytes = ("{\"error\":\"" + e.getOriginalMessage().replace('"', '\'') + "\"}").getBytes(StandardCharsets.UTF_8);
      status = 500;
    }
    HttpExchanges.send(exchange, status, JSON, bytes);
  }
}
