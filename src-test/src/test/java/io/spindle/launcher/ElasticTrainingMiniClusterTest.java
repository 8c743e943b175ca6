package io.spindle.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.spindle.yarn.MiniClusterSupport;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code spindle-run --min-workers} with real PyTorch (Debian's {@code python3-torch}, CPU, gloo) on a MiniYARNCluster
 * of two NodeManagers x 4 GPUs, queues {@code a} and {@code b} of half the cluster each, with preemption and
 * checkpoint notices (a real ZooKeeper). An elastic DDP job of 2 to 4 workers x 2 GPUs, each worker
 * {@code torchrun --nproc_per_node=2}:
 * <ol>
 *   <li>starts with 2 workers while a job of queue {@code b} holds the other 4 GPUs;
 *   <li>grows to 4 when that job ends: Spindle hands it the idle GPUs, its workers checkpoint when asked and restart
 *       at 4 from that checkpoint;
 *   <li>shrinks back to 2 when an urgent job of queue {@code b} wants its guarantee back: Spindle's resize notice
 *       names two of its containers, the workers checkpoint, the survivors restart at 2 and Spindle reclaims the two,
 *       which the urgent job then runs on;
 *   <li>ends with the weights of a rigid run. The script splits one global batch per step across however many
 *       processes run, so each step follows the same gradient at every size; only the order of the all-reduce's
 *       additions differs, so the weights are compared to 1e-12 (they differ near 1e-16), not for equality.
 * </ol>
 * At every size the ranks follow the topology rule of {@link RankPlan}.
 */
class ElasticTrainingMiniClusterTest {

  private static final Path TORCHRUN = Path.of("/usr/bin/torchrun");
  private static final Path SCRIPT = Path.of("src", "test", "resources", "launcher", "train_elastic.py")
      .toAbsolutePath();
  private static final int STEPS = 80;
  /** The job waits after this step until the test releases it, so it cannot end before both resizes. */
  private static final int HOLD_AT = 40;
  private static final List<String> TORCHRUN_DEBIAN = List.of("--redirects", "1", "--tee", "1");

  private static TestingServer zk;
  private static LauncherCluster cluster;
  private static List<String> rigid;

  @TempDir
  static Path shared;

  @BeforeAll
  static void start() throws Exception {
    assertThat(Files.isExecutable(TORCHRUN)).as("PyTorch from Debian (apt-get install python3-torch; .ci/run"
        + " installs it) at " + TORCHRUN).isTrue();
    rigid = rigidWeights();
    zk = new TestingServer(true);
    YarnConfiguration c = new YarnConfiguration();
    MiniClusterSupport.gpuPreemption(c, zk.getConnectString(), 60);
    c.set("yarn.scheduler.capacity.maximum-am-resource-percent", "0.5");
    cluster = LauncherCluster.start("elastic-training", c, 16_384);
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(cluster, zk);
  }

  /** The same global batches on 4 processes of one machine, at one size from start to end. */
  private static List<String> rigidWeights() throws Exception {
    Path dir = Files.createDirectories(shared.resolve("rigid"));
    List<String> cmd = new ArrayList<>(List.of(TORCHRUN.toString(), "--nnodes=1", "--nproc_per_node=4",
        "--master_port=" + (20_000 + ProcessHandle.current().pid() % 9_000)));
    cmd.addAll(TORCHRUN_DEBIAN);
    cmd.addAll(List.of(SCRIPT.toString(), "--steps", Integer.toString(STEPS), "--checkpoint-dir",
        dir.resolve("ckpt").toString(), "--out", dir.resolve("weights.txt").toString()));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("log").toFile())
        .start();
    assertThat(p.waitFor(3, TimeUnit.MINUTES)).as("rigid run ends").isTrue();
    assertThat(p.exitValue()).as(Files.readString(dir.resolve("log"))).isZero();
    return Files.readAllLines(dir.resolve("weights.txt"));
  }

  private static List<String> events(Path dir) throws Exception {
    Path f = dir.resolve("events");
    return Files.exists(f) ? Files.readAllLines(f, StandardCharsets.UTF_8) : List.of();
  }

  /** Each start of the job's processes: {world size, the step it resumed from}, in order. */
  private static List<int[]> starts(List<String> events) {
    List<int[]> out = new ArrayList<>();
    Pattern p = Pattern.compile("start attempt=\\d+ step=(\\d+) world=(\\d+)");
    for (String e : events) {
      Matcher m = p.matcher(e);
      if (m.matches()) {
        out.add(new int[] {Integer.parseInt(m.group(2)), Integer.parseInt(m.group(1))});
      }
    }
    return out;
  }

  private static List<Integer> worlds(Path dir) throws Exception {
    return starts(events(dir)).stream().map(s -> s[0]).toList();
  }

  /** Steps done since the latest start. */
  private static int stepsSinceLastStart(Path dir) throws Exception {
    List<String> events = events(dir);
    int n = 0;
    for (String e : events) {
      n = e.startsWith("start ") ? 0 : e.startsWith("step ") ? n + 1 : n;
    }
    return n;
  }

  @Test
  void anElasticJobGrowsFrom2To4ShrinksBackTo2OnANoticeAndEndsWithARigidRunsWeights() throws Exception {
    Path dir = Files.createDirectories(shared.resolve("elastic"));
    // Queue b's job holds 4 of the 8 GPUs until the test lets it end.
    SpindleRunJob holder = cluster.launch("--queue", "b", "--name", "holder", "--workers", "2", "--gpus-per-worker",
        "2", "--memory-mb", "512", "--", "bash", "-c", "touch " + dir + "/held-$RANK; while [ ! -f " + dir
            + "/holder-go ]; do sleep 0.2; done");
    MiniClusterSupport.await(Duration.ofSeconds(90), () -> Files.exists(dir.resolve("held-0"))
        && Files.exists(dir.resolve("held-1")));

    List<String> args = new ArrayList<>(List.of("--queue", "a", "--name", "elastic", "--workers", "4",
        "--min-workers", "2", "--worker-step", "2", "--gpus-per-worker", "2", "--memory-mb", "2048", "--vcores", "2",
        "--checkpoint-dir", dir.resolve("ckpt").toString(), "--max-restarts", "1", "--hang-timeout", "90s",
        "--files", SCRIPT.toString(), "--", TORCHRUN.toString(), "--nproc_per_node=2"));
    args.addAll(TORCHRUN_DEBIAN);
    args.addAll(List.of("train_elastic.py", "--steps", Integer.toString(STEPS), "--checkpoint-every", "10",
        "--step-seconds", "0.3", "--hold-at", Integer.toString(HOLD_AT), "--release", dir.resolve("release")
            .toString(), "--checkpoint-dir", dir.resolve("ckpt").toString(), "--out", dir.resolve("weights.txt")
            .toString(), "--events", dir.resolve("events").toString()));
    SpindleRunJob elastic = cluster.launch(args.toArray(new String[0]));
    try {
      // 1. Two workers (4 processes) start and train.
      MiniClusterSupport.await(Duration.ofSeconds(120), () -> worlds(dir).equals(List.of(4))
          && stepsSinceLastStart(dir) >= 3);
      // 2. The holder ends; the job grows to 4 workers (8 processes) and trains at that size.
      Files.createFile(dir.resolve("holder-go"));
      assertThat(holder.get(2).exit()).isZero();
      MiniClusterSupport.await(Duration.ofSeconds(120), () -> worlds(dir).equals(List.of(4, 8))
          && stepsSinceLastStart(dir) >= 3);
      // 3. Queue b wants its half back: Spindle resizes the job to 2 workers, and the urgent job runs.
      SpindleRunJob urgent = cluster.launch("--queue", "b", "--name", "urgent", "--workers", "2",
          "--gpus-per-worker", "2", "--memory-mb", "512", "--", "sleep", "5");
      MiniClusterSupport.await(Duration.ofSeconds(120), () -> worlds(dir).size() >= 3);
      assertThat(worlds(dir).subList(0, 3)).isEqualTo(List.of(4, 8, 4));
      SpindleRunJob.Outcome u = urgent.get(3);
      assertThat(u.exit()).as(u.output()).isZero();
    } catch (AssertionError e) {
      throw explained(e, elastic.output(), dir);
    } finally {
      Files.createFile(dir.resolve("release"));
    }

    SpindleRunJob.Outcome o = elastic.get(4);
    try {
      checkTheRun(dir, o);
    } catch (AssertionError e) {
      throw explained(e, o.output(), dir);
    }
  }

  /** A failure with what the job printed and its events other than steps. */
  private static AssertionError explained(AssertionError e, String output, Path dir) throws Exception {
    return new AssertionError(e.getMessage() + "\nthe elastic job printed:\n" + output + "\nevents: "
        + events(dir).stream().filter(l -> !l.startsWith("step ")).toList(), e);
  }

  private static void checkTheRun(Path dir, SpindleRunJob.Outcome o) throws Exception {
    assertThat(o.exit()).as(o.output()).isZero();
    assertThat(o.output()).contains("2 of 4 worker(s) allocated, starting with them (--min-workers 2)",
        "more worker(s) allocated; asking the workers to checkpoint", "restarting at 4 worker(s) (was 2)",
        "resize notice", "Spindle takes back 2 worker(s)", "restarting at 2 worker(s) (was 4)", "answered notice",
        "went back to Spindle").doesNotContain(" failed: ", "preempted by Spindle");

    // Every restart resumed from the checkpoint written for it, losing at most the step in flight.
    List<String> events = events(dir);
    List<int[]> starts = starts(events);
    int startIndex = 0;
    int lastCheckpoint = 0;
    int lastStep = 0;
    for (String e : events) {
      if (e.startsWith("start ")) {
        int[] s = starts.get(startIndex++);
        assertThat(s[1]).as("start %d resumes from the newest checkpoint", startIndex).isEqualTo(lastCheckpoint);
        assertThat(lastStep - s[1]).as("steps lost before start %d", startIndex).isBetween(0, 2);
      } else if (e.startsWith("checkpoint step=")) {
        lastCheckpoint = Integer.parseInt(e.split("[= ]")[2]);
      } else if (e.startsWith("step ")) {
        lastStep = Integer.parseInt(e.substring(5));
      }
    }

    // Ranks by topology at every size: by rack, node, then first GPU, as Spindle placed them.
    Matcher run = Pattern.compile("run (\\d+): [^\\n]*ranks:\\n((?:spindle-run: rank \\d+: [^\\n]*\\n)+)")
        .matcher(o.output());
    int runs = 0;
    while (run.find()) {
      runs++;
      List<String> order = new ArrayList<>();
      Matcher rank = Pattern.compile("rank \\d+: (\\S+) (\\S+) GPUs \\[(\\d+)").matcher(run.group(2));
      while (rank.find()) {
        order.add(rank.group(2) + " " + rank.group(1) + String.format(" %03d", Integer.parseInt(rank.group(3))));
      }
      assertThat(order).as("run %s's ranks", run.group(1)).isSorted();
    }
    assertThat(runs).isEqualTo(starts.size());

    List<String> weights = Files.readAllLines(dir.resolve("weights.txt"));
    assertThat(weights).hasSameSizeAs(rigid);
    for (int i = 0; i < weights.size(); i++) {
      assertThat(Double.parseDouble(weights.get(i))).as("weight %d", i)
          .isCloseTo(Double.parseDouble(rigid.get(i)), within(1e-12));
    }
  }
}
