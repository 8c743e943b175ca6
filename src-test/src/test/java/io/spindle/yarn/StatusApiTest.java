package io.spindle.yarn;

import static io.spindle.yarn.MiniClusterSupport.gpus;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.spindle.client.CheckpointAdviceView;
import io.spindle.client.SpindleStatusClient;
import io.spindle.client.cli.SpindleCli;
import io.spindle.core.reliability.CheckpointInterval;
import io.spindle.core.reliability.FailureRate;
import io.spindle.web.SpindleWeb;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The status API, the Prometheus endpoint and {@code spindle why} read from one MiniYARNCluster (2 NodeManagers x 8
 * GPUs, preemption on, a real ZooKeeper) and checked against what the cluster did: a gang larger than the cluster,
 * a queue at its maximum, a gang waiting on its reservation, and containers preempted for another gang.
 */
class StatusApiTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static TestingServer zk;
  private static MiniYARNCluster cluster;
  private static YarnClient client;
  private static Configuration conf;
  private static String base;

  @BeforeAll
  static void start() throws Exception {
    zk = new TestingServer(true);
    YarnConfiguration c = new YarnConfiguration();
    MiniClusterSupport.gpuPreemption(c, zk.getConnectString(), 2);
    c.set("yarn.nodemanager.resource-type." + MiniClusterSupport.GPU, "8");
    c.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 65_536);
    c.setInt(YarnConfiguration.NM_VCORES, 32);
    c.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, 65_536);
    String p = "yarn.scheduler.capacity.root.";
    c.set(p + "queues", "a,b,capped,default");
    c.set(p + "a.capacity", "50");
    c.set(p + "b.capacity", "37.5");
    c.set(p + "capped.capacity", "12.5");
    c.set(p + "capped.maximum-capacity", "12.5");
    c.set(p + "default.capacity", "0");
    c.set(p + "retired.capacity", "10"); // a queue removed from root.queues, its keys left behind
    for (String q : List.of("a", "b", "capped")) {
      c.set(p + q + ".user-limit-factor", "-1");
    }
    c.set(p + "acl_administer_queue", "admin");
    c.setInt(SpindleWeb.PORT, 0);
    c.set(SpindleWeb.BIND_ADDRESS, "127.0.0.1");
    cluster = MiniClusterSupport.startCluster("status-api", c, 2);
    conf = cluster.getConfig();
    client = MiniClusterSupport.startClient(conf);
    MiniClusterSupport.awaitEngineGpus(cluster, 16);
    base = "http://127.0.0.1:" + scheduler().webAddress().orElseThrow().getPort() + "/";
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(client, cluster, zk);
  }

  @Test
  void aGangLargerThanTheClusterIsRejectedAndWhySaysSo() throws Exception {
    ApplicationId huge = UnmanagedAm.submit(client, "huge", "a", Set.of("spindle.gang.size=3"));
    UnmanagedAm am = UnmanagedAm.register(client, conf, huge);
    am.ask(3, gpus(8));
    am.heartbeat();
    // Killed by the RM with the reason as diagnostics; its AM cannot heartbeat or unregister any more.
    MiniClusterSupport.await(Duration.ofSeconds(30),
        () -> client.getApplicationReport(huge).getYarnApplicationState() == YarnApplicationState.KILLED);
    assertThat(client.getApplicationReport(huge).getDiagnostics()).contains("larger than the cluster");
    assertThat(why(huge)).startsWith(huge + " was rejected at ").contains("larger than the cluster")
        .contains("can never be scheduled as asked");
    assertThat(get("apps/" + huge + "/why").path("state").asText()).isEqualTo("REJECTED");
  }

  @Test
  void aQueueAtItsMaximumIsTheReason() throws Exception {
    ApplicationId greedy = UnmanagedAm.submit(client, "greedy", "capped", Set.of());
    try (UnmanagedAm am = UnmanagedAm.register(client, conf, greedy)) {
      am.ask(4, gpus(1));
      assertThat(am.awaitHeld(2, Duration.ofSeconds(30))).isEqualTo(2);
      MiniClusterSupport.await(Duration.ofSeconds(10), () -> why(greedy).contains("maximum-capacity"));
      assertThat(why(greedy)).contains("queue root.capped is at its maximum-capacity").contains("runs 2 containers");
      JsonNode capped = queue(get("queues"), "root.capped");
      assertThat(capped.path("maximum").path("gpus").asDouble()).isEqualTo(2.0);
      assertThat(capped.path("usage").path("gpus").asDouble()).isEqualTo(2.0);
      assertThat(capped.path("pending").path("gpus").asDouble()).isEqualTo(2.0);
    }
  }

  @Test
  void aGangWaitingOnItsReservationShowsItsNodesInTheApiTheMetricsAndWhy() throws Exception {
    ApplicationId small = UnmanagedAm.submit(client, "small", "b", Set.of());
    ApplicationId gang = UnmanagedAm.submit(client, "gang", "a", Set.of("spindle.gang.size=2"));
    try (UnmanagedAm smallAm = UnmanagedAm.register(client, conf, small);
        UnmanagedAm gangAm = UnmanagedAm.register(client, conf, gang)) {
      smallAm.ask(1, gpus(4));
      assertThat(smallAm.awaitHeld(1, Duration.ofSeconds(30))).isEqualTo(1);
      // 16 GPUs for two members of 8: both nodes, one of which runs queue b's container, which is within b's
      // share, so nothing is preempted and the gang holds both nodes while it waits.
      gangAm.ask(2, gpus(8));
      MiniClusterSupport.await(Duration.ofSeconds(20), () -> {
        gangAm.heartbeat();
        return get("gangs").size() == 1 && get("gangs").get(0).has("reservation");
      });
      JsonNode waiting = get("gangs").get(0);
      assertThat(waiting.path("appId").asText()).isEqualTo(gang.toString());
      assertThat(waiting.path("state").asText()).isEqualTo("reserved");
      assertThat(waiting.path("containers").asInt()).isEqualTo(2);
      assertThat(waiting.path("reason").asText()).contains("waits for its reservation");
      List<String> held = new ArrayList<>();
      waiting.path("reservation").path("nodes").forEach(n -> held.add(n.asText()));
      assertThat(held).hasSize(2);
      JsonNode nodes = get("nodes");
      assertThat(nodes).hasSize(2).allSatisfy(n -> {
        assertThat(n.path("reservedFor").asText()).startsWith(gang + "/");
        assertThat(n.path("gpus")).hasSize(8);
      });
      long holding = 0;
      for (JsonNode n : nodes) {
        for (JsonNode g : n.path("gpus")) {
          if (g.path("holder").path("appId").asText().equals(small.toString())) {
            holding++;
            assertThat(g.path("holder").path("queue").asText()).isEqualTo("root.b");
            assertThat(g.path("holder").path("container").asText()).startsWith("container_");
          }
        }
      }
      assertThat(holding).as("GPUs the map colours for queue b").isEqualTo(4);
      JsonNode status = get("status");
      assertThat(status.path("cluster").path("pendingGangs").asInt()).isEqualTo(1);
      assertThat(status.path("scheduler").path("ignoredKeys").get(0).asText())
          .contains("yarn.scheduler.capacity.root.retired.capacity")
          .contains("queue 'root.retired' is not declared");
      assertThat(status.path("cluster").path("reservations").asInt()).isEqualTo(1);
      assertThat(queue(status.path("queues"), "root.b").path("usage").path("gpus").asDouble()).isEqualTo(4.0);
      Map<String, Double> metrics = MiniClusterSupport.scrapePrometheus(cluster);
      assertThat(metrics).containsEntry("spindle_pending_gangs", 1.0).containsEntry("spindle_reservations", 1.0)
          .containsEntry("spindle_queue_usage_gpus{queue=\"root.b\",}", 4.0);

      assertThat(why(gang)).contains("Its gang '").contains("waits for its reservation")
          .contains("are reserved for it since").contains(held.get(0)).contains(held.get(1));
      assertThat(get("apps/" + gang + "/why").path("state").asText()).isEqualTo("PENDING");

      smallAm.release(1);
      assertThat(gangAm.awaitHeld(2, Duration.ofSeconds(30))).isEqualTo(2);
      MiniClusterSupport.await(Duration.ofSeconds(10), () -> get("gangs").isEmpty());
      assertThat(get("apps/" + gang + "/why").path("state").asText()).isEqualTo("RUNNING");
    }
  }

  @Test
  void containersPreemptedForAGangNameItInWhy() throws Exception {
    ApplicationId borrower = UnmanagedAm.submit(client, "borrower", "b", Set.of());
    ApplicationId owner = UnmanagedAm.submit(client, "owner", "a", Set.of("spindle.gang.size=2"));
    try (UnmanagedAm borrowerAm = UnmanagedAm.register(client, conf, borrower);
        UnmanagedAm ownerAm = UnmanagedAm.register(client, conf, owner)) {
      borrowerAm.ask(16, gpus(1));
      assertThat(borrowerAm.awaitHeld(16, Duration.ofSeconds(30))).isEqualTo(16);
      ownerAm.ask(2, gpus(4));
      // Starvation after 1 s, then a 2 s checkpoint grace the borrower lets pass in silence.
      List<ContainerStatus> preempted = new ArrayList<>();
      MiniClusterSupport.await(Duration.ofSeconds(40), () -> {
        ownerAm.heartbeat();
        borrowerAm.heartbeat();
        preempted.clear();
        preempted.addAll(borrowerAm.completed());
        return preempted.size() >= 8;
      });
      assertThat(preempted).extracting(ContainerStatus::getExitStatus).containsOnly(ContainerExitStatus.PREEMPTED);
      assertThat(ownerAm.awaitHeld(2, Duration.ofSeconds(30))).isEqualTo(2);

      String text = why(borrower);
      assertThat(text).contains("Spindle preempted 1 of its containers").contains("to make room for request '")
          .contains("' of " + owner);
      JsonNode app = get("apps/" + borrower);
      assertThat(app.path("why").path("state").asText()).isEqualTo("PREEMPTED");
      assertThat(app.path("history").findValuesAsText("type")).contains("checkpoint-notice", "preempted");
      assertThat(app.path("history").findValuesAsText("forAppId")).contains(owner.toString());
      // Tests share the cluster: other tests may have preempted too, but never from queue a.
      Map<String, Double> metrics = MiniClusterSupport.scrapePrometheus(cluster);
      assertThat(metrics.get("spindle_queue_preempted_containers_total{queue=\"root.b\",}"))
          .isGreaterThanOrEqualTo(8.0);
      assertThat(metrics).containsEntry("spindle_queue_preempted_containers_total{queue=\"root.a\",}", 0.0);
    }
  }

  @Test
  void adminOperationsNeedTheRootAdministerAcl() throws Exception {
    assertThat(post("admin/refresh-queues", null)).isEqualTo(401);
    assertThat(post("admin/refresh-queues", "mallory")).isEqualTo(403);
    assertThat(post("admin/refresh-queues", "admin")).isEqualTo(200);
    assertThat(post("admin/unknown", "admin")).isEqualTo(404);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int exit = new SpindleCli(new PrintStream(out, true, StandardCharsets.UTF_8))
        .run(new String[] {"--url", base, "refresh-queues", "--user", "mallory"}, Map.of());
    assertThat(exit).isEqualTo(1);
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("user mallory may not refresh-queues")
        .contains("acl_administer_queue");
  }

  @Test
  void aCordonedNodeTakesNoNewContainersUntilUncordoned() throws Exception {
    List<String> ids = new ArrayList<>();
    get("nodes").forEach(n -> ids.add(n.path("id").asText()));
    String fenced = ids.get(0);
    assertThat(post("admin/cordon?node=" + fenced + "&reason=fan", "mallory")).isEqualTo(403);
    assertThat(post("admin/cordon?node=nosuch:1&reason=fan", "admin")).isEqualTo(400);
    assertThat(post("admin/cordon?node=" + fenced, "admin")).as("a reason is required").isEqualTo(400);
    assertThat(cli("cordon", fenced, "replacing", "a", "fan", "--user", "admin")).contains("takes no new work");
    MiniClusterSupport.await(Duration.ofSeconds(10), () -> node(fenced).path("cordoned").asText("")
        .equals("replacing a fan"));
    ApplicationId app = UnmanagedAm.submit(client, "around", "a", Set.of());
    try (UnmanagedAm am = UnmanagedAm.register(client, conf, app)) {
      am.ask(3, gpus(2));
      assertThat(am.awaitHeld(3, Duration.ofSeconds(30))).isEqualTo(3);
      assertThat(am.held()).allSatisfy(c -> assertThat(c.getNodeId().toString()).isNotEqualTo(fenced));
    } finally {
      assertThat(cli("uncordon", fenced, "--user", "admin")).contains("takes new work again");
    }
    MiniClusterSupport.await(Duration.ofSeconds(10), () -> node(fenced).path("cordoned").isNull());
  }

  /** Issue #25 item 4: the app's status, its own path, spindle-client and `spindle advice` give the same advice. */
  @Test
  void anApplicationIsToldHowOftenToCheckpointForTheGpusItHolds() throws Exception {
    ApplicationId app = UnmanagedAm.submit(client, "advised", "b", Set.of());
    try (UnmanagedAm am = UnmanagedAm.register(client, conf, app)) {
      am.ask(1, gpus(2));
      assertThat(am.awaitHeld(1, Duration.ofSeconds(30))).isEqualTo(1);
      MiniClusterSupport.await(Duration.ofSeconds(10),
          () -> get("apps/" + app).path("checkpointAdvice").path("gpus").asInt() == 2);

      JsonNode advice = get("apps/" + app + "/checkpoint-advice");
      double mtbf = FailureRate.mtbfMillis(advice.path("failuresPerGpuHour").asDouble(), 2);
      assertThat(advice.path("intervalSeconds").asLong()).as("Daly's interval, 60 s writes, 2 GPUs")
          .isCloseTo(Math.round(CheckpointInterval.dalyMillis(60_000, mtbf) / 1000.0), within(1L));
      assertThat(advice.path("mtbfHours").asDouble()).isCloseTo(mtbf / 3_600_000, within(1.0));
      assertThat(advice.path("writeSeconds").asLong()).isEqualTo(60);
      assertThat(advice.path("writeReported").asBoolean()).isFalse();

      CheckpointAdviceView fromClient = new SpindleStatusClient(URI.create(base)).checkpointAdvice(app.toString());
      assertThat(fromClient.intervalSeconds()).isCloseTo(advice.path("intervalSeconds").asLong(), within(1L));
      assertThat(fromClient.gpus()).isEqualTo(2);
      assertThat(cli("advice", app.toString())).startsWith("Checkpoint every ")
          .contains("Daly's optimum for the 2 GPU(s) it holds", "the default: the application reported none");
    }
    assertThatThrownBy(() -> new SpindleStatusClient(URI.create(base)).checkpointAdvice("application_1_9999"))
        .hasMessageContaining("HTTP 404").hasMessageContaining("not running or waiting under Spindle");
  }

  @Test
  void badRequestsGetReadableErrors() throws Exception {
    HttpURLConnection c = (HttpURLConnection) new URL(base + "api/v1/apps/not-an-app/why").openConnection();
    assertThat(c.getResponseCode()).isEqualTo(400);
    try (InputStream in = c.getErrorStream()) {
      assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).contains("not a YARN application id");
    }
    HttpURLConnection unknown = (HttpURLConnection) new URL(base + "api/v1/apps/application_1_9999").openConnection();
    assertThat(unknown.getResponseCode()).isEqualTo(404);
    HttpURLConnection page = (HttpURLConnection) new URL(base).openConnection();
    assertThat(page.getResponseCode()).isEqualTo(200);
    assertThat(page.getContentType()).startsWith("text/html");
  }

  // ---------------------------------------------------------------- helpers

  private static SpindleScheduler scheduler() {
    return (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
  }

  /** {@code spindle why <app>}, as the script runs it. */
  private static String why(ApplicationId app) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int exit = new SpindleCli(new PrintStream(out, true, StandardCharsets.UTF_8))
        .run(new String[] {"--url", base, "why", app.toString()}, Map.of());
    String text = out.toString(StandardCharsets.UTF_8).strip();
    assertThat(exit).as(text).isZero();
    return text;
  }

  /** {@code spindle <args>} as the script runs it; what it printed. */
  private static String cli(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    String[] all = new String[args.length + 2];
    all[0] = "--url";
    all[1] = base;
    System.arraycopy(args, 0, all, 2, args.length);
    int exit = new SpindleCli(new PrintStream(out, true, StandardCharsets.UTF_8)).run(all, Map.of());
    String text = out.toString(StandardCharsets.UTF_8).strip();
    assertThat(exit).as(text).isZero();
    return text;
  }

  private static JsonNode node(String id) throws IOException {
    for (JsonNode n : get("nodes")) {
      if (n.path("id").asText().equals(id)) {
        return n;
      }
    }
    throw new AssertionError("no node " + id);
  }

  private static JsonNode get(String path) throws IOException {
    try (InputStream in = new URL(base + "api/v1/" + path).openStream()) {
      return JSON.readTree(in);
    }
  }

  private static int post(String path, String user) throws IOException {
    HttpURLConnection c = (HttpURLConnection) new URL(base + "api/v1/" + path
        + (user == null ? "" : (path.contains("?") ? "&" : "?") + "user.name=" + user)).openConnection();
    c.setRequestMethod("POST");
    return c.getResponseCode();
  }

  private static JsonNode queue(JsonNode queues, String path) {
    for (JsonNode q : queues) {
      if (q.path("path").asText().equals(path)) {
        return q;
      }
    }
    throw new AssertionError("no queue " + path + " in " + queues);
  }
}
