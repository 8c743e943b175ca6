package io.spindle.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.client.CheckpointNoticeView;
import io.spindle.client.CheckpointPaths;
import io.spindle.client.CheckpointRecords;
import io.spindle.yarn.CycleRecordingScheduler.Allocated;
import io.spindle.yarn.UnmanagedAm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.avro.message.SchemaStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code spark-submit} runs a Spark application under dynamic allocation whose executors are an elastic
 * Spindle gang ({@code spindle.gang=executors,spindle.gang.min=2,spindle.gang.step=2}, min 2 and max 4 executors of one
 * GPU each) on a MiniYARNCluster of 2 nodes x 2 GPUs:
 *
 * <ol>
 *   <li><b>Grows as the cluster frees.</b> Another application holds 2 GPUs; the gang starts with its minimum of 2
 *       executors while Spark asks for 4. When that application ends, Spindle grants the 2 more, together.
 *   <li><b>Shrinks by resize notice.</b> The executors cache data and write shuffle output. An urgent gang of queue
 *       {@code b} needs 2 GPUs: Spindle takes the gang's members above its minimum back with a resize notice naming
 *       2 executors' containers (target size 2). The plugin decommissions exactly those executors (Spark moves their
 *       cached and shuffle blocks), they leave, it answers, and the urgent gang starts.
 *   <li><b>Finishes correctly.</b> The job reads the cached data and the shuffle again on the 2 executors left: right
 *       results, no partition computed twice (the blocks moved, none was recomputed), application SUCCEEDED.
 * </ol>
 *
 * <p>Takes 1-3 minutes. See {@code io.spindle.spark.e2e.ElasticJob} (spark-integration's test classes) for the job.
 */
class SparkElasticGangTest {

  private static final int MIN = 2;
  private static final int MAX = 4;
  private static final int PARTITIONS = 8;
  private static final String NAME = "spindle-elastic";

  private static SparkOnSpindle spindle;

  @TempDir
  static Path work;

  @BeforeAll
  static void start() throws Exception {
    spindle = SparkOnSpindle.start("spark-elastic-gang", work);
  }

  @AfterAll
  static void stop() throws Exception {
    if (spindle != null) {
      spindle.close();
    }
  }

  @Test
  void anElasticExecutorGangGrowsAsTheClusterFreesAndIsShrunkByDecommissioningTheExecutorsNamed() throws Exception {
    Path markers = Files.createDirectories(work.resolve("markers"));
    Path logs = Files.createDirectories(work.resolve("logs"));
    Path submitLog = work.resolve("spark-submit.log");
    UnmanagedAm blocker = UnmanagedAm.register(spindle.yarn, spindle.conf,
        UnmanagedAm.submit(spindle.yarn, "blocker", "b", Set.of()));
    Process submit = null;
    try {
      blocker.ask(2, gpus(1));
      assertThat(blocker.awaitHeld(2, Duration.ofSeconds(30))).as("the other application holds 2 GPUs").isEqualTo(2);
      submit = sparkSubmit(markers, logs, submitLog);

      // 1. The gang starts with its minimum while Spark asks for its maximum; it gets the rest once GPUs are free.
      SparkOnSpindle.await(submit, Duration.ofMinutes(3), "the gang's minimum running, more asked", () ->
          spindle.submitted(NAME).isPresent() && spindle.executorContainers(spindle.application(NAME)).size() == MIN
              && outstandingExecutors() >= MAX - MIN);
      ApplicationId app = spindle.application(NAME);
      List<Allocated> first = spindle.executorContainers(app);
      assertThat(first).as("the gang's minimum, while the other application holds the other GPUs").hasSize(MIN);
      assertThat(first).extracting(Allocated::cycle).as("started together").containsOnly(first.get(0).cycle());
      blocker.close();
      blocker = null;
      SparkOnSpindle.awaitFile(markers.resolve("cached"), Duration.ofMinutes(3), submit);
      List<Allocated> grown = spindle.executorContainers(app);
      assertThat(grown).as("grown to dynamic allocation's maximum").hasSize(MAX);
      List<Allocated> added = grown.subList(MIN, MAX);
      assertThat(added).extracting(Allocated::cycle).as("added one step of 2 at a time, after the GPUs were freed")
          .containsOnly(added.get(0).cycle());
      assertThat(added.get(0).cycle()).isGreaterThan(first.get(0).cycle());

      // 2. An urgent gang needs 2 GPUs: a resize notice takes the gang's 2 members above its minimum back.
      List<CheckpointNoticeView> notices;
      try (CuratorFramework zk = spindle.zkAsScheduler();
          NoticeLog noticeLog = NoticeLog.watch(zk, app);
          UnmanagedAm urgent = UnmanagedAm.register(spindle.yarn, spindle.conf,
              UnmanagedAm.submit(spindle.yarn, "urgent", "b", Set.of("spindle.gang.size=2")))) {
        urgent.ask(2, gpus(1));
        assertThat(urgent.awaitHeld(2, Duration.ofSeconds(90))).as("the urgent gang started").isEqualTo(2);
        SparkOnSpindle.awaitFile(markers.resolve("shrunk"), Duration.ofSeconds(60), submit);
        assertThat(submit.waitFor(3, TimeUnit.MINUTES)).as("spark-submit ended").isTrue();
        notices = noticeLog.notices();
      }
      assertThat(submit.exitValue()).as("spark-submit's exit status").isZero();
      assertThat(spindle.yarn.getApplicationReport(app).getFinalApplicationStatus())
          .isEqualTo(FinalApplicationStatus.SUCCEEDED);

      assertThat(notices).as("one resize notice").singleElement().satisfies(n -> {
        assertThat(n.isResize()).isTrue();
        assertThat(n.targetSize()).isEqualTo(MIN);
        assertThat(n.containerIds()).hasSize(MAX - MIN);
        assertThat(grown.stream().map(a -> a.container().toString()).toList()).containsAll(n.containerIds());
      });
      CheckpointNoticeView resize = notices.get(0);
      ExecutorEvents events = ExecutorEvents.read(markers.resolve("executors"));
      Set<String> named = events.executorsIn(resize.containerIds());
      assertThat(named).as("the notice's containers ran executors").hasSize(MAX - MIN);
      assertThat(events.removed()).as("removed: exactly the executors the notice named, by decommissioning")
          .containsOnlyKeys(named).allSatisfy((executor, reasons) -> assertThat(reasons).as("executor %s", executor)
              .anySatisfy(reason -> assertThat(reason).startsWith("Executor decommission")));
      assertThat(Files.readString(driverLog(logs))).as("the plugin answered once they had left, not at the deadline")
          .contains("Executors " + named + " decommissioned; answering Spindle's resize notice " + resize.noticeId());
      assertThat(spindle.executorContainers(app)).as("no executor granted while the urgent gang holds the GPUs").hasSize(MAX);

      // 3. Right results, and no block was recomputed: each partition of the cached data and of the map side ran once.
      assertThat(Files.readAllLines(markers.resolve("result"))).first().isEqualTo("rows 10000");
      assertThat(ranOn(markers, "data")).as("the executors that went held cached blocks").containsAll(named);
      assertThat(ranOn(markers, "map")).as("and shuffle output").containsAll(named);
      assertThat(runs(markers, "data")).as("cached blocks moved, none recomputed").hasSize(PARTITIONS)
          .allSatisfy((partition, n) -> assertThat(n).isOne());
      assertThat(runs(markers, "map")).as("shuffle blocks moved, none recomputed").hasSize(PARTITIONS)
          .allSatisfy((partition, n) -> assertThat(n).isOne());
    } catch (Throwable t) {
      System.err.println(SparkRuntime.diagnostics(submitLog, logs));
      throw t;
    } finally {
      if (blocker != null) {
        blocker.close();
      }
      if (submit != null && submit.isAlive()) {
        submit.destroyForcibly();
      }
    }
  }

  private static Process sparkSubmit(Path markers, Path logs, Path output) throws Exception {
    Map<String, String> conf = new TreeMap<>();
    conf.put("spark.yarn.tags", "spindle.gang=executors,spindle.gang.min=" + MIN + ",spindle.gang.step=" + (MAX - MIN));
    conf.put("spark.dynamicAllocation.enabled", "true");
    conf.put("spark.dynamicAllocation.minExecutors", Integer.toString(MIN));
    conf.put("spark.dynamicAllocation.maxExecutors", Integer.toString(MAX));
    conf.put("spark.dynamicAllocation.shuffleTracking.enabled", "true");
    conf.put("spark.decommission.enabled", "true");
    conf.put("spark.storage.decommission.enabled", "true");
    // Spark checks for blocks left to move every 30 s by default; a decommissioned executor leaves only after that.
    conf.put("spark.storage.decommission.replicationReattemptInterval", "1s");
    conf.put("spark.executor.cores", "1");
    conf.put("spark.executor.resource.gpu.amount", "1");
    conf.put("spark.task.resource.gpu.amount", "1");
    conf.put("spark.executorEnv.SPINDLE_GPU_ADDRESSES", "0");
    conf.put("spark.extraListeners", "io.spindle.spark.e2e.ExecutorLogListener");
    conf.put("spark.spindle.e2e.dir", markers.toString());
    return spindle.sparkSubmit(NAME, conf, List.of(), "io.spindle.spark.e2e.ElasticJob",
        List.of(markers.toString(), Integer.toString(MIN), Integer.toString(MAX), Integer.toString(PARTITIONS)), logs,
        output);
  }

  /** Executors Spark asks YARN for and does not have yet, as the ResourceManager holds the ask. */
  private static int outstandingExecutors() throws Exception {
    ApplicationId app = spindle.application(NAME);
    SchedulerApplicationAttempt attempt = spindle.scheduler().getApplicationAttempt(
        spindle.yarn.getApplicationReport(app).getCurrentApplicationAttemptId());
    return attempt == null ? 0 : attempt.getAppSchedulingInfo().getAllResourceRequests().stream()
        .filter(r -> ResourceRequest.ANY.equals(r.getResourceName()))
        .filter(r -> r.getCapability().getResourceValue(SparkOnSpindle.GPU) > 0)
        .mapToInt(ResourceRequest::getNumContainers).sum();
  }

  /** How often each partition of {@code what} was computed, from the job's run files. */
  private static Map<Integer, Integer> runs(Path markers, String what) throws Exception {
    return runFiles(markers, what).stream().collect(Collectors.groupingBy(f -> Integer.parseInt(f[1]), TreeMap::new,
        Collectors.summingInt(f -> 1)));
  }

  /** The executors that computed partitions of {@code what}. */
  private static Set<String> ranOn(Path markers, String what) throws Exception {
    return runFiles(markers, what).stream().map(f -> f[3]).collect(Collectors.toCollection(TreeSet::new));
  }

  /** The job's run files of {@code what}, each name split: what, partition, task attempt, executor. */
  private static List<String[]> runFiles(Path markers, String what) throws Exception {
    try (Stream<Path> files = Files.list(markers.resolve("runs"))) {
      return files.map(f -> f.getFileName().toString().split("-")).filter(f -> f[0].equals(what)).toList();
    }
  }

  /** The driver's log: the ApplicationMaster's container, the first of the application's. */
  private static Path driverLog(Path logs) throws Exception {
    try (Stream<Path> files = Files.list(logs)) {
      return files.filter(f -> f.getFileName().toString().matches("container_.*_000001\\.log")).findFirst()
          .orElseThrow(() -> new AssertionError("no driver log in " + logs));
    }
  }

  private static Resource gpus(int n) {
    Resource r = Resource.newInstance(1024, 1);
    r.setResourceValue(SparkOnSpindle.GPU, n);
    return r;
  }

  /** The job's executor log: which container each executor ran in, and why each removed one went. */
  private record ExecutorEvents(Map<String, String> containers, Map<String, List<String>> removed) {

    /** Spark may report an executor's removal twice: when it left, then when YARN said its container ended. */
    static ExecutorEvents read(Path file) throws Exception {
      Map<String, String> containers = new TreeMap<>();
      Map<String, List<String>> removed = new TreeMap<>();
      for (String line : Files.readAllLines(file)) {
        String[] f = line.split(" ", 3);
        if (f[0].equals("added")) {
          containers.put(f[1], f[2]);
        } else {
          removed.computeIfAbsent(f[1], k -> new java.util.ArrayList<>()).add(f[2]);
        }
      }
      return new ExecutorEvents(containers, removed);
    }

    Set<String> executorsIn(List<String> containerIds) {
      return containers.entrySet().stream().filter(e -> containerIds.contains(e.getValue())).map(Map.Entry::getKey)
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }

  /**
   * Every checkpoint notice Spindle writes for {@code app}, newest revision of each, read as the scheduler every 50 ms
   * on a thread of its own: a resize notice stays at least until the plugin has answered it, seconds later.
   */
  private static final class NoticeLog implements AutoCloseable {
    private final Map<Long, CheckpointNoticeView> seen = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean stop;

    private NoticeLog(CuratorFramework zk, String app) {
      CheckpointPaths paths = new CheckpointPaths("/spindle/default");
      SchemaStore.Cache schemas = new SchemaStore.Cache();
      schemas.addSchema(io.spindle.client.avro.CheckpointNotice.getClassSchema());
      CheckpointRecords records = new CheckpointRecords(schemas);
      thread = new Thread(() -> {
        while (!stop) {
          try {
            if (zk.checkExists().forPath(paths.notices(app)) != null) {
              for (String id : zk.getChildren().forPath(paths.notices(app))) {
                byte[] bytes = zk.getData().forPath(paths.notices(app) + "/" + id);
                if (bytes.length > 0) {
                  CheckpointNoticeView n = records.decodeNotice(bytes);
                  seen.merge(n.noticeId(), n, (a, b) -> b.revision() >= a.revision() ? b : a);
                }
              }
            }
          } catch (Exception gone) {
            // A notice closed between listing and reading: seen before, or never ours to see.
          }
          try {
            Thread.sleep(50);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "notice-log");
      thread.setDaemon(true);
    }

    static NoticeLog watch(CuratorFramework zk, ApplicationId app) {
      NoticeLog log = new NoticeLog(zk, app.toString());
      log.thread.start();
      return log;
    }

    /** The notices seen so far, by id. */
    List<CheckpointNoticeView> notices() {
      return new TreeMap<>(seen).values().stream().toList();
    }

    @Override
    public void close() {
      stop = true;
      thread.interrupt();
    }
  }
}
