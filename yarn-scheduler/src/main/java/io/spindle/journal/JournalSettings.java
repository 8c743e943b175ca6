package io.spindle.journal;

import java.nio.file.Path;
import java.util.Map;

/**
 * Where the decision journal goes and how much may wait to be written. Keys and defaults are documented in the admin
 * guide.
 *
 * @param dir the directory journals are written to; {@code null}: no journal (the default)
 * @param queueLimit how many items (events plus decisions; an entry counts at least one) may wait for the writer
 *     before entries are dropped and the journal gets a gap; an entry is always taken when nothing waits
 */
public record JournalSettings(Path dir, long queueLimit) {

  public static final String DIR = "yarn.scheduler.spindle.journal.dir";
  public static final String QUEUE_LIMIT = "yarn.scheduler.spindle.journal.queue-limit";
  public static final long DEFAULT_QUEUE_LIMIT = 200_000;

  public JournalSettings {
    if (queueLimit < 1) {
      throw new IllegalArgumentException(QUEUE_LIMIT + " must be at least 1, not " + queueLimit);
    }
  }

  public static JournalSettings from(Map<String, String> conf) {
    String dir = conf.getOrDefault(DIR, "").strip();
    String limit = conf.getOrDefault(QUEUE_LIMIT, "").strip();
    long queueLimit;
    try {
      queueLimit = limit.isEmpty() ? DEFAULT_QUEUE_LIMIT : Long.parseLong(limit);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(QUEUE_LIMIT + " must be a whole number, not '" + limit + "'", e);
    }
    return new JournalSettings(dir.isEmpty() ? null : Path.of(dir), queueLimit);
  }

  public boolean enabled() {
    return dir != null;
  }
}
