package io.spindle.journal;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.CycleClock;
import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.preemption.CheckpointAnswer;
import io.spindle.core.queue.QueueConfigParser;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run recorded as the scheduler records it — the engine on a {@link CycleClock}, every cycle journaled, idle ones
 * too — replays with the same decisions; a journal changed afterwards, or with lost entries, does not pass.
 */
class JournalReplayTest {

  private static final GpuModel H100 = GpuModelCatalog.builtIn().require("model", "H100-80GB");
  private static final Resources TWO_GPUS = Resources.of(8_192, 2).withGpus(2);

  @TempDir
  Path dir;
  private Path recorded;
  private List<Decision> decided;
  private long cycles;

  @BeforeEach
  void record() throws Exception {
    Map<String, String> conf = new HashMap<>(Map.of(
        "yarn.scheduler.capacity.root.queues", "a,b",
        "yarn.scheduler.capacity.root.a.capacity", "50",
        "yarn.scheduler.capacity.root.b.capacity", "50",
        "yarn.scheduler.capacity.root.a.user-limit-factor", "-1",
        "yarn.scheduler.capacity.root.b.user-limit-factor", "-1",
        "yarn.scheduler.spindle.preemption.enabled", "true",
        "yarn.scheduler.spindle.preemption.starvation-seconds", "1",
        "yarn.scheduler.spindle.preemption.checkpoint-grace-seconds", "5",
        "yarn.scheduler.spindle.mig.reconfigure-seconds", "1"));
    Path out = Files.createDirectories(dir.resolve("recorded"));
    try (Run run = new Run(out, conf)) {
      run.cycle(0, new EngineEvent.NodeAdded(wholeNode("n1")), new EngineEvent.NodeAdded(wholeNode("n2")));
      run.cycle(100, new EngineEvent.AppSubmitted(AppId.of("a1"), "a", "alice", 0),
          new EngineEvent.AppSubmitted(AppId.of("a2"), "a", "alice", 0),
          new EngineEvent.Demand(AppId.of("a1"), "workers", TWO_GPUS, 2, PlacementSpec.gang(null, false)),
          new EngineEvent.Demand(AppId.of("a2"), "workers", TWO_GPUS, 2, PlacementSpec.gang(null, false)));
      run.idle(5);
      // Queue b's gang finds every GPU taken by a (over its share): it waits, reserves, starves and gets a victim.
      run.cycle(100, new EngineEvent.AppSubmitted(AppId.of("b1"), "b", "bob", 0),
          new EngineEvent.Demand(AppId.of("b1"), "workers", TWO_GPUS, 2, PlacementSpec.gang(null, false)));
      run.idle(15);
      Decision.RequestCheckpoint notice = run.first(Decision.RequestCheckpoint.class);
      run.cycle(100, new EngineEvent.CheckpointAnswered(notice.appId(), notice.noticeId(), CheckpointAnswer.DONE, 0,
          "hdfs:///ckpt/" + notice.appId()));
      Decision.Preempt preempt = run.first(Decision.Preempt.class);
      run.cycle(100, preempt.allocationIds().stream().map(EngineEvent.ContainerFinished::new)
          .toArray(EngineEvent[]::new));
      // A MIG request on a new MIG node: a re-partition, the node's report, the instance once the time has come.
      run.cycle(100, new EngineEvent.NodeAdded(new Node(NodeId.of("m1"), "/r2", 256_000, 64, List.of(new Gpu(0, H100, 0, true)))),
          new EngineEvent.AppSubmitted(AppId.of("m"), "a", "carol", 1),
          new EngineEvent.Demand(AppId.of("m"), "slice", Resources.of(2_048, 1).withMig("3g.40gb", 1), 1));
      Decision.ReconfigureMig repartition = run.first(Decision.ReconfigureMig.class);
      run.cycle(200, new EngineEvent.MigLayoutReported(NodeId.of("m1"), 0, repartition.layout()));
      run.idle(12);
      run.reconfigure(Map.of("yarn.scheduler.capacity.root.queues", "a,b",
          "yarn.scheduler.capacity.root.a.capacity", "60", "yarn.scheduler.capacity.root.b.capacity", "40"));
      List<EngineEvent> ends = new ArrayList<>();
      for (Decision d : run.decided) {
        if (d instanceof Decision.Allocate a && a.appId().equals(AppId.of("b1"))) {
          ends.add(new EngineEvent.ContainerFinished(a.allocationId()));
        }
      }
      ends.add(new EngineEvent.AppFinished(AppId.of("b1")));
      run.cycle(100, ends.toArray(EngineEvent[]::new));
      run.idle(3);
      decided = run.decided;
      cycles = run.cycles;
    }
    recorded = JournalRoundTripTest.onlyFile(out);
  }

  @Test
  void aRecordedRunReplaysWithTheSameDecisions() throws IOException {
    assertThat(decided).extracting(Object::getClass).contains(Decision.Allocate.class, Decision.Reserve.class,
        Decision.Wait.class, Decision.RequestCheckpoint.class, Decision.Preempt.class, Decision.ReconfigureMig.class);

    JournalReplay.Result result = JournalReplay.replay(recorded);

    assertThat(result.mismatch()).isNull();
    assertThat(result.identical()).isTrue();
    assertThat(result.closed()).isTrue();
    assertThat(result.decisions()).isEqualTo(decided.size());
    assertThat(result.cycles()).isEqualTo(cycles);
    assertThat(result.idleCycles()).isPositive();
    assertThat(result.reconfigurations()).isEqualTo(1);
  }

  /**
   * A new leader's run: YARN's recovery, the old leader's state restored over it (a checkpoint notice whose deadline
   * passed during the failover), the asks again, the reclaim and the urgent gang's start. The restore is journaled
   * with the lookup it was given and replays the same.
   */
  @Test
  void aTakeOverWithARestoreReplaysWithTheSameDecisions() throws Exception {
    Map<String, String> conf = Map.of(
        "yarn.scheduler.capacity.root.queues", "a,b",
        "yarn.scheduler.capacity.root.a.capacity", "50",
        "yarn.scheduler.capacity.root.b.capacity", "50",
        "yarn.scheduler.capacity.root.a.user-limit-factor", "-1",
        "yarn.scheduler.capacity.root.b.user-limit-factor", "-1",
        "yarn.scheduler.spindle.preemption.enabled", "true",
        "yarn.scheduler.spindle.preemption.starvation-seconds", "1",
        "yarn.scheduler.spindle.preemption.checkpoint-grace-seconds", "5");
    List<EngineEvent> nodes = List.of(new EngineEvent.NodeAdded(wholeNode("n1")),
        new EngineEvent.NodeAdded(wholeNode("n2")));
    List<EngineEvent> apps = List.of(new EngineEvent.AppSubmitted(AppId.of("a1"), "a", "alice", 0),
        new EngineEvent.AppSubmitted(AppId.of("a2"), "a", "alice", 0), new EngineEvent.AppSubmitted(AppId.of("b1"), "b", "bob", 0));
    List<EngineEvent> asks = List.of(
        new EngineEvent.Demand(AppId.of("a1"), "workers", TWO_GPUS, 2, PlacementSpec.gang(null, false)),
        new EngineEvent.Demand(AppId.of("a2"), "workers", TWO_GPUS, 2, PlacementSpec.gang(null, false)));
    EngineEvent urgent = new EngineEvent.Demand(AppId.of("b1"), "workers", TWO_GPUS, 2, PlacementSpec.gang(null, false));
    io.spindle.core.engine.DurableState state;
    List<EngineEvent> recovered = new ArrayList<>();
    try (Run old = new Run(Files.createDirectories(dir.resolve("old")), conf)) {
      old.cycle(0, nodes.toArray(EngineEvent[]::new));
      old.cycle(100, apps.toArray(EngineEvent[]::new));
      old.cycle(100, asks.toArray(EngineEvent[]::new));
      old.cycle(100, urgent);
      old.idle(15);
      old.first(Decision.RequestCheckpoint.class);
      state = old.engine.durableState(id -> "container-" + id);
      for (Decision d : old.decided) {
        if (d instanceof Decision.Allocate a) {
          recovered.add(new EngineEvent.ContainerRecovered(-a.allocationId(), a.appId(), a.requestKey(), a.nodeId(),
              a.shape()));
        }
      }
    }
    Path out = Files.createDirectories(dir.resolve("new"));
    List<Decision> decidedByNewLeader;
    try (Run leader = new Run(out, conf, 1_700_000_030_000L)) { // 30 s later: the notice's deadline has passed.
      List<EngineEvent> recovery = new ArrayList<>(nodes);
      recovery.addAll(apps);
      recovery.addAll(recovered);
      leader.cycle(0, recovery.toArray(EngineEvent[]::new));
      io.spindle.core.engine.RestoreReport report = leader.restore(state,
          name -> Long.valueOf(-Long.parseLong(name.substring("container-".length()))));
      assertThat(report.notices()).isEqualTo(1);
      List<EngineEvent> again = new ArrayList<>(asks);
      again.add(urgent);
      leader.cycle(100, again.toArray(EngineEvent[]::new));
      Decision.Preempt preempt = leader.first(Decision.Preempt.class); // At once: its deadline passed meanwhile.
      leader.cycle(100, preempt.allocationIds().stream().map(EngineEvent.ContainerFinished::new)
          .toArray(EngineEvent[]::new));
      leader.idle(3);
      decidedByNewLeader = leader.decided;
    }
    assertThat(decidedByNewLeader).anyMatch(d -> d instanceof Decision.Allocate a && a.appId().equals(AppId.of("b1")));

    JournalReplay.Result result = JournalReplay.replay(JournalRoundTripTest.onlyFile(out));

    assertThat(result.mismatch()).isNull();
    assertThat(result.identical()).isTrue();
    assertThat(result.restores()).isEqualTo(1);
    assertThat(result.decisions()).isEqualTo(decidedByNewLeader.size());
  }

  @Test
  void aDecisionChangedInTheJournalIsFoundInItsCycle() throws IOException {
    Decision.Allocate original = (Decision.Allocate) decided.stream()
        .filter(d -> d instanceof Decision.Allocate a && a.appId().equals(AppId.of("b1"))).findFirst().orElseThrow();
    Decision.Allocate tampered = new Decision.Allocate(original.allocationId(), original.appId(),
        original.requestKey(), original.nodeId().equals(NodeId.of("n1")) ? NodeId.of("n2") : NodeId.of("n1"), original.shape(), original.gpus(),
        original.charge());

    JournalReplay.Result result = JournalReplay.replay(copy(c -> new JournalEntry.Cycle(c.timeMillis(), c.events(),
        c.decisions().stream().map(d -> d.equals(original) ? tampered : d).toList())));

    assertThat(result.identical()).isFalse();
    JournalReplay.Mismatch m = result.mismatch();
    assertThat(m).isNotNull();
    assertThat(m.expected()).contains(tampered).doesNotContain(original);
    assertThat(m.actual()).contains(original).doesNotContain(tampered);
    assertThat(m.problem()).startsWith("decision ").endsWith(" differs");
    assertThat(result.cycles()).as("stopped at the tampered cycle").isEqualTo(m.cycle()).isLessThan(cycles);
  }

  @Test
  void anEventLeftOutOfTheJournalMakesTheReplayDiverge() throws IOException {
    JournalReplay.Result result = JournalReplay.replay(copy(c -> new JournalEntry.Cycle(c.timeMillis(),
        c.events().stream().filter(e -> !(e instanceof EngineEvent.CheckpointAnswered)).toList(), c.decisions())));

    assertThat(result.identical()).isFalse();
    assertThat(result.mismatch().expected()).hasAtLeastOneElementOfType(Decision.Preempt.class);
    assertThat(result.mismatch().actual()).doesNotHaveAnyElementsOfTypes(Decision.Preempt.class);
  }

  @Test
  void aJournalWithLostEntriesReplaysUpToTheGapAndNoFurther() throws Exception {
    Path out = Files.createDirectories(dir.resolve("gap"));
    JournalEntry.Header header;
    try (JournalReader reader = JournalReader.open(recorded)) {
      header = reader.header();
    }
    JournalWriter writer = JournalWriter.unstarted(new JournalSettings(out, 2), header);
    writer.cycle(header.clockStartMillis(), List.of(), List.of());
    writer.cycle(header.clockStartMillis() + 100, List.of(), List.of());
    writer.cycle(header.clockStartMillis() + 200, List.of(), List.of()); // A third item does not fit: dropped.
    writer.startWriting();
    while (writer.queuedItems() > 0) {
      Thread.sleep(10);
    }
    writer.cycle(header.clockStartMillis() + 300, List.of(), List.of());
    writer.close();

    JournalReplay.Result result = JournalReplay.replay(JournalRoundTripTest.onlyFile(out));

    assertThat(result.cycles()).isEqualTo(2);
    assertThat(result.lostEntries()).isEqualTo(1);
    assertThat(result.mismatch()).isNull();
    assertThat(result.identical()).as("nothing past the gap is claimed").isFalse();
  }

  @Test
  void aJournalCutOffInItsLastBlockReplaysWhatItHolds() throws Exception {
    Path out = Files.createDirectories(dir.resolve("cut"));
    List<JournalEntry> entries = entries(recorded);
    try (JournalReader reader = JournalReader.open(recorded)) {
      DecisionJournal journal = DecisionJournal.open(new JournalSettings(out, 100_000), reader.header());
      int half = entries.size() / 2;
      replay(journal, entries.subList(0, half));
      Path file = awaitFile(out);
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (readable(file) < half && System.nanoTime() < deadline) {
        Thread.sleep(50); // The writer flushes the first half as a block once it is idle and a second has passed.
      }
      replay(journal, entries.subList(half, entries.size()));
      journal.close();
      try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
        f.setLength(f.length() - 10); // As a ResourceManager killed while it wrote the last block leaves it.
      }
      JournalReplay.Result result = JournalReplay.replay(file);

      // Avro reads a block cut short as the end of the file; only the missing end entry tells.
      assertThat(result.closed()).isFalse();
      assertThat(result.mismatch()).isNull();
      assertThat(result.cycles()).isPositive().isLessThan(cycles);
      assertThat(result.identical()).as("what it holds is a prefix of the run, and it matched").isTrue();
    }
  }

  /** The recorded journal, written again with each cycle changed by {@code change}. */
  private Path copy(UnaryOperator<JournalEntry.Cycle> change) throws IOException {
    Path out = Files.createDirectories(dir.resolve("copy"));
    try (JournalReader reader = JournalReader.open(recorded)) {
      DecisionJournal journal = DecisionJournal.open(new JournalSettings(out, 100_000), reader.header());
      replay(journal, entries(recorded).stream()
          .map(e -> e instanceof JournalEntry.Cycle c ? change.apply(c) : e).toList());
      journal.close();
    }
    return JournalRoundTripTest.onlyFile(out);
  }

  private static void replay(DecisionJournal journal, List<JournalEntry> entries) {
    for (JournalEntry e : entries) {
      if (e instanceof JournalEntry.Cycle c) {
        journal.cycle(c.timeMillis(), c.events(), c.decisions());
      } else if (e instanceof JournalEntry.Reconfigure r) {
        journal.reconfigured(r.configuration());
      } else if (e instanceof JournalEntry.Restore r) {
        journal.restored(r.timeMillis(), r.state(), r.allocationIds(), r.failure());
      }
    }
  }

  private static List<JournalEntry> entries(Path file) throws IOException {
    List<JournalEntry> out = new ArrayList<>();
    try (JournalReader reader = JournalReader.open(file)) {
      Optional<JournalEntry> e;
      while ((e = reader.next()).isPresent()) {
        out.add(e.get());
      }
    }
    return out;
  }

  /** How many entries after the header can be read from the file so far: those in its finished blocks. */
  private static int readable(Path file) {
    try (JournalReader reader = JournalReader.open(file)) {
      int n = 0;
      while (reader.next().isPresent()) {
        n++;
      }
      return n;
    } catch (IOException notYet) {
      return 0;
    }
  }

  private static Path awaitFile(Path dir) throws Exception {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (System.nanoTime() < deadline) {
      try (var files = Files.list(dir)) {
        Optional<Path> f = files.findFirst();
        if (f.isPresent()) {
          return f.get();
        }
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no journal file in " + dir);
  }

  private static Node wholeNode(String id) {
    List<Gpu> gpus = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      gpus.add(new Gpu(i, H100, 0, false));
    }
    return new Node(NodeId.of(id), "/r1", 256_000, 64, gpus);
  }

  /** The engine driven as SpindleScheduler drives it: a cycle clock moved once per cycle, every call journaled. */
  private static final class Run implements AutoCloseable {
    private final AtomicLong wall;
    private final CycleClock clock;
    private final Engine engine;
    private final DecisionJournal journal;
    private final List<Decision> decided = new ArrayList<>();
    private long cycles;

    Run(Path dir, Map<String, String> conf) {
      this(dir, conf, 1_700_000_000_000L);
    }

    Run(Path dir, Map<String, String> conf, long startMillis) {
      wall = new AtomicLong(startMillis);
      clock = new CycleClock(wall::get);
      engine = new Engine(GpuModelCatalog.builtIn(), new QueueConfigParser().parse(conf), Topology.open("rack"),
          clock, EngineSettings.fromConfiguration(conf));
      journal = DecisionJournal.open(new JournalSettings(dir, 100_000), new JournalEntry.Header(
          JournalEntry.FORMAT_VERSION, "test#1", null, wall.get(), clock.nowMillis(), List.of("rack"),
          DecisionJournal.engineConfiguration(conf)));
    }

    void cycle(long advanceMillis, EngineEvent... events) {
      wall.addAndGet(advanceMillis + 3); // Not a round 100 ms, as on a real scheduling thread.
      long now = clock.tick();
      CycleResult result = engine.cycle(List.of(events), (e, problem) -> { });
      journal.cycle(now, List.of(events), result.decisions());
      decided.addAll(result.decisions());
      cycles++;
    }

    void idle(int cycles) {
      for (int i = 0; i < cycles; i++) {
        cycle(100);
      }
    }

    io.spindle.core.engine.RestoreReport restore(io.spindle.core.engine.DurableState state,
        java.util.function.Function<String, Long> allocationIdOf) {
      RecordingLookup lookup = new RecordingLookup(allocationIdOf);
      io.spindle.core.engine.RestoreReport report = engine.restore(state, lookup);
      journal.restored(clock.nowMillis(), state, lookup.found(), null);
      return report;
    }

    void reconfigure(Map<String, String> conf) {
      engine.reconfigure(new QueueConfigParser().parse(conf));
      journal.reconfigured(conf);
    }

    <T extends Decision> T first(Class<T> type) {
      return decided.stream().filter(type::isInstance).map(type::cast).findFirst()
          .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " among " + decided));
    }

    @Override
    public void close() {
      journal.close();
    }
  }
}
