package io.spindle.core.reliability;

import io.spindle.core.model.InvalidInputException;

/**
 * What the engine does with GPUs that their nodes report failed (admin guide, "GPU health").
 *
 * @param quarantineFailures a GPU that fails this many times within {@code quarantineWindowMillis} stays out of
 *     service for {@code quarantineMillis} after its last failure, even when it reports healthy again: a GPU that
 *     keeps failing after resets fails the gangs put on it ({@code yarn.scheduler.spindle.health.quarantine.failures};
 *     0 turns quarantine off)
 * @param quarantineWindowMillis how far back failures count towards quarantine
 *     ({@code yarn.scheduler.spindle.health.quarantine.window-seconds})
 * @param quarantineMillis how long a quarantined GPU stays out ({@code yarn.scheduler.spindle.health.quarantine.seconds})
 * @param drainFailedGpus a node with this many GPUs out of service (failed or quarantined) is cordoned: what runs
 *     there finishes, nothing new starts, until fewer are out; a node in that state usually needs a reboot or a
 *     field engineer, and the GPUs still up would only give gangs a node that fails again
 *     ({@code yarn.scheduler.spindle.health.drain-failed-gpus}; 0 never drains)
 * @param restartInDomain a gang that lost members to hardware restarts inside the topology domain it held (hot swap:
 *     it waits for its stopped members to end, then takes their room and the nearest free nodes); off, it restarts
 *     wherever placement puts a new gang ({@code yarn.scheduler.spindle.health.restart-in-domain})
 * @param spareLendMillis hot spares (a leaf's {@code spindle.hot-spares-per-rack}) are lent only to preemptible work
 *     that declares it ends within this long, so a gang restarting onto them waits at most this long for a borrower
 *     to leave ({@code yarn.scheduler.spindle.health.spare-lend-seconds}; 0 lends nothing)
 */
public record HealthSettings(int quarantineFailures, long quarantineWindowMillis, long quarantineMillis,
    int drainFailedGpus, boolean restartInDomain, long spareLendMillis) {

  public static final String QUARANTINE_FAILURES = "yarn.scheduler.spindle.health.quarantine.failures";
  public static final String QUARANTINE_WINDOW_SECONDS = "yarn.scheduler.spindle.health.quarantine.window-seconds";
  public static final String QUARANTINE_SECONDS = "yarn.scheduler.spindle.health.quarantine.seconds";
  public static final String DRAIN_FAILED_GPUS = "yarn.scheduler.spindle.health.drain-failed-gpus";
  public static final String RESTART_IN_DOMAIN = "yarn.scheduler.spindle.health.restart-in-domain";
  public static final String SPARE_LEND_SECONDS = "yarn.scheduler.spindle.health.spare-lend-seconds";
  /**
   * Ten minutes: about what a large job spends re-placing and reloading its checkpoint anyway, so a borrower delays
   * a restart by at most as much again.
   */
  public static final long DEFAULT_SPARE_LEND_MILLIS = 600_000;

  public static final HealthSettings DEFAULT = new HealthSettings(2, 86_400_000, 86_400_000, 2, true,
      DEFAULT_SPARE_LEND_MILLIS);

  /** Settings that lend spares for the default time. */
  public HealthSettings(int quarantineFailures, long quarantineWindowMillis, long quarantineMillis,
      int drainFailedGpus, boolean restartInDomain) {
    this(quarantineFailures, quarantineWindowMillis, quarantineMillis, drainFailedGpus, restartInDomain,
        DEFAULT_SPARE_LEND_MILLIS);
  }

  public HealthSettings withRestartInDomain(boolean inDomain) {
    return new HealthSettings(quarantineFailures, quarantineWindowMillis, quarantineMillis, drainFailedGpus, inDomain,
        spareLendMillis);
  }

  public HealthSettings withSpareLendMillis(long millis) {
    return new HealthSettings(quarantineFailures, quarantineWindowMillis, quarantineMillis, drainFailedGpus,
        restartInDomain, millis);
  }

  public HealthSettings {
    InvalidInputException.requireNonNegative(QUARANTINE_FAILURES, quarantineFailures);
    InvalidInputException.requireNonNegative(QUARANTINE_WINDOW_SECONDS, quarantineWindowMillis);
    InvalidInputException.requireNonNegative(QUARANTINE_SECONDS, quarantineMillis);
    InvalidInputException.requireNonNegative(DRAIN_FAILED_GPUS, drainFailedGpus);
    InvalidInputException.requireNonNegative(SPARE_LEND_SECONDS, spareLendMillis);
  }
}
