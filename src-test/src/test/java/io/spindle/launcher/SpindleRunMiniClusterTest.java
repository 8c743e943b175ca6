package io.spindle.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.spindle.launcher.yarn.SpindleRun;
import io.spindle.yarn.MiniClusterSupport;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code spindle-run} end to end on a MiniYARNCluster of two NodeManagers with four GPUs each, with plain shell
 * commands (no framework): the rank/environment contract against the GPUs Spindle really chose, a restart of the whole
 * gang after a worker fails, a hung worker, and the submission checks that leave nothing running (elastic sizes
 * included).
 */
class SpindleRunMiniClusterTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static LauncherCluster cluster;
  private static YarnClient yarn;

  @TempDir
  Path dir;

  @BeforeAll
  static void start() throws Exception {
    cluster = LauncherCluster.start("spindle-run", new YarnConfiguration(), 8_192);
    yarn = cluster.yarn;
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** A test that failed with its job still running must not hold the queue's AM share from the next one. */
  @AfterEach
  void killLeftovers() throws Exception {
    for (var app : yarn.getApplications(java.util.EnumSet.of(YarnApplicationState.ACCEPTED,
        YarnApplicationState.RUNNING, YarnApplicationState.SUBMITTED, YarnApplicationState.NEW,
        YarnApplicationState.NEW_SAVING))) {
      yarn.killApplication(app.getApplicationId());
    }
  }

  private static SpindleRunJob launch(String... args) {
    return cluster.launch(args);
  }

  private static SpindleRunJob.Outcome run(String... args) throws Exception {
    return launch(args).get(3);
  }

  private static Map<String, String> readEnv(Path file) throws Exception {
    Map<String, String> env = new HashMap<>();
    for (String line : Files.readAllLines(file)) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        env.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    return env;
  }

  @Test
  void workersGetRanksByNodeAndTheGpusSpindleChoseThenTheJobSucceeds() throws Exception {
    // The data each worker is brought: a file and an archive, from this machine's file system.
    Path data = Files.createDirectories(dir.resolve("data"));
    Files.writeString(data.resolve("shard.txt"), "shard 0\n");
    Files.writeString(dir.resolve("vocab.txt"), "hello\n");
    Process tar = new ProcessBuilder("tar", "czf", dir.resolve("data.tgz").toString(), "-C", data.toString(),
        "shard.txt").start();
    assertThat(tar.waitFor()).isZero();
    String script = "env | grep -E '^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|NODE_RANK|NNODES|MASTER_ADDR"
        + "|MASTER_PORT|PET_NNODES|PET_NODE_RANK|CUDA_VISIBLE_DEVICES|SPINDLE_RUN_ATTEMPT|SPINDLE_RUN_APP_ID"
        + "|SPINDLE_CHECKPOINT_INTERVAL_SECONDS|CONTAINER_ID)=' > " + dir
        + "/rank-$RANK.tmp && cat vocab.txt data.tgz/shard.txt >> " + dir + "/data-$RANK.txt"
        + " && mv " + dir + "/rank-$RANK.tmp " + dir + "/rank-$RANK.env"
        + "; while [ ! -f " + dir + "/go ]; do sleep 0.2; done";
    SpindleRunJob job = launch("--queue", "a", "--workers", "3", "--gpus-per-worker", "2", "--memory-mb", "512",
        "--name", "env-contract", "--files", dir.resolve("vocab.txt").toString(), "--archives",
        dir.resolve("data.tgz").toString(), "--", "bash", "-c", script);
    try {
      MiniClusterSupport.await(Duration.ofSeconds(90), () -> Files.exists(dir.resolve("rank-0.env"))
          && Files.exists(dir.resolve("rank-1.env")) && Files.exists(dir.resolve("rank-2.env")));
    } catch (AssertionError e) {
      throw new AssertionError("the workers did not start; spindle-run printed:\n" + job.output(), e);
    }

    // While the workers run: which GPUs of which node Spindle gave each container, from its status API.
    Map<String, List<Integer>> gpusOf = new HashMap<>();
    Map<String, String> nodeOf = new HashMap<>();
    try (InputStream in = new URL(cluster.statusApi() + "nodes").openStream()) {
      for (JsonNode n : JSON.readTree(in)) {
        for (JsonNode g : n.path("gpus")) {
          String holder = g.path("holder").path("container").asText(null);
          if (holder != null) {
            gpusOf.computeIfAbsent(holder, k -> new ArrayList<>()).add(g.path("index").asInt());
            nodeOf.put(holder, n.path("id").asText());
          }
        }
      }
    }
    // And how often Spindle advises the job to checkpoint, for the 6 GPUs it holds.
    JsonNode advice;
    try (InputStream in = new URL(cluster.statusApi() + "apps/" + readEnv(dir.resolve("rank-0.env"))
        .get("SPINDLE_RUN_APP_ID") + "/checkpoint-advice").openStream()) {
      advice = JSON.readTree(in);
    }
    assertThat(advice.path("gpus").asInt()).isEqualTo(6);
    Files.createFile(dir.resolve("go"));
    SpindleRunJob.Outcome done = job.get(2);
    assertThat(done.exit()).as(done.output()).isZero();

    List<Map<String, String>> ranks = new ArrayList<>();
    for (int r = 0; r < 3; r++) {
      ranks.add(readEnv(dir.resolve("rank-" + r + ".env")));
    }
    for (int r = 0; r < 3; r++) {
      Map<String, String> env = ranks.get(r);
      assertThat(env).containsEntry("RANK", Integer.toString(r)).containsEntry("NODE_RANK", Integer.toString(r))
          .containsEntry("WORLD_SIZE", "3").containsEntry("NNODES", "3").containsEntry("SPINDLE_RUN_ATTEMPT", "0")
          .containsEntry("MASTER_ADDR", ranks.get(0).get("MASTER_ADDR"))
          .containsEntry("MASTER_PORT", ranks.get(0).get("MASTER_PORT"));
      String container = env.get("CONTAINER_ID");
      assertThat(gpusOf).as("Spindle placed container %s", container).containsKey(container);
      assertThat(env.get("CUDA_VISIBLE_DEVICES")).as("the GPUs Spindle chose for rank %d", r)
          .isEqualTo(String.join(",", gpusOf.get(container).stream().sorted().map(String::valueOf).toList()));
    }
    // Ranks on one node are consecutive and counted locally: 3 workers of 2 GPUs on nodes of 4 make a node of two
    // and a node of one, in rank order.
    List<String> nodes = ranks.stream().map(e -> nodeOf.get(e.get("CONTAINER_ID"))).toList();
    assertThat(nodes.get(0)).isNotEqualTo(nodes.get(2));
    assertThat(nodes.get(1)).isIn(nodes.get(0), nodes.get(2));
    for (int r = 0; r < 3; r++) {
      int rank = r;
      long sameNodeBefore = java.util.stream.IntStream.range(0, r).filter(o -> nodes.get(o).equals(nodes.get(rank)))
          .count();
      assertThat(ranks.get(r)).containsEntry("LOCAL_RANK", Long.toString(sameNodeBefore));
    }
    assertThat(done.output()).contains("rank 0:", "rank 2:", "all 3 worker(s) exited 0");
    for (int r = 0; r < 3; r++) {
      assertThat(dir.resolve("data-" + r + ".txt")).as("--files and --archives in rank %d's directory", r)
          .hasContent("hello\nshard 0");
      assertThat(ranks.get(r)).containsEntry("PET_NODE_RANK", Integer.toString(r)).containsEntry("PET_NNODES", "3");
      assertThat(Long.parseLong(ranks.get(r).get("SPINDLE_CHECKPOINT_INTERVAL_SECONDS")))
          .as("the interval Spindle advises, in rank %d's environment", r)
          .isCloseTo(advice.path("intervalSeconds").asLong(), org.assertj.core.api.Assertions.within(1L));
    }
    assertThat(done.output()).contains("Spindle advises a checkpoint every");
  }

  @Test
  void aWorkerThatFailsRestartsTheWholeGangAndTheRestartIsReported() throws Exception {
    // Run 0: rank 1 exits 3. Run 1: both workers wait for the test to look at Spindle's why, then end well.
    String script = "if [ \"$SPINDLE_RUN_ATTEMPT\" = 0 ] && [ \"$RANK\" = 1 ]; then exit 3; fi; touch " + dir
        + "/ok-$RANK-$SPINDLE_RUN_ATTEMPT; while [ \"$SPINDLE_RUN_ATTEMPT\" != 0 ] && [ ! -f " + dir
        + "/go ]; do sleep 0.2; done";
    SpindleRunJob job = launch("--queue", "a", "--workers", "2", "--gpus-per-worker", "1", "--memory-mb", "512",
        "--max-restarts", "2", "--restart-backoff", "1s", "--", "bash", "-c", script);
    MiniClusterSupport.await(Duration.ofSeconds(90), () -> Files.exists(dir.resolve("ok-0-1"))
        && Files.exists(dir.resolve("ok-1-1")));
    java.util.regex.Matcher app = java.util.regex.Pattern.compile("submitted (application_\\d+_\\d+)")
        .matcher(job.output());
    assertThat(app.find()).as(job.output()).isTrue();
    JsonNode why;
    try (InputStream in = new URL(cluster.statusApi() + "apps/" + app.group(1) + "/why").openStream()) {
      why = JSON.readTree(in);
    }
    assertThat(why.path("explanation").asText()).as("Spindle's why tells the restart and what it followed")
        .contains("Its ApplicationMaster asked for its whole gang of 2 again (restart 1, after container",
            "exited with status 3");
    Files.createFile(dir.resolve("go"));

    SpindleRunJob.Outcome o = job.get(2);
    assertThat(o.exit()).as(o.output()).isZero();
    assertThat(o.output()).contains("run 0 failed: rank 1 on", "exited with status 3", "restart 1 of 2",
        "run 1: all 2 worker(s) allocated");
    assertThat(dir.resolve("ok-1-0")).doesNotExist();
  }

  @Test
  void aWorkerSilentPastTheHangTimeoutCountsAsFailedAndAJobOutOfRestartsFails() throws Exception {
    // Rank 0 of every run reports once, then hangs; the job gets one restart, then fails with the reason.
    String script = "curl -sf \"$SPINDLE_PROGRESS_URL&step=7\" >/dev/null; if [ \"$RANK\" = 0 ]; then sleep 600; fi";
    SpindleRunJob.Outcome o = run("--queue", "a", "--workers", "2", "--memory-mb", "512", "--hang-timeout", "3s",
        "--max-restarts", "1", "--restart-backoff", "1s", "--", "bash", "-c", script);
    assertThat(o.exit()).as(o.output()).isEqualTo(SpindleRun.FAILED);
    assertThat(o.output()).contains("run 0 failed: rank 0 on", "hung: no progress report for",
        "run 1 failed: rank 0 on", "no restart left of --max-restarts 1", "FINISHED/FAILED");
  }

  @Test
  void badInputIsRefusedAtSubmissionWithTheReasonAndNothingIsSubmitted() throws Exception {
    int before = yarn.getApplications().size();
    // A file where a directory should be: unwritable even to root, as these tests may run.
    Path readOnly = Files.createFile(dir.resolve("a-file"));
    String[][] cases = {
        {"--queue", "nope", "--workers", "1", "--", "true"},
        {"--queue", "a", "--workers", "0", "--", "true"},
        {"--queue", "a", "--workers", "1", "--gpus-per-worker", "9", "--", "true"},
        {"--queue", "a", "--workers", "1", "--", "no-such-command-here"},
        {"--queue", "a", "--workers", "1", "--checkpoint-dir", "file://" + readOnly + "/ckpt", "--", "true"},
        {"--queue", "a", "--workers", "2", "--min-workers", "3", "--checkpoint-dir", dir.toString(), "--", "true"},
        {"--queue", "a", "--workers", "2", "--min-workers", "0", "--", "true"},
        {"--queue", "a", "--workers", "4", "--min-workers", "1", "--worker-step", "2", "--checkpoint-dir",
            dir.toString(), "--", "true"},
        {"--queue", "a", "--workers", "4", "--min-workers", "2", "--", "true"},
    };
    String[] expected = {
        "unknown queue 'nope' (--queue)",
        "--workers must be between 1 and 100000, not 0",
        "a worker asks 9 yarn.io/gpu but no node of this cluster has more than 4",
        "command 'no-such-command-here' not found",
        "--checkpoint-dir file://" + readOnly + "/ckpt is not writable",
        "--min-workers 3 is more than --workers 2",
        "--min-workers must be between 1 and 100000, not 0",
        "--worker-step 2 does not divide the 3 worker(s) between --min-workers 1 and --workers 4",
        "--min-workers 2 needs --checkpoint-dir",
    };
    for (int i = 0; i < cases.length; i++) {
      SpindleRunJob.Outcome o = run(cases[i]);
      assertThat(o.exit()).as(o.output()).isEqualTo(SpindleRun.BAD_INPUT);
      assertThat(o.output()).contains(expected[i]);
    }
    assertThat(yarn.getApplications()).as("nothing submitted").hasSize(before);
  }
}
