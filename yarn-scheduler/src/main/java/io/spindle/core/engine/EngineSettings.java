package io.spindle.core.engine;

import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.reliability.CheckpointAdvisor;
import io.spindle.core.reliability.FailureRate;
import io.spindle.core.reliability.HealthSettings;
import io.spindle.core.queue.QueueConfigParser;
import java.util.Map;

/**
 * Engine knobs. Each has one default here and one configuration key, documented in the admin guide.
 *
 * @param migReconfigureMillis how long a re-partitioned GPU stays out of service at least (drain, reset, creating
 *     instances): its new instances count only after this and after its node reported them
 *     ({@code yarn.scheduler.spindle.mig.reconfigure-seconds})
 * @param maxMigReconfigurationsPerCycle at most this many GPUs are re-partitioned in one cycle
 *     ({@code yarn.scheduler.spindle.mig.max-reconfigurations-per-cycle})
 * @param reservationTimeoutMillis how long nodes stay held for a waiting gang at least, and all the time they are held
 *     when something on them declared no run time (the drain is unknown); once the reservation is dropped the gang
 *     re-queues and may not reserve again for as long ({@code yarn.scheduler.spindle.gang.reservation-timeout-seconds})
 * @param maxReservations how many gangs may hold reservations at once ({@code yarn.scheduler.spindle.gang.max-reservations})
 * @param reservationMaxDrainMillis the longest a reservation is held while the work on its nodes is expected to
 *     drain: a reservation lasts until its nodes' containers are expected to have ended (their declared run times)
 *     plus a margin, at least {@code reservationTimeoutMillis} and at most this; at or below the timeout, the timeout
 *     alone holds ({@code yarn.scheduler.spindle.gang.reservation-max-drain-seconds})
 * @param reservationLearnedRuntimes where a container declared no run time, plan the drain with the run time learned
 *     from finished applications of the same user and kind ({@link RuntimeEstimates}); off, such a drain is unknown
 *     ({@code yarn.scheduler.spindle.gang.reservation-learned-runtimes}, default off: benchmarks.md)
 * @param strictQueueOrder {@code true}: inside a leaf queue, the first request that cannot be placed stops that leaf
 *     for the cycle (head-of-line blocking, no backfill), as strict FIFO schedulers and the HeliosArtifact simulator
 *     do; {@code false} (the default): it is skipped and the requests behind it may start
 *     ({@code yarn.scheduler.spindle.queue.strict-order}). Exists so that the simulator can reproduce published
 *     no-backfill baselines with the very engine the ResourceManager runs.
 * @param preemption when and how running work is reclaimed for starved requests
 *     ({@code yarn.scheduler.spindle.preemption.*}; off by default)
 * @param registrationSettleMillis for this long after the engine's first cycle, a request is not rejected for being
 *     larger than the nodes registered so far (it waits): nodes register over seconds after a ResourceManager starts
 *     or fails over ({@code yarn.scheduler.spindle.registration-settle-seconds})
 * @param health what failed GPUs cost: quarantine, node drain and hot swap ({@code yarn.scheduler.spindle.health.*})
 * @param shareCandidates on clusters with shared GPUs, how many places (the tightest fits from the indexes) are
 *     compared by fragmentation for each container: more packs a little better and costs placement time
 *     ({@code yarn.scheduler.spindle.placement.share-candidates})
 * @param checkpointAdvice the failure-rate prior and default write time behind the checkpoint interval advised to
 *     applications ({@code yarn.scheduler.spindle.reliability.*}, {@code yarn.scheduler.spindle.checkpoint.*})
 * @param usage usage history: decayed borrowed usage weighing the sharing of idle capacity
 *     ({@code yarn.scheduler.spindle.usage.*}; off by default)
 */
public record EngineSettings(long migReconfigureMillis, int maxMigReconfigurationsPerCycle,
    long reservationTimeoutMillis, int maxReservations, long reservationMaxDrainMillis, boolean reservationLearnedRuntimes, boolean strictQueueOrder,
    PreemptionSettings preemption, long registrationSettleMillis, int shareCandidates,
    CheckpointAdvisor checkpointAdvice, HealthSettings health, UsageSettings usage) {

  public static final String MIG_RECONFIGURE_SECONDS = "yarn.scheduler.spindle.mig.reconfigure-seconds";
  public static final String MAX_MIG_RECONFIGURATIONS_PER_CYCLE =
      "yarn.scheduler.spindle.mig.max-reconfigurations-per-cycle";
  public static final String RESERVATION_TIMEOUT_SECONDS = "yarn.scheduler.spindle.gang.reservation-timeout-seconds";
  public static final String MAX_RESERVATIONS = "yarn.scheduler.spindle.gang.max-reservations";
  public static final String RESERVATION_MAX_DRAIN_SECONDS =
      "yarn.scheduler.spindle.gang.reservation-max-drain-seconds";
  public static final String RESERVATION_LEARNED_RUNTIMES =
      "yarn.scheduler.spindle.gang.reservation-learned-runtimes";
  public static final String STRICT_QUEUE_ORDER = "yarn.scheduler.spindle.queue.strict-order";
  public static final String PREEMPTION_ENABLED = "yarn.scheduler.spindle.preemption.enabled";
  public static final String PREEMPTION_STARVATION_SECONDS = "yarn.scheduler.spindle.preemption.starvation-seconds";
  public static final String PREEMPTION_CHECKPOINT_GRACE_SECONDS =
      "yarn.scheduler.spindle.preemption.checkpoint-grace-seconds";
  public static final String PREEMPTION_MAX_EXTENSIONS = "yarn.scheduler.spindle.preemption.max-extensions";
  public static final String PREEMPTION_MAX_EXTENSION_SECONDS =
      "yarn.scheduler.spindle.preemption.max-extension-seconds";
  public static final String PREEMPTION_MAX_VICTIMS_PER_CYCLE =
      "yarn.scheduler.spindle.preemption.max-victims-per-cycle";
  public static final String REGISTRATION_SETTLE_SECONDS = "yarn.scheduler.spindle.registration-settle-seconds";
  public static final String SHARE_CANDIDATES = "yarn.scheduler.spindle.placement.share-candidates";
  public static final String CHECKPOINT_DEFAULT_WRITE_SECONDS =
      "yarn.scheduler.spindle.checkpoint.default-write-seconds";
  public static final String RELIABILITY_PRIOR_FAILURES_PER_GPU_HOUR =
      "yarn.scheduler.spindle.reliability.prior-failures-per-gpu-hour";
  public static final String RELIABILITY_PRIOR_GPU_HOURS = "yarn.scheduler.spindle.reliability.prior-gpu-hours";
  public static final int DEFAULT_SHARE_CANDIDATES = io.spindle.core.placement.ClusterState.DEFAULT_SHARE_CANDIDATES;
  /** YARN's own wait for nodes to re-register before scheduling after a recovery (scheduling-wait-ms). */
  public static final long DEFAULT_REGISTRATION_SETTLE_MILLIS = 10_000;
  public static final long DEFAULT_RESERVATION_TIMEOUT_MILLIS = 900_000;
  public static final int DEFAULT_MAX_RESERVATIONS = 4;
  /**
   * A week. On the Philly trace gangs wait days for long jobs to drain; with a one-day cap their reservations were
   * dropped before the drain, re-made in a different order, and the worst wait grew (benchmarks.md). Holding is cheap
   * where waiting work declares run times (it backfills the draining nodes), dear where it does not.
   */
  public static final long DEFAULT_RESERVATION_MAX_DRAIN_MILLIS = 604_800_000;
  public static final long DEFAULT_MIG_RECONFIGURE_MILLIS = 30_000;
  public static final int DEFAULT_MAX_MIG_RECONFIGURATIONS_PER_CYCLE = 16;

  public EngineSettings {
    if (migReconfigureMillis < 0) {
      throw new IllegalArgumentException("migReconfigureMillis must not be negative: " + migReconfigureMillis);
    }
    if (reservationTimeoutMillis < 0 || maxReservations < 0 || reservationMaxDrainMillis < 0) {
      throw new IllegalArgumentException("reservation settings must not be negative");
    }
    if (maxMigReconfigurationsPerCycle < 0) {
      throw new IllegalArgumentException(
          "maxMigReconfigurationsPerCycle must not be negative: " + maxMigReconfigurationsPerCycle);
    }
    if (registrationSettleMillis < 0) {
      throw new IllegalArgumentException("registrationSettleMillis must not be negative: " + registrationSettleMillis);
    }
    if (shareCandidates < 1) {
      throw new IllegalArgumentException("shareCandidates must be positive: " + shareCandidates);
    }
    preemption = preemption == null ? PreemptionSettings.defaults() : preemption;
    checkpointAdvice = checkpointAdvice == null ? CheckpointAdvisor.defaults() : checkpointAdvice;
    health = health == null ? HealthSettings.DEFAULT : health;
    usage = usage == null ? UsageSettings.OFF : usage;
  }

  /** Settings without usage history. */
  public EngineSettings(long migReconfigureMillis, int maxMigReconfigurationsPerCycle,
      long reservationTimeoutMillis, int maxReservations, long reservationMaxDrainMillis,
      boolean reservationLearnedRuntimes, boolean strictQueueOrder, PreemptionSettings preemption,
      long registrationSettleMillis, int shareCandidates, CheckpointAdvisor checkpointAdvice, HealthSettings health) {
    this(migReconfigureMillis, maxMigReconfigurationsPerCycle, reservationTimeoutMillis, maxReservations,
        reservationMaxDrainMillis, reservationLearnedRuntimes, strictQueueOrder, preemption, registrationSettleMillis,
        shareCandidates, checkpointAdvice, health, null);
  }

  /** Settings with the default checkpoint advice. */
  public EngineSettings(long migReconfigureMillis, int maxMigReconfigurationsPerCycle,
      long reservationTimeoutMillis, int maxReservations, long reservationMaxDrainMillis,
      boolean reservationLearnedRuntimes, boolean strictQueueOrder, PreemptionSettings preemption,
      long registrationSettleMillis, int shareCandidates) {
    this(migReconfigureMillis, maxMigReconfigurationsPerCycle, reservationTimeoutMillis, maxReservations,
        reservationMaxDrainMillis, reservationLearnedRuntimes, strictQueueOrder, preemption, registrationSettleMillis,
        shareCandidates, null, null);
  }

  /** Settings with preemption as by default (off). */
  public EngineSettings(long migReconfigureMillis, int maxMigReconfigurationsPerCycle,
      long reservationTimeoutMillis, int maxReservations, boolean strictQueueOrder) {
    this(migReconfigureMillis, maxMigReconfigurationsPerCycle, reservationTimeoutMillis, maxReservations,
        DEFAULT_RESERVATION_MAX_DRAIN_MILLIS, false, strictQueueOrder, PreemptionSettings.defaults(),
        DEFAULT_REGISTRATION_SETTLE_MILLIS, DEFAULT_SHARE_CANDIDATES);
  }

  /** Settings with the default queue order (requests that cannot be placed are skipped, not waited behind). */
  public EngineSettings(long migReconfigureMillis, int maxMigReconfigurationsPerCycle,
      long reservationTimeoutMillis, int maxReservations) {
    this(migReconfigureMillis, maxMigReconfigurationsPerCycle, reservationTimeoutMillis,
        maxReservations, false);
  }

  public static EngineSettings defaults() {
    return new EngineSettings(DEFAULT_MIG_RECONFIGURE_MILLIS, DEFAULT_MAX_MIG_RECONFIGURATIONS_PER_CYCLE,
        DEFAULT_RESERVATION_TIMEOUT_MILLIS, DEFAULT_MAX_RESERVATIONS);
  }

  /**
   * Reads the settings from configuration entries (a Hadoop {@code Configuration} handed over as a map); absent keys
   * keep their defaults. A bad value is an {@link IllegalArgumentException} naming the key.
   */
  public static EngineSettings fromConfiguration(Map<String, String> conf) {
    EngineSettings d = defaults();
    long seconds = readLong(conf, MIG_RECONFIGURE_SECONDS, d.migReconfigureMillis() / 1000, 0, 86_400);
    long perCycle = readLong(conf, MAX_MIG_RECONFIGURATIONS_PER_CYCLE, d.maxMigReconfigurationsPerCycle(), 0, 100_000);
    long timeout = readLong(conf, RESERVATION_TIMEOUT_SECONDS, d.reservationTimeoutMillis() / 1000, 1, 604_800);
    long reservations = readLong(conf, MAX_RESERVATIONS, d.maxReservations(), 0, 10_000);
    long maxDrain = readLong(conf, RESERVATION_MAX_DRAIN_SECONDS, d.reservationMaxDrainMillis() / 1000, 0, 2_592_000);
    boolean learned = readBoolean(conf, RESERVATION_LEARNED_RUNTIMES, d.reservationLearnedRuntimes());
    boolean strict = readBoolean(conf, STRICT_QUEUE_ORDER, d.strictQueueOrder());
    PreemptionSettings p = d.preemption();
    PreemptionSettings preemption = new PreemptionSettings(
        readBoolean(conf, PREEMPTION_ENABLED, p.enabled()),
        readLong(conf, PREEMPTION_STARVATION_SECONDS, p.starvationMillis() / 1000, 0, 604_800) * 1000,
        readLong(conf, PREEMPTION_CHECKPOINT_GRACE_SECONDS, p.checkpointGraceMillis() / 1000, 0, 86_400) * 1000,
        (int) readLong(conf, PREEMPTION_MAX_EXTENSIONS, p.maxExtensions(), 0, QueueConfigParser.MAX_EXTENSIONS_LIMIT),
        readLong(conf, PREEMPTION_MAX_EXTENSION_SECONDS, p.maxExtensionMillis() / 1000, 0,
            QueueConfigParser.MAX_EXTENSION_SECONDS_LIMIT) * 1000,
        (int) readLong(conf, PREEMPTION_MAX_VICTIMS_PER_CYCLE, p.maxVictimsPerCycle(), 1, 100_000));
    long settle = readLong(conf, REGISTRATION_SETTLE_SECONDS, d.registrationSettleMillis() / 1000, 0, 3_600);
    long candidates = readLong(conf, SHARE_CANDIDATES, d.shareCandidates(), 1, 1_024);
    CheckpointAdvisor a = d.checkpointAdvice();
    CheckpointAdvisor advice = new CheckpointAdvisor(new FailureRate(
        readDouble(conf, RELIABILITY_PRIOR_FAILURES_PER_GPU_HOUR, a.prior().priorPerGpuHour(), 1e-9, 1),
        readDouble(conf, RELIABILITY_PRIOR_GPU_HOURS, a.prior().priorGpuHours(), 1, 1e12)),
        readLong(conf, CHECKPOINT_DEFAULT_WRITE_SECONDS, a.defaultWriteMillis() / 1000, 0, 86_400) * 1000);
    return new EngineSettings(seconds * 1000, (int) perCycle, timeout * 1000, (int) reservations, maxDrain * 1000,
        learned, strict, preemption, settle * 1000, (int) candidates, advice, health(conf), usage(conf));
  }

  private static UsageSettings usage(Map<String, String> conf) {
    UsageSettings d = UsageSettings.OFF;
    long halfLife = readLong(conf, UsageSettings.HALF_LIFE_SECONDS, d.halfLifeMillis() / 1000, 0, 31_536_000);
    long window = readLong(conf, UsageSettings.WINDOW_SECONDS, d.windowMillis() / 1000, 1, 31_536_000);
    double strength = readDouble(conf, UsageSettings.STRENGTH, d.strength(), 0, 100);
    if (halfLife > window) {
      throw new IllegalArgumentException(UsageSettings.HALF_LIFE_SECONDS + ": " + halfLife
          + " is longer than " + UsageSettings.WINDOW_SECONDS + " (" + window + "): history would be forgotten"
          + " before it had decayed by half");
    }
    return new UsageSettings(halfLife * 1000, window * 1000, strength);
  }

  private static double readDouble(Map<String, String> conf, String key, double dflt, double min, double max) {
    String raw = conf.get(key);
    if (raw == null || raw.isBlank()) {
      return dflt;
    }
    double v;
    try {
      v = Double.parseDouble(raw.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + ": '" + raw + "' is not a number");
    }
    if (!(v >= min && v <= max)) {
      throw new IllegalArgumentException(key + ": " + v + " is outside " + min + ".." + max);
    }
    return v;
  }

  private static boolean readBoolean(Map<String, String> conf, String key, boolean dflt) {
    String raw = conf.get(key);
    if (raw == null || raw.isBlank()) {
      return dflt;
    }
    return switch (raw.strip().toLowerCase(java.util.Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException(key + ": '" + raw + "' is not true or false");
    };
  }

  private static long readLong(Map<String, String> conf, String key, long dflt, long min, long max) {
    String raw = conf.get(key);
    if (raw == null || raw.isBlank()) {
      return dflt;
    }
    long v;
    try {
      v = Long.parseLong(raw.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + ": '" + raw + "' is not a whole number");
    }
    if (v < min || v > max) {
      throw new IllegalArgumentException(key + ": " + v + " is outside " + min + ".." + max);
    }
    return v;
  }

  public EngineSettings withMigReconfigureMillis(long millis) {
    return new EngineSettings(millis, maxMigReconfigurationsPerCycle, reservationTimeoutMillis,
        maxReservations, reservationMaxDrainMillis, reservationLearnedRuntimes, strictQueueOrder, preemption, registrationSettleMillis,
        shareCandidates, checkpointAdvice, health, usage);
  }

  public EngineSettings withReservations(long timeoutMillis, int max) {
    return new EngineSettings(migReconfigureMillis, maxMigReconfigurationsPerCycle, timeoutMillis, max,
        reservationMaxDrainMillis, reservationLearnedRuntimes, strictQueueOrder, preemption, registrationSettleMillis, shareCandidates, checkpointAdvice, health, usage);
  }

  public EngineSettings withReservationMaxDrainMillis(long millis) {
    return new EngineSettings(migReconfigureMillis, maxMigReconfigurationsPerCycle, reservationTimeoutMillis,
        maxReservations, millis, reservationLearnedRuntimes, strictQueueOrder, preemption, registrationSettleMillis, shareCandidates, checkpointAdvice, health, usage);
  }

  public EngineSettings withReservationLearnedRuntimes(boolean learned) {
    return new EngineSettings(migReconfigureMillis, maxMigReconfigurationsPerCycle, reservationTimeoutMillis,
        maxReservations, reservationMaxDrainMillis, learned, strictQueueOrder, preemption, registrationSettleMillis,
        shareCandidates, checkpointAdvice, health, usage);
  }

  public EngineSettings withStrictQueueOrder(boolean strict) {
    return new EngineSettings(migReconfigureMillis, maxMigReconfigurationsPerCycle,
        reservationTimeoutMillis, maxReservations, reservationMaxDrainMillis, reservationLearnedRuntimes, strict, preemption,
        registrationSettleMillis, shareCandidates, checkpointAdvice, health, usage);
  }

  public EngineSettings withPreemption(PreemptionSettings settings) {
    return new EngineSettings(migReconfigureMillis, maxMigReconfigurationsPerCycle,
        reservationTimeoutMillis, maxReservations, reservationMaxDrainMillis, reservationLearnedRuntimes, strictQueueOrder, settings,
        registrationSettleMillis, shareCandidates, checkpointAdvice, health, usage);
  }

  public EngineSettings withRegistrationSettleMillis(long millis) {
    return new EngineSettings(migReconfigureMillis, maxMigReconfigurationsPerCycle,
        reservationTimeoutMillis, maxReservations, reservationMaxDrainMillis, reservationLearnedRuntimes, strictQueueOrder, preemption, millis,
        shareCandidates, checkpointAdvice, health, usage);
  }

  public EngineSettings withShareCandidates(int candidates) {
    return new EngineSettings(migReconfigureMillis, maxMigReconfigurationsPerCycle,
        reservationTimeoutMillis, maxReservations, reservationMaxDrainMillis, reservationLearnedRuntimes, strictQueueOrder, preemption,
        registrationSettleMillis, candidates, checkpointAdvice, health, usage);
  }

  public EngineSettings withCheckpointAdvice(CheckpointAdvisor advice) {
    return new EngineSettings(migReconfigureMillis, maxMigReconfigurationsPerCycle, reservationTimeoutMillis,
        maxReservations, reservationMaxDrainMillis, reservationLearnedRuntimes, strictQueueOrder, preemption,
        registrationSettleMillis, shareCandidates, advice, health, usage);
  }

  public EngineSettings withHealth(HealthSettings settings) {
    return new EngineSettings(migReconfigureMillis, maxMigReconfigurationsPerCycle, reservationTimeoutMillis,
        maxReservations, reservationMaxDrainMillis, reservationLearnedRuntimes, strictQueueOrder, preemption,
        registrationSettleMillis, shareCandidates, checkpointAdvice, settings, usage);
  }

  public EngineSettings withUsage(UsageSettings settings) {
    return new EngineSettings(migReconfigureMillis, maxMigReconfigurationsPerCycle, reservationTimeoutMillis,
        maxReservations, reservationMaxDrainMillis, reservationLearnedRuntimes, strictQueueOrder, preemption,
        registrationSettleMillis, shareCandidates, checkpointAdvice, health, settings);
  }

  private static HealthSettings health(Map<String, String> conf) {
    HealthSettings d = HealthSettings.DEFAULT;
    return new HealthSettings(
        (int) readLong(conf, HealthSettings.QUARANTINE_FAILURES, d.quarantineFailures(), 0, 1_000),
        readLong(conf, HealthSettings.QUARANTINE_WINDOW_SECONDS, d.quarantineWindowMillis() / 1000, 0, 31_536_000) * 1000,
        readLong(conf, HealthSettings.QUARANTINE_SECONDS, d.quarantineMillis() / 1000, 0, 31_536_000) * 1000,
        (int) readLong(conf, HealthSettings.DRAIN_FAILED_GPUS, d.drainFailedGpus(), 0, 1_024),
        readBoolean(conf, HealthSettings.RESTART_IN_DOMAIN, d.restartInDomain()),
        readLong(conf, HealthSettings.SPARE_LEND_SECONDS, d.spareLendMillis() / 1000, 0, 86_400) * 1000);
  }
}
