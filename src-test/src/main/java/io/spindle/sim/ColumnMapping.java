package io.spindle.sim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which trace column holds which job field, by header name, so a trace is read as it is and another trace with
 * other column names runs with flags only ({@code --col-submit=submission_time --col-gpus=num_gpu ...}).
 *
 * <p>A job's run time is either a {@code duration} column or {@code end} minus {@code start} (minus the submit
 * time where {@code start} is absent or empty — OpenB's pending pods have no scheduled time). A {@code null}
 * column is absent: {@code id} defaults to {@code job<row>}, {@code queue} to the {@code --queue} default,
 * {@code user} to {@code u-<queue>} (as the HeliosArtifact adapter fills it), {@code gpuMilli} to whole GPUs.
 *
 * @param timeUnit unit of numeric submit/start/end values: {@code s} or {@code ms}; text values are read as
 *     {@code yyyy-MM-dd HH:mm:ss} (or ISO-8601) in UTC
 * @param durationUnit unit of the duration column: {@code s} or {@code ms}
 */
public record ColumnMapping(String preset, String id, String submit, String duration, String start, String end,
    String gpus, String gpuMilli, String queue, String user, String vcores, String memory, String gpuModel,
    String timeUnit, String durationUnit) {

  /** Microsoft Philly job table (the Pollux artifact's processing). */
  public static final ColumnMapping PHILLY = new ColumnMapping("philly", null, "timestamp", "duration", null, null,
      "num_gpus", null, "cluster", null, null, null, null, "s", "s");
  /** Alibaba OpenB pod lists: run time from scheduling to deletion, CPU in milli-cores (one vcore each). */
  public static final ColumnMapping OPENB = new ColumnMapping("openb", "name", "creation_time", null,
      "scheduled_time", "deletion_time", "num_gpu", "gpu_milli", null, null, "cpu_milli", "memory_mib", "gpu_spec",
      "s", "s");
  /** A plain job table: {@code job_id,submission_time,duration,num_gpu}. */
  public static final ColumnMapping GENERIC = new ColumnMapping("generic", "job_id", "submission_time", "duration",
      null, null, "num_gpu", null, null, null, null, null, null, "s", "s");

  static final List<ColumnMapping> PRESETS = List.of(PHILLY, OPENB, GENERIC);

  /** The flag suffixes ({@code --col-<name>}) and what they set. */
  static final List<String> FIELDS = List.of("id", "submit", "duration", "start", "end", "gpus", "gpu-milli", "queue",
      "user", "vcores", "memory", "gpu-model");

  public ColumnMapping {
    if (submit == null) {
      throw new IllegalArgumentException("column mapping: a submit-time column is required (--col-submit)");
    }
    if (duration == null && end == null) {
      throw new IllegalArgumentException("column mapping: a duration column (--col-duration) or an end-time column "
          + "(--col-end) is required");
    }
    if (gpus == null) {
      throw new IllegalArgumentException("column mapping: a GPU-count column is required (--col-gpus)");
    }
    requireUnit("time unit", timeUnit);
    requireUnit("duration unit", durationUnit);
  }

  private static void requireUnit(String what, String unit) {
    if (!"s".equals(unit) && !"ms".equals(unit)) {
      throw new IllegalArgumentException("column mapping: " + what + " is s or ms, not '" + unit + "'");
    }
  }

  public static ColumnMapping preset(String name) {
    for (ColumnMapping p : PRESETS) {
      if (p.preset().equals(name)) {
        return p;
      }
    }
    throw new IllegalArgumentException("unknown column preset '" + name + "'; presets are philly, openb, generic");
  }

  /** The first preset whose columns the header has, or {@code null}. */
  public static ColumnMapping detect(Set<String> header) {
    for (ColumnMapping p : PRESETS) {
      if (header.containsAll(p.columns().values())) {
        return p;
      }
    }
    return null;
  }

  /**
   * This mapping with fields replaced by {@code --col-<field>=<column>} flags ({@code none} removes an optional
   * column) and units by {@code time-unit} / {@code duration-unit}.
   */
  public ColumnMapping with(Map<String, String> overrides) {
    Map<String, String> f = new LinkedHashMap<>(columns());
    String tu = timeUnit;
    String du = durationUnit;
    for (Map.Entry<String, String> e : overrides.entrySet()) {
      String v = e.getValue().equals("none") ? null : e.getValue();
      switch (e.getKey()) {
        case "time-unit" -> tu = v;
        case "duration-unit" -> du = v;
        default -> {
          if (!FIELDS.contains(e.getKey())) {
            throw new IllegalArgumentException("unknown column field '" + e.getKey() + "'; fields are " + FIELDS);
          }
          f.put(e.getKey(), v);
        }
      }
    }
    if (f.get("duration") != null && overrides.containsKey("duration")) {
      f.put("end", null); // An explicit duration column wins over a preset's end - start.
    }
    return new ColumnMapping(overrides.isEmpty() ? preset : preset + "+flags", f.get("id"), f.get("submit"),
        f.get("duration"), f.get("start"), f.get("end"), f.get("gpus"), f.get("gpu-milli"), f.get("queue"),
        f.get("user"), f.get("vcores"), f.get("memory"), f.get("gpu-model"), tu, du);
  }

  /** Field name (flag suffix) to column, for the columns that are set, in {@link #FIELDS} order. */
  public Map<String, String> columns() {
    String[] values = {id, submit, duration, start, end, gpus, gpuMilli, queue, user, vcores, memory, gpuModel};
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i < values.length; i++) {
      if (values[i] != null) {
        out.put(FIELDS.get(i), values[i]);
      }
    }
    return out;
  }

  /** Columns that must be in the header. */
  List<String> required() {
    return new ArrayList<>(columns().values());
  }
}
