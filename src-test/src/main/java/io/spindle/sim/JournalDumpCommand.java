package io.spindle.sim;

import io.spindle.core.engine.EngineEvent;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.Node;
import io.spindle.journal.JournalEntry;
import io.spindle.journal.JournalReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * {@code scripts/spindle-sim --dump JOURNAL [--app ID]}: a decision journal as text, one line per event and decision,
 * so an admin can read what the scheduler was told and what it decided, cycle by cycle, without replaying it. With
 * {@code --app}, only the lines that name that application (and the cycles that have any).
 *
 * <p>Exit status: 0 the whole journal was read; 3 it ends early (damaged, or entries were lost where it says).
 */
final class JournalDumpCommand {

  static final int COMPLETE = 0;
  static final int INCOMPLETE = 3;

  private JournalDumpCommand() {}

  static int run(Path journal, String app, PrintStream out) throws IOException {
    long cycle = 0;
    boolean gaps = false;
    try (JournalReader reader = JournalReader.open(journal)) {
      JournalEntry.Header h = reader.header();
      out.println("# Decision journal " + journal + ", written by " + h.writtenBy() + " (Spindle "
          + (h.spindleVersion() == null ? "version unknown" : h.spindleVersion()) + "), engine built "
          + Instant.ofEpochMilli(h.startedMillis()) + (app == null ? "" : "; lines naming " + app));
      out.println("# '>' an event the engine was given, '<' a decision it made");
      while (true) {
        Optional<JournalEntry> next;
        try {
          next = reader.next();
        } catch (IOException damaged) {
          out.println("! " + damaged.getMessage());
          return INCOMPLETE;
        }
        if (next.isEmpty()) {
          break;
        }
        JournalEntry e = next.get();
        if (e instanceof JournalEntry.Cycle c) {
          cycle++;
          printCycle(cycle, c, app, out);
        } else if (e instanceof JournalEntry.Reconfigure r) {
          out.println("queues reconfigured (" + r.configuration().size() + " configuration entries)");
        } else if (e instanceof JournalEntry.Restore r) {
          out.println("state restored at " + Instant.ofEpochMilli(r.timeMillis()) + ": "
              + r.state().reservations().size() + " reservations, " + r.allocationIds().size()
              + " recovered containers" + (r.failure() == null ? "" : "; FAILED: " + r.failure()));
        } else if (e instanceof JournalEntry.Gap g) {
          gaps = true;
          out.println("! " + g.lostEntries() + " entries lost here (the writer fell behind)");
        } else if (e instanceof JournalEntry.End end) {
          out.println("# closed at " + Instant.ofEpochMilli(end.closedMillis()) + ", " + cycle + " cycles"
              + (end.lostEntries() == 0 ? "" : ", " + end.lostEntries() + " entries lost in all"));
          return gaps || end.lostEntries() > 0 ? INCOMPLETE : COMPLETE;
        }
      }
    }
    out.println("# no end entry after " + cycle + " cycles: the scheduler did not close the journal");
    return gaps ? INCOMPLETE : COMPLETE;
  }

  private static void printCycle(long n, JournalEntry.Cycle c, String app, PrintStream out) {
    List<String> events = matching(c.events(), app);
    List<String> decisions = matching(c.decisions(), app);
    if (events.isEmpty() && decisions.isEmpty()) {
      return; // Idle, or nothing about the application asked for.
    }
    out.println("cycle " + n + " at " + Instant.ofEpochMilli(c.timeMillis()));
    events.forEach(line -> out.println("  > " + line));
    decisions.forEach(line -> out.println("  < " + line));
  }

  /** Records print as {@code Type[field=value, ...]}; an application is named by its id in a field. */
  private static List<String> matching(List<?> items, String app) {
    return items.stream().map(JournalDumpCommand::describe)
        .filter(s -> app == null || s.contains("=" + app + ",") || s.contains("=" + app + "]")).toList();
  }

  /** As the record prints itself, except a node: its GPUs by model, not each GPU's whole model catalog entry. */
  static String describe(Object item) {
    if (item instanceof EngineEvent.NodeAdded added) {
      Node n = added.node();
      Map<String, int[]> models = new TreeMap<>();
      for (Gpu g : n.gpus()) {
        int[] counts = models.computeIfAbsent(g.model().name(), k -> new int[2]);
        counts[0]++;
        counts[1] += g.migEnabled() ? 1 : 0;
      }
      StringBuilder gpus = new StringBuilder();
      models.forEach((model, c) -> gpus.append(gpus.isEmpty() ? "" : ", ").append(c[0]).append(" x ").append(model)
          .append(c[1] == 0 ? "" : " (" + c[1] + " in MIG mode)"));
      return "NodeAdded[id=" + n.id() + ", location=" + n.location() + ", memoryMb=" + n.memoryMb() + ", vcores="
          + n.vcores() + ", gpus=" + (gpus.isEmpty() ? "none" : gpus) + "]";
    }
    return String.valueOf(item);
  }
}
