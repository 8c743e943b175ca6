package io.spindle.launcher;

import static org.assertj.core.api.Assertions.assertThat;

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
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.SignalContainerCommand;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code spindle-run} with real PyTorch (Debian's {@code python3-torch}, CPU, gloo) on a MiniYARNCluster of two
 * NodeManagers x 4 GPUs with preemption and checkpoint notices (a real ZooKeeper): a DDP job of 2 workers x 2
 * processes ({@code torchrun --nproc_per_node=2}, joined by the {@code PET_*} variables the launcher sets) all-reduces
 * gradients across containers, checkpoints, and
 * <ul>
 *   <li>survives a worker killed from outside (SIGKILL to its container): the gang restarts from the newest
 *       checkpoint, losing only the steps since it;
 *   <li>is preempted by a higher-priority {@code spindle-run} job in its queue: its AM relays Spindle's notice to the
 *       workers, rank 0 checkpoints at once, the AM answers DONE, the gang is reclaimed, asked for again and resumes
 *       from that checkpoint once the urgent job is done.
 * </ul>
 * Either way the final weights equal those of an uninterrupted run of the same 4 processes.
 */
class TrainingMiniClusterTest {

  private static final Path PYTHON = Path.of("/usr/bin/python3");
  private static final Path TORCHRUN = Path.of("/usr/bin/torchrun");
  private static final Path SCRIPT = Path.of("..", "examples", "pytorch", "train_ddp.py").toAbsolutePath().normalize();
  private static final int STEPS = 40;
  /** Debian 12's torchrun fails on Python 3.11 with its default --redirects/--tee of 0 (docs/training-guide.md). */
  private static final List<String> TORCHRUN_DEBIAN = List.of("--redirects", "1", "--tee", "1");

  private static TestingServer zk;
  private static LauncherCluster cluster;
  private static List<String> uninterrupted;

  @TempDir
  static Path shared;

  @BeforeAll
  static void start() throws Exception {
    assertThat(Files.isExecutable(TORCHRUN)).as("PyTorch from Debian (apt-get install python3-torch; .ci/run"
        + " installs it) at " + TORCHRUN).isTrue();
    uninterrupted = referenceWeights();

    zk = new TestingServer(true);
    YarnConfiguration c = new YarnConfiguration();
    MiniClusterSupport.gpuPreemption(c, zk.getConnectString(), 60);
    c.set("yarn.scheduler.capacity.maximum-am-resource-percent", "0.5"); // both jobs' AMs in queue a
    c.setInt(YarnConfiguration.MAX_CLUSTER_LEVEL_APPLICATION_PRIORITY, 10);
    cluster = LauncherCluster.start("training", c, 16_384);
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(cluster, zk);
  }

  /** The same 4 processes on one machine, never interrupted: what every interrupted run must end with. */
  private static List<String> referenceWeights() throws Exception {
    Path dir = Files.createDirectories(shared.resolve("reference"));
    List<String> cmd = new ArrayList<>(List.of(TORCHRUN.toString(), "--nnodes=1", "--nproc_per_node=4",
        "--master_port=" + (20_000 + ProcessHandle.current().pid() % 9_000)));
    cmd.addAll(TORCHRUN_DEBIAN);
    cmd.addAll(List.of(SCRIPT.toString(), "--steps", Integer.toString(STEPS), "--checkpoint-dir",
        dir.resolve("ckpt").toString(), "--out", dir.resolve("weights.txt").toString()));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("log").toFile())
        .start();
    assertThat(p.waitFor(3, TimeUnit.MINUTES)).as("reference run ends").isTrue();
    assertThat(p.exitValue()).as(Files.readString(dir.resolve("log"))).isZero();
    return Files.readAllLines(dir.resolve("weights.txt"));
  }

  /** spindle-run's arguments for the DDP job writing into {@code dir}. */
  private static String[] ddpJob(String name, Path dir, int gpusPerWorker, int checkpointEvery, double stepSeconds) {
    List<String> args = new ArrayList<>(List.of("--queue", "a", "--name", name, "--workers", "2",
        "--gpus-per-worker", Integer.toString(gpusPerWorker), "--memory-mb", "2048", "--vcores", "2",
        "--checkpoint-dir", dir.resolve("ckpt").toString(), "--max-restarts", "2", "--restart-backoff", "1s",
        "--hang-timeout", "90s", "--files", SCRIPT.toString()));
    args.addAll(List.of("--", TORCHRUN.toString(), "--nproc_per_node=2"));
    args.addAll(TORCHRUN_DEBIAN);
    args.addAll(List.of("train_ddp.py", "--steps", Integer.toString(STEPS), "--checkpoint-every",
        Integer.toString(checkpointEvery), "--step-seconds", Double.toString(stepSeconds), "--checkpoint-dir", dir.resolve("ckpt").toString(),
        "--out", dir.resolve("weights.txt").toString(), "--events", dir.resolve("events").toString()));
    return args.toArray(new String[0]);
  }

  private static List<String> events(Path dir) throws Exception {
    Path f = dir.resolve("events");
    return Files.exists(f) ? Files.readAllLines(f, StandardCharsets.UTF_8) : List.of();
  }

  private static int lastStep(List<String> events, String prefix) {
    int last = -1;
    for (String e : events) {
      if (e.startsWith(prefix)) {
        last = Integer.parseInt(e.substring(prefix.length()).split(" ")[0]);
      }
    }
    return last;
  }

  /** What the events say of each start: [attempt, resume step] in order. */
  private static List<int[]> starts(List<String> events) {
    List<int[]> out = new ArrayList<>();
    Pattern p = Pattern.compile("start attempt=(\\d+) step=(\\d+) world=4");
    for (String e : events) {
      Matcher m = p.matcher(e);
      if (m.matches()) {
        out.add(new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))});
      }
    }
    return out;
  }

  /** The steps done and checkpoints written before the start of attempt {@code attempt}. */
  private static List<String> before(List<String> events, int attempt) {
    int i = events.indexOf(events.stream().filter(e -> e.startsWith("start attempt=" + attempt + " ")).findFirst()
        .orElseThrow());
    return events.subList(0, i);
  }

  @Test
  void aKilledWorkerRestartsTheGangFromTheNewestCheckpointAndTheResultEqualsAnUninterruptedRun() throws Exception {
    Path dir = Files.createDirectories(shared.resolve("killed"));
    SpindleRunJob job = cluster.launch(ddpJob("ddp-killed", dir, 2, 5, 0.3));
    MiniClusterSupport.await(Duration.ofSeconds(120), () -> lastStep(events(dir), "checkpoint step=") >= 10);
    Matcher rank1 = Pattern.compile("rank 1: \\S+ \\S+ GPUs \\S+ \\S+ \\((container_\\S+)\\)").matcher(job.output());
    assertThat(rank1.find()).as(job.output()).isTrue();
    cluster.yarn.signalToContainer(ContainerId.fromString(rank1.group(1)), SignalContainerCommand.FORCEFUL_SHUTDOWN);

    SpindleRunJob.Outcome o = job.get(4);
    assertThat(o.exit()).as(o.output()).isZero();
    assertThat(o.output()).contains("run 0 failed: rank 1 on", "restart 1 of 2", "run 1: resuming from");
    List<String> events = events(dir);
    assertThat(starts(events)).extracting(s -> s[0]).containsExactly(0, 1);
    int resumedAt = starts(events).get(1)[1];
    List<String> firstRun = before(events, 1);
    assertThat(resumedAt).as("resumes from the newest checkpoint").isEqualTo(lastStep(firstRun, "checkpoint step="))
        .isPositive();
    assertThat(lastStep(firstRun, "step ") - resumedAt).as("steps lost: at most those since that checkpoint")
        .isBetween(0, 4);
    assertThat(Files.readAllLines(dir.resolve("weights.txt"))).isEqualTo(uninterrupted);
  }

  @Test
  void aHigherPriorityJobPreemptsTheExperimentWhichCheckpointsWhenToldAndResumesFromThatCheckpoint()
      throws Exception {
    Path dir = Files.createDirectories(shared.resolve("preempted"));
    // The experiment takes all 8 GPUs; its periodic checkpoints are rare, so the one it writes when told is what
    // keeps the preemption from losing work. Its slower steps leave the urgent job's AM time to start (about 20 s)
    // before it would end on its own. The urgent job asks as many GPUs: inside one queue Spindle preempts for
    // a higher priority only while the queue stays at its fair share (PreemptionTest).
    SpindleRunJob experiment = cluster.launch(ddpJob("experiment", dir, 4, 100, 0.6));
    MiniClusterSupport.await(Duration.ofSeconds(120), () -> lastStep(events(dir), "step ") >= 8);
    SpindleRunJob urgent = cluster.launch("--queue", "a", "--name", "urgent-retraining",
        "--priority", "5", "--workers", "2", "--gpus-per-worker", "4", "--memory-mb", "512", "--", "sleep", "3");

    SpindleRunJob.Outcome u = urgent.get(3);
    assertThat(u.exit()).as(u.output()).isZero();
    SpindleRunJob.Outcome x = experiment.get(4);
    assertThat(x.exit()).as(x.output()).isZero();
    assertThat(x.output()).as("the urgent job printed:%n%s", u.output()).contains("checkpoint notice", "asking the workers to checkpoint", "answered notice",
        "preempted by Spindle", "run 1: resuming from");
    List<String> events = events(dir);
    assertThat(starts(events)).extracting(s -> s[0]).containsExactly(0, 1);
    List<String> firstRun = before(events, 1);
    assertThat(firstRun).as("rank 0 checkpointed when told").anyMatch(e -> e.endsWith(" asked"));
    int resumedAt = starts(events).get(1)[1];
    assertThat(resumedAt).as("resumes from the checkpoint written for the notice")
        .isEqualTo(lastStep(firstRun, "checkpoint step=")).isGreaterThanOrEqualTo(8);
    assertThat(lastStep(firstRun, "step ") - resumedAt)
        .as("steps lost: only those done between the checkpoint and the reclaim").isBetween(0, 10);
    assertThat(Files.readAllLines(dir.resolve("weights.txt"))).isEqualTo(uninterrupted);
  }
}
