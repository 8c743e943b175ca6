package io.spindle.journal;

import io.spindle.core.engine.Decision;
import io.spindle.core.engine.DurableState;
import io.spindle.core.engine.EngineEvent;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Where a driver records every call that changes its engine, in the order it made them: the journal a replay
 * rebuilds the engine from ({@link JournalReplay}). Calls return at once; writing happens elsewhere
 * ({@link JournalWriter}). The driver calls it while it holds the engine, so that the journal's order is the
 * engine's.
 */
public interface DecisionJournal extends AutoCloseable {

  /** Journaling switched off: records nothing. */
  DecisionJournal OFF = new DecisionJournal() {
    @Override
    public void cycle(long timeMillis, List<? extends EngineEvent> events, List<Decision> decisions) {}

    @Override
    public void reconfigured(Map<String, String> configuration) {}

    @Override
    public void restored(long timeMillis, DurableState state, Map<String, Long> allocationIds, String failure) {}

    @Override
    public void close() {}
  };

  /** A journal as {@code settings} say: {@link #OFF} unless a directory is set, else one file for this engine. */
  static DecisionJournal open(JournalSettings settings, JournalEntry.Header header) {
    return settings.enabled() ? JournalWriter.start(settings, header) : OFF;
  }

  /** Prefixes of the adapter's keys: ZooKeeper, HTTP, metrics and the journal's own. */
  List<String> ADAPTER_KEYS = List.of("yarn.scheduler.spindle.zk.", "yarn.scheduler.spindle.http.",
      "yarn.scheduler.spindle.metrics.", "yarn.scheduler.spindle.journal.");

  /**
   * The header of a journal for an engine built now, with a clock showing {@code clockStartMillis}, from
   * {@code entries} and the topology {@code levels}.
   *
   * @param writtenBy names the scheduler instance (host, HA id, process)
   */
  static JournalEntry.Header header(String writtenBy, long clockStartMillis, List<String> levels,
      Map<String, String> entries) {
    return new JournalEntry.Header(JournalEntry.FORMAT_VERSION, writtenBy, spindleVersion(),
        System.currentTimeMillis(), clockStartMillis, levels, engineConfiguration(entries));
  }

  /** The version of the scheduler JAR these classes come from (Maven's pom.properties in it), or {@code null}. */
  private static String spindleVersion() {
    try (InputStream in = DecisionJournal.class.getResourceAsStream(
        "/META-INF/maven/io.spindle/spindle-yarn-scheduler/pom.properties")) {
      if (in == null) {
        return null; // Classes from a build directory, not the JAR.
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * The entries an engine is built from, as a header records them: the queue keys
   * ({@code yarn.scheduler.capacity.*}) and Spindle's ({@code yarn.scheduler.spindle.*}) but the adapter's own
   * ({@link #ADAPTER_KEYS}), which the engine never reads — and {@code zk.auth} holds a password that has no place
   * in a file kept for debugging.
   */
  static Map<String, String> engineConfiguration(Map<String, String> entries) {
    Map<String, String> out = new TreeMap<>();
    entries.forEach((key, value) -> {
      boolean adapterOnly = ADAPTER_KEYS.stream().anyMatch(key::startsWith);
      if (!adapterOnly && value != null) {
        out.put(key, value);
      }
    });
    return out;
  }

  /** The engine ran a cycle at {@code timeMillis} (its clock, the same all cycle long) with these events. */
  void cycle(long timeMillis, List<? extends EngineEvent> events, List<Decision> decisions);

  /**
   * The engine took the queue tree parsed from {@code entries} (recorded as {@link #engineConfiguration} keeps
   * them).
   */
  void reconfigured(Map<String, String> entries);

  /**
   * The engine restored {@code state}; {@code allocationIds} are the recovered containers it looked up
   * ({@link RecordingLookup#found}), {@code failure} what the restore threw or {@code null}.
   */
  void restored(long timeMillis, DurableState state, Map<String, Long> allocationIds, String failure);

  /** Writes what is queued and ends the journal; waits a few seconds at most. */
  @Override
  void close();
}
