package io.spindle.core.preemption;

/**
 * Cluster-wide preemption knobs; each has one configuration key (see {@code EngineSettings}) and one line in the
 * admin guide. Queues may bound extensions more tightly or loosely with their own keys.
 *
 * @param enabled whether the engine plans preemptions at all
 * @param starvationMillis how long a request must have waited for room (and, to reclaim from other queues, its queue
 *     been below its fair share) before anything is preempted for it
 * @param checkpointGraceMillis how long a victim has, from the notice, to checkpoint before it is reclaimed
 * @param maxExtensions how many times one notice may be extended, unless the victim's queue says otherwise
 * @param maxExtensionMillis the longest one extension may be, unless the victim's queue says otherwise
 * @param maxVictimsPerCycle at most this many victims (gangs or single containers) get a notice in one cycle; the
 *     first request planned in a cycle may exceed it, so that one large request is never starved by the cap
 */
public record PreemptionSettings(boolean enabled, long starvationMillis, long checkpointGraceMillis, int maxExtensions,
    long maxExtensionMillis, int maxVictimsPerCycle) {

  public static final boolean DEFAULT_ENABLED = false;
  public static final long DEFAULT_STARVATION_MILLIS = 60_000;
  public static final long DEFAULT_CHECKPOINT_GRACE_MILLIS = 120_000;
  public static final int DEFAULT_MAX_EXTENSIONS = 1;
  public static final long DEFAULT_MAX_EXTENSION_MILLIS = 300_000;
  public static final int DEFAULT_MAX_VICTIMS_PER_CYCLE = 16;

  public PreemptionSettings {
    if (starvationMillis < 0 || checkpointGraceMillis < 0 || maxExtensions < 0 || maxExtensionMillis < 0) {
      throw new IllegalArgumentException("preemption settings must not be negative");
    }
    if (maxVictimsPerCycle < 1) {
      throw new IllegalArgumentException("maxVictimsPerCycle must be at least 1: " + maxVictimsPerCycle);
    }
  }

  public static PreemptionSettings defaults() {
    return new PreemptionSettings(DEFAULT_ENABLED, DEFAULT_STARVATION_MILLIS, DEFAULT_CHECKPOINT_GRACE_MILLIS,
        DEFAULT_MAX_EXTENSIONS, DEFAULT_MAX_EXTENSION_MILLIS, DEFAULT_MAX_VICTIMS_PER_CYCLE);
  }

  public PreemptionSettings withEnabled(boolean on) {
    return new PreemptionSettings(on, starvationMillis, checkpointGraceMillis, maxExtensions, maxExtensionMillis,
        maxVictimsPerCycle);
  }

  public PreemptionSettings withStarvationMillis(long millis) {
    return new PreemptionSettings(enabled, millis, checkpointGraceMillis, maxExtensions, maxExtensionMillis,
        maxVictimsPerCycle);
  }

  public PreemptionSettings withCheckpointGraceMillis(long millis) {
    return new PreemptionSettings(enabled, starvationMillis, millis, maxExtensions, maxExtensionMillis,
        maxVictimsPerCycle);
  }

  public PreemptionSettings withExtensions(int max, long maxMillis) {
    return new PreemptionSettings(enabled, starvationMillis, checkpointGraceMillis, max, maxMillis,
        maxVictimsPerCycle);
  }

  public PreemptionSettings withMaxVictimsPerCycle(int max) {
    return new PreemptionSettings(enabled, starvationMillis, checkpointGraceMillis, maxExtensions,
        maxExtensionMillis, max);
  }
}
