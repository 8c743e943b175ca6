package io.spindle.client.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code scripts/spindle}: Spindle's status API from a shell. Every answer comes from the ResourceManager; the CLI
 * only formats it, so what it prints is what the GPU map and the API show.
 */
public final class SpindleCli {

  static final String USAGE = """
      Usage: spindle [--url <http://rm-host:port>] [--json] <command>
        status                 the scheduler, the cluster and every queue
        queues                 queues: guaranteed, maximum, fair share, used and pending GPUs
        gangs                  gangs waiting to start: why, the nodes held for them, estimated start
        why <applicationId>    why an application is pending, was rejected or was preempted
        advice <applicationId> how often the application should checkpoint, and why (Daly's interval for
                               its GPUs at the failure rate this cluster has seen)
        refresh-queues [--user <name>]
                               re-read capacity-scheduler.xml (needs the root queue's administer ACL); --user
                               is for simple authentication, with Kerberos you are the user of your ticket
        cordon <host:port> <reason...> [--user <name>]
                               no new containers or reservations on the node; what runs there runs on
                               (needs the root queue's administer ACL)
        uncordon <host:port> [--user <name>]
                               the node takes new work again
        cordon-gpu <host:port> <gpu-index> <reason...> [--user <name>]
                               one GPU out of service: what runs on it is stopped, nothing new goes there
        uncordon-gpu <host:port> <gpu-index> [--user <name>]
                               the GPU is back in service (unless its node reports it failed or it is
                               quarantined)
      The status API is found from --url, else SPINDLE_URL, else yarn.scheduler.spindle.http.port in
      $HADOOP_CONF_DIR/yarn-site.xml. With Kerberos (hadoop.security.authentication in
      $HADOOP_CONF_DIR/core-site.xml, or the server asking for it) run kinit first.
      Exit status: 0 done, 1 the API refused or could not be reached, 2 bad usage.
      """;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final PrintStream out;
  private ApiTransport transport;
  private boolean negotiating;
  private Optional<Path> coreSite = Optional.empty();

  public SpindleCli(PrintStream out) {
    this.out = out;
  }

  public static void main(String[] args) {
    System.exit(new SpindleCli(System.out).run(args, System.getenv()));
  }

  /** Runs one command; returns the exit status. */
  public int run(String[] args, Map<String, String> env) {
    String url = null;
    String user = null;
    boolean json = false;
    List<String> words = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--url" -> url = ++i < args.length ? args[i] : null;
        case "--user" -> user = ++i < args.length ? args[i] : null;
        case "--json" -> json = true;
        case "-h", "--help", "help" -> {
          out.print(USAGE);
          return 0;
        }
        default -> words.add(args[i]);
      }
    }
    if (!wellFormed(words)) {
      out.print(USAGE);
      return 2;
    }
    try {
      URI base = StatusEndpoint.resolve(url, env);
      // Kerberos when the client's Hadoop configuration says so; otherwise as soon as the server asks for it.
      negotiating = StatusEndpoint.kerberos(env);
      coreSite = StatusEndpoint.coreSite(env);
      transport = negotiating ? new SpnegoTransport(coreSite) : new PlainTransport();
      String command = words.get(0);
      JsonNode answer = switch (command) {
        case "status" -> get(base, "status");
        case "queues" -> get(base, "queues");
        case "gangs" -> get(base, "gangs");
        case "why" -> get(base, "apps/" + URLEncoder.encode(words.get(1), StandardCharsets.UTF_8) + "/why");
        case "advice" -> get(base, "apps/" + URLEncoder.encode(words.get(1), StandardCharsets.UTF_8)
            + "/checkpoint-advice");
        case "refresh-queues" -> post(base, "admin/refresh-queues", asUser(user, env), "");
        case "cordon" -> post(base, "admin/cordon", asUser(user, env), "&node=" + encode(words.get(1)) + "&reason="
            + encode(String.join(" ", words.subList(2, words.size()))));
        case "uncordon" -> post(base, "admin/uncordon", asUser(user, env), "&node=" + encode(words.get(1)));
        case "cordon-gpu" -> post(base, "admin/cordon-gpu", asUser(user, env), "&node=" + encode(words.get(1))
            + "&gpu=" + encode(words.get(2)) + "&reason=" + encode(String.join(" ", words.subList(3, words.size()))));
        case "uncordon-gpu" -> post(base, "admin/uncordon-gpu", asUser(user, env), "&node=" + encode(words.get(1))
            + "&gpu=" + encode(words.get(2)));
        default -> null;
      };
      if (answer == null) {
        out.print(USAGE);
        return 2;
      }
      if (json) {
        out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(answer));
        return 0;
      }
      switch (command) {
        case "status" -> printStatus(answer);
        case "queues" -> printQueues(answer);
        case "gangs" -> printGangs(answer);
        case "why" -> out.println(answer.path("explanation").asText());
        case "advice" -> printAdvice(answer);
        default -> out.println(answer.path("result").asText());
      }
      return 0;
    } catch (ApiException e) {
      out.println("spindle: " + e.getMessage());
      return 1;
    } catch (IOException e) {
      out.println("spindle: " + e.getMessage());
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 1;
    }
  }

  private JsonNode get(URI base, String path) throws IOException, InterruptedException {
    return send("GET", base.resolve("api/v1/" + path), base);
  }

  /** Whether the words are a command with the operands it takes. */
  private static boolean wellFormed(List<String> words) {
    if (words.isEmpty()) {
      return false;
    }
    return switch (words.get(0)) {
      case "why", "advice", "uncordon" -> words.size() == 2;
      case "cordon" -> words.size() >= 3;
      case "uncordon-gpu" -> words.size() == 3;
      case "cordon-gpu" -> words.size() >= 4;
      default -> words.size() == 1;
    };
  }

  private void printAdvice(JsonNode a) {
    long seconds = a.path("intervalSeconds").asLong();
    out.println("Checkpoint every " + duration(seconds) + " (" + seconds + " s, SPINDLE_CHECKPOINT_INTERVAL_SECONDS"
        + " under spindle-run).");
    out.println(a.path("basis").asText() + ".");
  }

  private static String duration(long seconds) {
    if (seconds < 120) {
      return seconds + " s";
    }
    long minutes = Math.round(seconds / 60.0);
    return minutes < 120 ? minutes + " min" : String.format(Locale.ROOT, "%d h %02d min", minutes / 60, minutes % 60);
  }

  private static String asUser(String user, Map<String, String> env) {
    return user != null ? user : env.getOrDefault("HADOOP_USER_NAME", System.getProperty("user.name"));
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private JsonNode post(URI base, String path, String user, String query) throws IOException, InterruptedException {
    // user.name is Hadoop's simple authentication; under Kerberos the server ignores it and takes the ticket's user.
    URI uri = base.resolve("api/v1/" + path + "?user.name=" + encode(user) + query);
    return send("POST", uri, base);
  }

  private JsonNode send(String method, URI uri, URI base) throws IOException, InterruptedException {
    ApiTransport.Reply r = reply(method, uri, base);
    if (r.asksForNegotiate() && !negotiating) {
      negotiating = true;
      transport = new SpnegoTransport(coreSite);
      r = reply(method, uri, base);
    }
    JsonNode body;
    try {
      body = JSON.readTree(r.body());
    } catch (IOException e) {
      throw new ApiException(base + " answered HTTP " + r.status() + " with something that is not Spindle's"
          + " status API");
    }
    if (r.status() >= 400 && body.has("error")) {
      throw new ApiException(body.get("error").asText() + " (HTTP " + r.status() + ")");
    }
    return body;
  }

  private ApiTransport.Reply reply(String method, URI uri, URI base) throws IOException, InterruptedException {
    try {
      return transport.send(method, uri);
    } catch (ApiTransport.AuthenticationFailed e) {
      throw e;
    } catch (IOException e) {
      throw new IOException("cannot reach Spindle's status API at " + base + " (" + e + ")", e);
    }
  }

  private void printStatus(JsonNode s) {
    JsonNode sch = s.path("scheduler");
    JsonNode c = s.path("cluster");
    out.printf("Scheduler %s: %s, cycle %d at %s%n", sch.path("rmId").asText(),
        sch.path("leader").asBoolean() ? "leader" + (sch.path("epoch").asLong() >= 0 ? " (epoch "
            + sch.path("epoch").asLong() + ")" : "") : "standby (not scheduling)",
        sch.path("cycle").asLong(), Instant.ofEpochMilli(sch.path("timeMillis").asLong()));
    out.printf("Cluster: %d nodes, %d GPUs (%d in MIG mode), %d whole GPUs held; %d containers running, %d"
        + " applications%n", c.path("nodes").asInt(), c.path("gpus").asInt(), c.path("migGpus").asInt(),
        c.path("wholeGpusHeld").asInt(), c.path("runningContainers").asInt(), c.path("applications").asInt());
    out.printf("Pending: %d containers, %d gangs, %d reservations%n%n", c.path("pendingContainers").asLong(),
        c.path("pendingGangs").asInt(), c.path("reservations").asInt());
    printQueues(s.path("queues"));
  }

  private void printQueues(JsonNode queues) {
    TextTable t = new TextTable("QUEUE", "GUARANTEED", "MAXIMUM", "FAIR SHARE", "USED", "PENDING", "APPS RUN/WAIT");
    for (JsonNode q : queues) {
      t.row(q.path("path").asText(), gpus(q.path("guarantee")), gpus(q.path("maximum")), gpus(q.path("fairShare")),
          gpus(q.path("usage")), gpus(q.path("pending")),
          q.has("runningApps") ? q.path("runningApps").asInt() + "/" + q.path("pendingApps").asInt() : "");
    }
    out.println("GPUs per queue:");
    t.print(out);
  }

  private void printGangs(JsonNode gangs) {
    if (gangs.isEmpty()) {
      out.println("No gang is waiting.");
      return;
    }
    TextTable t = new TextTable("APPLICATION", "QUEUE", "REQUEST", "MEMBERS", "STATE", "RESERVED NODES",
        "EXPECTED START");
    for (JsonNode g : gangs) {
      JsonNode r = g.path("reservation");
      t.row(g.path("appId").asText(), g.path("queue").asText(), g.path("requestKey").asText(),
          g.path("containers").asInt() + " x " + shape(g.path("shape")), g.path("state").asText(),
          r.isMissingNode() ? "" : String.join(",", strings(r.path("nodes"))), expectedStart(g));
    }
    t.print(out);
    out.println();
    for (JsonNode g : gangs) {
      out.println(g.path("appId").asText() + "/" + g.path("requestKey").asText() + ": " + g.path("reason").asText());
    }
  }

  /**
   * When the gang is expected to start and how sure that is ({@code expectedStartMillis}, {@code startConfidence});
   * a server without them gives the reservation's estimate, as before.
   */
  static String expectedStart(JsonNode g) {
    JsonNode start = g.path("expectedStartMillis");
    if (start.isMissingNode()) {
      start = g.path("reservation").path("estimatedStartMillis");
      return start.isMissingNode() ? "" : start.isNull() ? "unknown" : Instant.ofEpochMilli(start.asLong()).toString();
    }
    String confidence = g.path("startConfidence").asText("unknown");
    return start.isNull() ? "unknown" : Instant.ofEpochMilli(start.asLong()) + " (" + confidence + ")";
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  private static String gpus(JsonNode vector) {
    double g = vector.path("gpus").asDouble();
    return g == Math.rint(g) ? Long.toString((long) g) : String.format(Locale.ROOT, "%.2f", g);
  }

  private static String shape(JsonNode s) {
    StringBuilder b = new StringBuilder();
    if (s.path("gpus").asInt() > 0) {
      b.append(s.path("gpus").asInt()).append(" GPU");
      if (!s.path("gpuModel").isNull()) {
        b.append(' ').append(s.path("gpuModel").asText());
      }
    }
    if (s.path("migInstances").asInt() > 0) {
      b.append(s.path("migInstances").asInt()).append(" MIG ").append(s.path("migProfile").asText());
    }
    return b.length() == 0 ? s.path("memoryMb").asLong() + " MB" : b.toString();
  }

  /** The API answered with an error of its own (bad id, refused operation). */
  private static final class ApiException extends IOException {
    private static final long serialVersionUID = 1L;

    ApiException(String message) {
      super(message);
    }
  }
}
