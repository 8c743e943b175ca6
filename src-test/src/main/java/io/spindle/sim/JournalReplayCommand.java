package io.spindle.sim;

import io.spindle.journal.JournalEntry;
import io.spindle.journal.JournalReplay;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/**
 * {@code scripts/spindle-sim --replay JOURNAL}: replays a ResourceManager's decision journal through the engine on
 * virtual time ({@link JournalReplay}) and says whether it decided the same, and if not, where and what.
 *
 * <p>Exit status: 0 every decision equal; 1 the replay decided differently; 3 the journal lost entries or is damaged
 * (what came before matched, the rest could not be checked).
 */
final class JournalReplayCommand {

  static final int IDENTICAL = 0;
  static final int DIFFERENT = 1;
  static final int INCOMPLETE = 3;
  /** Decisions and events listed per side at a difference; the rest is counted. */
  private static final int SHOWN = 40;

  private JournalReplayCommand() {}

  static int run(Path journal, PrintStream out) throws IOException {
    JournalReplay.Result r = JournalReplay.replay(journal);
    JournalEntry.Header h = r.header();
    out.println("Decision journal " + journal);
    out.println("  written by " + h.writtenBy() + " with Spindle " + (h.spindleVersion() == null ? "(version unknown)"
        : h.spindleVersion()) + ", format " + h.formatVersion() + "; engine built " + Instant.ofEpochMilli(
        h.startedMillis()) + ", topology levels " + h.topologyLevels() + ", " + h.configuration().size()
        + " configuration entries");
    out.println("Replayed " + r.cycles() + " cycles (" + r.idleCycles() + " idle), " + r.events() + " events, "
        + r.decisions() + " decisions, " + r.reconfigurations() + " queue reconfigurations, " + r.restores()
        + " restores" + (r.refusedEvents() == 0 ? "" : "; " + r.refusedEvents()
        + " events refused by the engine, as when it ran"));
    JournalReplay.Mismatch m = r.mismatch();
    if (m != null) {
      printMismatch(m, out);
      return DIFFERENT;
    }
    if (r.lostEntries() > 0) {
      out.println("INCOMPLETE: " + r.lostEntries() + " entries were lost after cycle " + r.cycles() + " (the writer "
          + "fell behind, or an entry could not be written; the ResourceManager's log says which). Every decision "
          + "before was the same; nothing after the gap was checked.");
      return INCOMPLETE;
    }
    if (r.unreadable() != null) {
      out.println("INCOMPLETE: " + r.unreadable() + ". Every decision before was the same; nothing after it was "
          + "checked.");
      return INCOMPLETE;
    }
    out.println("IDENTICAL: every one of the " + r.decisions() + " decisions was made again, equal and in order.");
    if (!r.closed()) {
      out.println("  The journal has no end entry: the scheduler did not close it (the ResourceManager died, or "
          + "writing failed). It holds a prefix of the run, and that prefix matched.");
    }
    return IDENTICAL;
  }

  private static void printMismatch(JournalReplay.Mismatch m, PrintStream out) {
    out.println("DIFFERENT at " + (m.cycle() == 0 ? "entry " + m.entry() : "cycle " + m.cycle() + " (entry "
        + m.entry() + ")") + ", engine time " + m.timeMillis() + " (" + Instant.ofEpochMilli(m.timeMillis()) + "): "
        + m.problem());
    if (m.cycle() == 0) {
      return;
    }
    out.println("  events of the cycle (" + m.events().size() + "):");
    list(m.events(), null, out);
    out.println("  decisions in the journal (" + m.expected().size() + "):");
    list(m.expected(), m.actual(), out);
    out.println("  decisions of the replay (" + m.actual().size() + "):");
    list(m.actual(), m.expected(), out);
    out.println("  ('*' marks a decision the other side does not have at that position)");
  }

  /** Numbered lines; with {@code other}, a line unlike the other side's at the same position gets a '*'. */
  private static void list(List<?> items, List<?> other, PrintStream out) {
    for (int i = 0; i < Math.min(items.size(), SHOWN); i++) {
      Object item = items.get(i);
      boolean differs = other != null && (i >= other.size() || !other.get(i).equals(item));
      out.println("  " + (differs ? "* " : "  ") + String.format("%4d ", i + 1) + item); // Records name their type.
    }
    if (items.size() > SHOWN) {
      out.println("         ... " + (items.size() - SHOWN) + " more");
    }
  }
}
