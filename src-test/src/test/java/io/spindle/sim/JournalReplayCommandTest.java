package io.spindle.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.ManualClock;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.journal.DecisionJournal;
import io.spindle.journal.JournalSettings;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code spindle-sim --replay} and {@code --dump}: what they print and the status they exit with. */
class JournalReplayCommandTest {

  private static final Map<String, String> CONF = Map.of("yarn.scheduler.capacity.root.queues", "a",
      "yarn.scheduler.capacity.root.a.capacity", "100");

  @TempDir
  Path dir;

  @Test
  void aFaithfulJournalReplaysIdentical() throws Exception {
    Path journal = record("faithful", false);
    ByteArrayOutputStream out = new ByteArrayOutputStream();

    int status = SimMain.run(new String[] {"--replay", journal.toString()}, new PrintStream(out, true,
        StandardCharsets.UTF_8), System.err, false);

    assertThat(status).isEqualTo(JournalReplayCommand.IDENTICAL);
    assertThat(out.toString(StandardCharsets.UTF_8))
        .contains("Replayed 3 cycles (1 idle), 4 events, 2 decisions, 0 queue reconfigurations, 0 restores")
        .contains("IDENTICAL: every one of the 2 decisions was made again, equal and in order.");
  }

  @Test
  void aTamperedJournalShowsTheFirstDifferentCycleWithBothSidesAndFails() throws Exception {
    Path journal = record("tampered", true);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    int status = JournalReplayCommand.run(journal, new PrintStream(bytes, true, StandardCharsets.UTF_8));

    String out = bytes.toString(StandardCharsets.UTF_8);
    assertThat(status).isEqualTo(JournalReplayCommand.DIFFERENT);
    assertThat(out).contains("DIFFERENT at cycle 2 (entry 3)", "decision 1 differs", "events of the cycle (3):",
        "decisions in the journal (2):", "decisions of the replay (2):");
    assertThat(out.lines().filter(l -> l.startsWith("  * "))).as("both decisions, on both sides").hasSize(4);
  }

  @Test
  void aJournalDumpsAsTextCycleByCycleAndFiltersByApplication() throws Exception {
    Path journal = record("dumped", false);
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    int status = SimMain.run(new String[] {"--dump", journal.toString()}, new PrintStream(all, true,
        StandardCharsets.UTF_8), System.err, false);
    assertThat(status).isEqualTo(JournalDumpCommand.COMPLETE);
    List<String> lines = all.toString(StandardCharsets.UTF_8).lines().toList();
    assertThat(lines.get(0)).startsWith("# Decision journal ").contains("written by test#1");
    assertThat(lines).filteredOn(l -> l.startsWith("cycle ")).hasSize(2); // The idle third cycle is left out.
    assertThat(lines).filteredOn(l -> l.startsWith("  > ")).hasSize(4)
        .anyMatch(l -> l.contains("NodeAdded[id=n1, location=/r1") && l.contains("gpus=2 x H100-80GB]"))
        .anyMatch(l -> l.contains("AppSubmitted[appId=app,"));
    assertThat(lines).filteredOn(l -> l.startsWith("  < ")).hasSize(2).allMatch(l -> l.contains("Allocate[") && l.contains("appId=app,"));
    assertThat(lines.get(lines.size() - 1)).startsWith("# closed at ").contains("3 cycles");

    ByteArrayOutputStream one = new ByteArrayOutputStream();
    SimMain.run(new String[] {"--dump", journal.toString(), "--app", "app"}, new PrintStream(one, true,
        StandardCharsets.UTF_8), System.err, false);
    List<String> filtered = one.toString(StandardCharsets.UTF_8).lines().toList();
    assertThat(filtered).filteredOn(l -> l.startsWith("cycle ")).hasSize(1);
    assertThat(filtered).noneMatch(l -> l.contains("NodeAdded"));
    assertThat(filtered).filteredOn(l -> l.startsWith("  ")).hasSize(5); // Submitted, two demands, two allocations.
    ByteArrayOutputStream none = new ByteArrayOutputStream();
    SimMain.run(new String[] {"--dump", journal.toString(), "--app", "ap"}, new PrintStream(none, true,
        StandardCharsets.UTF_8), System.err, false);
    assertThat(none.toString(StandardCharsets.UTF_8).lines()).noneMatch(l -> l.startsWith("cycle "));
  }

  /** Two allocations, recorded as they were made or in the opposite order. */
  private Path record(String name, boolean tamper) throws Exception {
    Path out = Files.createDirectories(dir.resolve(name));
    ManualClock clock = new ManualClock(1_000);
    Engine engine = new Engine(GpuModelCatalog.builtIn(), new QueueConfigParser().parse(CONF),
        Topology.open("rack"), clock, EngineSettings.fromConfiguration(CONF));
    DecisionJournal journal = DecisionJournal.open(new JournalSettings(out, 1_000),
        DecisionJournal.header("test#1", clock.nowMillis(), List.of("rack"), CONF));
    var h100 = GpuModelCatalog.builtIn().require("model", "H100-80GB");
    List<List<EngineEvent>> script = List.of(
        List.of(new EngineEvent.NodeAdded(new Node(NodeId.of("n1"), "/r1", 64_000, 16,
            List.of(new Gpu(0, h100, 0, false), new Gpu(1, h100, 0, false))))),
        List.of(new EngineEvent.AppSubmitted(AppId.of("app"), "a", "u", 0),
            new EngineEvent.Demand(AppId.of("app"), "r", Resources.of(1_024, 1).withGpus(1), 1),
            new EngineEvent.Demand(AppId.of("app"), "s", Resources.of(1_024, 1).withGpus(1), 1)),
        List.of());
    for (List<EngineEvent> events : script) {
      clock.advance(100);
      CycleResult r = engine.cycle(events);
      List<Decision> recorded = new ArrayList<>(r.decisions());
      if (tamper) {
        Collections.reverse(recorded);
      }
      journal.cycle(clock.nowMillis(), events, recorded);
    }
    journal.close();
    try (Stream<Path> files = Files.list(out)) {
      return files.findFirst().orElseThrow();
    }
  }
}
