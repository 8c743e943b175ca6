package io.spindle.sim;

import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Reads a job trace (CSV with a header) through a {@link ColumnMapping}. Columns are found by name only, so the
 * shared traces are read as they are, not from a converted copy.
 */
public final class TraceReader {

  private static final DateTimeFormatter SPACE = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

  private final String defaultQueue;

  /** @param defaultQueue the queue of jobs when the mapping has no queue column */
  public TraceReader(String defaultQueue) {
    this.defaultQueue = defaultQueue;
  }

  /** Reads {@code file}; with a {@code null} mapping the preset is detected from the header. */
  public Trace read(Path file, ColumnMapping mapping) {
    return read(CsvTable.read(file), mapping);
  }

  public Trace read(CsvTable t, ColumnMapping mapping) {
    if (mapping == null) {
      mapping = ColumnMapping.detect(new LinkedHashSet<>(t.columnNames()));
      if (mapping == null) {
        throw new IllegalArgumentException(t.source() + ": columns " + t.columnNames() + " match no preset "
            + "(philly, openb, generic); map them with --columns=PRESET and/or --col-<field>=<column>");
      }
    }
    for (String c : mapping.required()) {
      t.column(c); // Names the missing column and the ones the file has.
    }
    List<SimJob> jobs = new ArrayList<>();
    Map<String, Integer> dropped = new LinkedHashMap<>();
    for (int i = 0; i < t.size(); i++) {
      try {
        jobs.add(row(t, i, mapping));
      } catch (IllegalArgumentException bad) {
        throw new IllegalArgumentException(t.source() + " row " + (i + 1) + ": " + bad.getMessage(), bad);
      }
    }
    // Stable: jobs submitted in the same instant keep their order in the file.
    jobs.sort(Comparator.comparingLong(SimJob::submitMillis));
    return new Trace(t.source(), mapping, jobs, dropped);
  }

  private SimJob row(CsvTable t, int i, ColumnMapping m) {
    String id = m.id() == null ? "job" + i : t.get(i, m.id());
    long submit = time(t.get(i, m.submit()), m.timeUnit());
    long duration;
    if (m.duration() != null) {
      duration = Math.round(number(t.get(i, m.duration()), m.duration()) * unit(m.durationUnit()));
    } else {
      String startText = m.start() == null ? "" : t.get(i, m.start());
      long start = startText.isEmpty() ? submit : time(startText, m.timeUnit());
      duration = time(t.get(i, m.end()), m.timeUnit()) - start;
    }
    String queue = m.queue() == null ? defaultQueue : t.get(i, m.queue());
    String user = m.user() == null ? "u-" + queue : t.get(i, m.user());
    int gpus = (int) number(t.get(i, m.gpus()), m.gpus());
    int milli = m.gpuMilli() == null ? 1000 : (int) number(t.get(i, m.gpuMilli()), m.gpuMilli());
    long vcores = m.vcores() == null ? 0 : (long) number(t.get(i, m.vcores()), m.vcores());
    long memory = m.memory() == null ? 0 : (long) number(t.get(i, m.memory()), m.memory());
    String model = m.gpuModel() == null ? null : t.get(i, m.gpuModel());
    if (model != null && model.contains("|")) {
      model = null; // Several allowed types: the engine's Resources names one model at most; any model is looser.
    }
    return new SimJob(id, submit, duration, queue, user, gpus, milli, vcores, memory, model);
  }

  private static double number(String v, String column) {
    try {
      return Double.parseDouble(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("column '" + column + "' is '" + v + "', not a number");
    }
  }

  private static long unit(String u) {
    return u.equals("ms") ? 1 : 1000;
  }

  /** A time: a number in {@code unit}, or a date-time in UTC ({@code 2017-09-04 10:30:41} or ISO-8601). */
  static long time(String v, String unit) {
    if (!v.isEmpty() && (Character.isDigit(v.charAt(0)) || v.charAt(0) == '-') && v.indexOf('-', 1) < 0) {
      return Math.round(Double.parseDouble(v) * unit(unit));
    }
    try {
      return LocalDateTime.parse(v, SPACE).toInstant(ZoneOffset.UTC).toEpochMilli();
    } catch (DateTimeParseException notSpace) {
      try {
        return LocalDateTime.parse(v).toInstant(ZoneOffset.UTC).toEpochMilli();
      } catch (DateTimeParseException notLocal) {
        try {
          return Instant.parse(v).toEpochMilli();
        } catch (DateTimeParseException e) {
          throw new IllegalArgumentException("time '" + v + "' is neither a number nor a date-time "
              + "(yyyy-MM-dd HH:mm:ss, UTC)");
        }
      }
    }
  }
}
