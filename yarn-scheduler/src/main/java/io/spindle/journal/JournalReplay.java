package io.spindle.journal;

import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.ManualClock;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueConfigParser;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Feeds a decision journal to a fresh engine, built as its header says, on a {@link ManualClock} set to each
 * cycle's recorded time, and checks that every cycle makes exactly the recorded decisions (record equality, in
 * order). The engine is deterministic, so any difference means the engine's code, its configuration or the
 * journal differs from what ran. It stops at the first difference (the states differ from there on), at a gap (the
 * state after lost entries is unknown) or at the end.
 */
public final class JournalReplay {

  /**
   * Where the replay first differed from the journal.
   *
   * @param entry the entry's position in the file (the header is 1)
   * @param cycle the cycle's number counted from the engine's first (0 for an entry that is not a cycle)
   * @param events the events the cycle was given
   * @param expected the decisions the journal holds
   * @param actual the decisions the replayed engine made
   * @param problem what differs, in words
   */
  public record Mismatch(long entry, long cycle, long timeMillis, List<EngineEvent> events, List<Decision> expected,
      List<Decision> actual, String problem) {}

  /**
   * What a replay went through and found.
   *
   * @param cycles cycles replayed, of them {@code idleCycles} with no event and no decision
   * @param refusedEvents events the engine refused (as it did when it ran: a driver's duplicate or late event)
   * @param lostEntries non-zero: the journal has a gap after the entries replayed and the rest was not checked
   * @param closed the journal ends with the scheduler's end entry (else it was cut short: a crash, a write error)
   * @param unreadable why the file could not be read to its end (a damaged block; entries after it were not
   *     checked), or {@code null}
   * @param mismatch the first difference, or {@code null}
   */
  public record Result(JournalEntry.Header header, long cycles, long idleCycles, long events, long decisions,
      long refusedEvents, long reconfigurations, long restores, long lostEntries, boolean closed, String unreadable,
      Mismatch mismatch) {

    /**
     * Every entry replayed with the same decisions, none was lost and the file read to its end (a file cut off in
     * its last block reads to an end too: see {@link #closed}).
     */
    public boolean identical() {
      return mismatch == null && lostEntries == 0 && unreadable == null;
    }
  }

  private final JournalEntry.Header header;
  private final ManualClock clock;
  private final Engine engine;
  private long entry = 1;
  private long cycles;
  private long idleCycles;
  private long events;
  private long decisions;
  private long refusedEvents;
  private long reconfigurations;
  private long restores;

  private JournalReplay(JournalEntry.Header header) {
    this.header = header;
    this.clock = new ManualClock(header.clockStartMillis());
    // As SpindleScheduler builds its engine.
    this.engine = new Engine(GpuModelCatalog.builtIn(), new QueueConfigParser().parse(header.configuration()),
        Topology.open(header.topologyLevels().toArray(String[]::new)), clock,
        EngineSettings.fromConfiguration(header.configuration()));
  }

  /**
   * Replays the journal at {@code path}.
   *
   * @throws IOException when it is not a decision journal this code can read
   * @throws IllegalArgumentException when the engine cannot be built from its header (not the configuration the
   *     scheduler ran with, or another Spindle version)
   */
  public static Result replay(Path path) throws IOException {
    try (JournalReader reader = JournalReader.open(path)) {
      JournalReplay replay = new JournalReplay(reader.header());
      while (true) {
        Optional<JournalEntry> next;
        try {
          next = reader.next();
        } catch (IOException unreadable) {
          return replay.result(0, false, unreadable.getMessage(), null);
        }
        if (next.isEmpty()) {
          return replay.result(0, false, null, null);
        }
        replay.entry++;
        JournalEntry e = next.get();
        if (e instanceof JournalEntry.End end) {
          return replay.result(end.lostEntries(), true, null, null);
        }
        if (e instanceof JournalEntry.Gap gap) {
          return replay.result(gap.lostEntries(), false, null, null);
        }
        Mismatch m = replay.apply(e);
        if (m != null) {
          return replay.result(0, false, null, m);
        }
      }
    }
  }

  private Result result(long lost, boolean closed, String unreadable, Mismatch mismatch) {
    return new Result(header, cycles, idleCycles, events, decisions, refusedEvents, reconfigurations, restores, lost,
        closed, unreadable, mismatch);
  }

  private Mismatch apply(JournalEntry e) {
    if (e instanceof JournalEntry.Cycle c) {
      return cycle(c);
    } else if (e instanceof JournalEntry.Reconfigure r) {
      reconfigurations++;
      try {
        engine.reconfigure(new QueueConfigParser().parse(r.configuration()));
        return null;
      } catch (RuntimeException refused) {
        return mismatch(0, clock.nowMillis(), "the scheduler took a queue reconfiguration that the replay refuses: "
            + refused);
      }
    } else if (e instanceof JournalEntry.Restore r) {
      restores++;
      if (r.timeMillis() < clock.nowMillis()) {
        return mismatch(0, r.timeMillis(), "the restore's time runs backwards from " + clock.nowMillis());
      }
      clock.set(r.timeMillis());
      String failure;
      try {
        engine.restore(r.state(), r.allocationIds()::get);
        failure = null;
      } catch (RuntimeException ex) {
        failure = ex.toString();
      }
      return Objects.equals(failure, r.failure()) ? null : mismatch(0, r.timeMillis(), "the restore "
          + (r.failure() == null ? "succeeded" : "failed with " + r.failure()) + " when the scheduler ran it; in the "
          + "replay it " + (failure == null ? "succeeded" : "failed with " + failure));
    }
    throw new IllegalArgumentException("unknown journal entry " + e);
  }

  private Mismatch cycle(JournalEntry.Cycle c) {
    cycles++;
    events += c.events().size();
    decisions += c.decisions().size();
    if (c.idle()) {
      idleCycles++;
    }
    if (c.timeMillis() < clock.nowMillis()) {
      return new Mismatch(entry, cycles, c.timeMillis(), c.events(), c.decisions(), List.of(),
          "the cycle's time runs backwards from " + clock.nowMillis());
    }
    clock.set(c.timeMillis());
    CycleResult result;
    try {
      result = engine.cycle(c.events(), (event, problem) -> refusedEvents++);
    } catch (RuntimeException ex) {
      return new Mismatch(entry, cycles, c.timeMillis(), c.events(), c.decisions(), List.of(),
          "the replayed cycle failed: " + ex);
    }
    if (result.decisions().equals(c.decisions())) {
      return null;
    }
    return new Mismatch(entry, cycles, c.timeMillis(), c.events(), c.decisions(), result.decisions(),
        firstDifference(c.decisions(), result.decisions()));
  }

  private Mismatch mismatch(long cycle, long timeMillis, String problem) {
    return new Mismatch(entry, cycle, timeMillis, List.of(), List.of(), List.of(), problem);
  }

  static String firstDifference(List<Decision> expected, List<Decision> actual) {
    int n = Math.min(expected.size(), actual.size());
    for (int i = 0; i < n; i++) {
      if (!expected.get(i).equals(actual.get(i))) {
        return "decision " + (i + 1) + " differs";
      }
    }
    return expected.size() > actual.size()
        ? "the replay made " + (expected.size() - actual.size()) + " decisions fewer, from decision " + (n + 1)
        : "the replay made " + (actual.size() - expected.size()) + " decisions more, from decision " + (n + 1);
  }
}
