package io.spindle.core.engine;

import io.spindle.core.placement.FragmentationAwareSlots;
import java.util.Map;
import io.spindle.core.placement.MigSlotPolicy;

/**
 * Engine knobs. Each has one default here and one configuration key, documented in the admin guide.
 *
 * @param migReconfigureMillis how long a re-partitioned GPU stays out of service at least (drain, reset, creating
 *     instances): its new instances count only after this and after its node reported them
 *     ({@code yarn.scheduler.spindle.mig.reconfigure-seconds})
 * @param maxMigReconfigurationsPerCycle at most this many GPUs are re-partitioned in one cycle
 *     ({@code yarn.scheduler.spindle.mig.max-reconfigurations-per-cycle})
 * @param migSlotPolicy where new MIG instances go when GPUs are re-partitioned (not configurable; baselines are
 *     for benchmarks)
 * @param reservationTimeoutMillis how long nodes stay held for a waiting gang before the reservation is dropped and
 *     the gang re-queued ({@code yarn.scheduler.spindle.gang.reservation-timeout-seconds})
 * @param maxReservations how many gangs may hold reservations at once ({@code yarn.scheduler.spindle.gang.max-reservations})
 * @param strictQueueOrder {@code true}: inside a leaf queue, the first request that cannot be placed stops that leaf
 *     for the cycle (head-of-line blocking, no backfill), as strict FIFO schedulers and the HeliosArtifact simulator
 *     do; {@code false} (the default): it is skipped and the requests behind it may start
 *     ({@code yarn.scheduler.spindle.queue.strict-order}). Exists so that the simulator can reproduce published
 *     no-backfill baselines with the very engine the ResourceManager runs.
 */
public record EngineSettings(long migReconfigureMillis, int maxMigReconfigurationsPerCycle, MigSlotPolicy migSlotPolicy,
    long reservationTimeoutMillis, int maxReservations, boolean strictQueueOrder) {

  public static final String MIG_RECONFIGURE_SECONDS = "yarn.scheduler.spindle.mig.reconfigure-seconds";
  public static final String MAX_MIG_RECONFIGURATIONS_PER_CYCLE =
      "yarn.scheduler.spindle.mig.max-reconfigurations-per-cycle";
  public static final String RESERVATION_TIMEOUT_SECONDS = "yarn.scheduler.spindle.gang.reservation-timeout-seconds";
  public static final String MAX_RESERVATIONS = "yarn.scheduler.spindle.gang.max-reservations";
  public static final String STRICT_QUEUE_ORDER = "yarn.scheduler.spindle.queue.strict-order";
  public static final long DEFAULT_RESERVATION_TIMEOUT_MILLIS = 900_000;
  public static final int DEFAULT_MAX_RESERVATIONS = 4;
  public static final long DEFAULT_MIG_RECONFIGURE_MILLIS = 30_000;
  public static final int DEFAULT_MAX_MIG_RECONFIGURATIONS_PER_CYCLE = 16;

  public EngineSettings {
    if (migReconfigureMillis < 0) {
      throw new IllegalArgumentException("migReconfigureMillis must not be negative: " + migReconfigureMillis);
    }
    if (reservationTimeoutMillis < 0 || maxReservations < 0) {
      throw new IllegalArgumentException("reservation settings must not be negative");
    }
    if (maxMigReconfigurationsPerCycle < 0) {
      throw new IllegalArgumentException(
          "maxMigReconfigurationsPerCycle must not be negative: " + maxMigReconfigurationsPerCycle);
    }
  }

  /** Settings with the default queue order (requests that cannot be placed are skipped, not waited behind). */
  public EngineSettings(long migReconfigureMillis, int maxMigReconfigurationsPerCycle, MigSlotPolicy migSlotPolicy,
      long reservationTimeoutMillis, int maxReservations) {
    this(migReconfigureMillis, maxMigReconfigurationsPerCycle, migSlotPolicy, reservationTimeoutMillis,
        maxReservations, false);
  }

  public static EngineSettings defaults() {
    return new EngineSettings(DEFAULT_MIG_RECONFIGURE_MILLIS, DEFAULT_MAX_MIG_RECONFIGURATIONS_PER_CYCLE,
        new FragmentationAwareSlots(), DEFAULT_RESERVATION_TIMEOUT_MILLIS, DEFAULT_MAX_RESERVATIONS);
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
    boolean strict = readBoolean(conf, STRICT_QUEUE_ORDER, d.strictQueueOrder());
    return new EngineSettings(seconds * 1000, (int) perCycle, d.migSlotPolicy(), timeout * 1000, (int) reservations,
        strict);
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

  public EngineSettings withMigSlotPolicy(MigSlotPolicy policy) {
    return new EngineSettings(migReconfigureMillis, maxMigReconfigurationsPerCycle, policy, reservationTimeoutMillis,
        maxReservations, strictQueueOrder);
  }

  public EngineSettings withMigReconfigureMillis(long millis) {
    return new EngineSettings(millis, maxMigReconfigurationsPerCycle, migSlotPolicy, reservationTimeoutMillis,
        maxReservations, strictQueueOrder);
  }

  public EngineSettings withReservations(long timeoutMillis, int max) {
    return new EngineSettings(migReconfigureMillis, maxMigReconfigurationsPerCycle, migSlotPolicy, timeoutMillis, max,
        strictQueueOrder);
  }

  public EngineSettings withStrictQueueOrder(boolean strict) {
    return new EngineSettings(migReconfigureMillis, maxMigReconfigurationsPerCycle, migSlotPolicy,
        reservationTimeoutMillis, maxReservations, strict);
  }
}
