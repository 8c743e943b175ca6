package io.spindle.spark;

import java.util.Locale;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.spark.SparkConf;

/**
 * An elastic executor gang, as the application's tags declare it ({@code spindle.gang.min=M}, optionally
 * {@code spindle.gang.step=S}, in {@code spark.yarn.tags}), checked against Spark's own executor bounds.
 *
 * <p>Spindle reads the tags at submission, before the driver runs, so the plugin cannot derive them from Spark's
 * settings; it can only refuse to start when the two disagree. A minimum above Spark's would leave Spindle holding
 * executors that dynamic allocation releases and never reasks for (the gang would not start again after a preemption
 * until Spark wants M at once); one below would let Spindle shrink the job under the executors Spark keeps for it.
 *
 * @param min the fewest executors Spindle leaves the job: {@code spark.dynamicAllocation.minExecutors}
 * @param step executors above {@code min} come and go this many at a time
 */
record ElasticExecutors(int min, int step) {

  static final String TAGS = "spark.yarn.tags";
  static final String MIN_TAG = "spindle.gang.min";
  static final String STEP_TAG = "spindle.gang.step";
  static final String EXECUTOR_GANG_TAG = "spindle.gang=executors";
  static final String DYNAMIC = "spark.dynamicAllocation.enabled";
  static final String DYNAMIC_MIN = "spark.dynamicAllocation.minExecutors";
  static final String DYNAMIC_MAX = "spark.dynamicAllocation.maxExecutors";
  static final String INSTANCES = "spark.executor.instances";
  static final String DECOMMISSION = "spark.decommission.enabled";
  static final String STORAGE_DECOMMISSION = "spark.storage.decommission.enabled";

  /**
   * The elastic gang {@code conf} declares, if any.
   *
   * @param warn told of settings that work but are probably not what the user wants
   * @throws IllegalArgumentException naming the keys that disagree; the application then stops at start
   */
  static Optional<ElasticExecutors> check(SparkConf conf, Consumer<String> warn) {
    Integer min = tag(conf, MIN_TAG);
    boolean dynamic = conf.getBoolean(DYNAMIC, false);
    if (min == null) {
      if (dynamic && tagged(conf, EXECUTOR_GANG_TAG)) {
        warn.accept(EXECUTOR_GANG_TAG + " with dynamic allocation makes only Spark's first request a gang; add "
            + MIN_TAG + "=<" + DYNAMIC_MIN + "> to " + TAGS + " for an elastic gang that grows and shrinks with it");
      }
      return Optional.empty();
    }
    Integer tagStep = tag(conf, STEP_TAG);
    int step = tagStep == null ? 1 : tagStep;
    if (min < 1 || step < 1) {
      throw new IllegalArgumentException(TAGS + ": " + MIN_TAG + " and " + STEP_TAG + " must be at least 1");
    }
    if (dynamic) {
      int sparkMin = conf.getInt(DYNAMIC_MIN, 0);
      if (sparkMin != min) {
        throw new IllegalArgumentException(TAGS + " has " + MIN_TAG + "=" + min + " but " + DYNAMIC_MIN + " is "
            + sparkMin + (conf.contains(DYNAMIC_MIN) ? "" : " (not set)") + ": Spindle's minimum of the executor gang "
            + "and dynamic allocation's must be the same number; set both");
      }
      int max = conf.getInt(DYNAMIC_MAX, Integer.MAX_VALUE);
      if (max != Integer.MAX_VALUE && (max - min) % step != 0) {
        throw new IllegalArgumentException(TAGS + " has " + STEP_TAG + "=" + step + ", which does not divide the "
            + (max - min) + " executors between " + DYNAMIC_MIN + "=" + min + " and " + DYNAMIC_MAX + "=" + max
            + ": Spindle would never grant the last ones");
      }
    } else {
      int instances = conf.getInt(INSTANCES, 2); // Spark's default on YARN
      if (min > instances || (instances - min) % step != 0) {
        throw new IllegalArgumentException(TAGS + " has " + MIN_TAG + "=" + min + ", " + STEP_TAG + "=" + step
            + " but " + INSTANCES + "=" + instances + ": the minimum must be at most the executors asked for, and "
            + "the step must divide the difference");
      }
    }
    if (!conf.getBoolean(DECOMMISSION, false)) {
      throw new IllegalArgumentException(TAGS + " makes the executor gang elastic (" + MIN_TAG + "=" + min + "), "
          + "which needs " + DECOMMISSION + "=true: Spindle takes executors above the minimum back, and only Spark's "
          + "executor decommissioning lets them go without losing their shuffle and cached blocks");
    }
    if (!conf.getBoolean(STORAGE_DECOMMISSION, false)) {
      warn.accept(STORAGE_DECOMMISSION + " is false: executors Spindle takes back leave without moving their shuffle "
          + "and cached blocks, which Spark then recomputes");
    }
    return Optional.of(new ElasticExecutors(min, step));
  }

  /** The value of tag {@code name} in {@code spark.yarn.tags}; YARN lower-cases tags, so case does not matter. */
  private static Integer tag(SparkConf conf, String name) {
    String prefix = name + "=";
    for (String tag : conf.get(TAGS, "").split(",")) {
      String t = tag.strip().toLowerCase(Locale.ROOT);
      if (t.startsWith(prefix)) {
        String value = t.substring(prefix.length()).strip();
        try {
          return Integer.parseInt(value);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(TAGS + ": " + name + "=" + value + " is not a number");
        }
      }
    }
    return null;
  }

  private static boolean tagged(SparkConf conf, String tag) {
    for (String t : conf.get(TAGS, "").split(",")) {
      if (t.strip().toLowerCase(Locale.ROOT).replace(" ", "").equals(tag)) {
        return true;
      }
    }
    return false;
  }
}
