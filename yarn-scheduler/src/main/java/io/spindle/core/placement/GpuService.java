package io.spindle.core.placement;

import java.util.Objects;

/**
 * Why one GPU is not fully in service. A GPU with no {@code GpuService} takes any work.
 *
 * @param level what it may still take
 * @param reason what an admin or user reads: the health evidence, the quarantine, or the admin's words
 */
public record GpuService(Level level, String reason) {

  /** Ordered from least to most restricted. */
  public enum Level {
    /** Runs what it holds and takes new work, but no new gang member: a gang waits for its slowest member. */
    DEGRADED,
    /** Takes nothing new; what it held is stopped by the engine. */
    OUT
  }

  public GpuService {
    Objects.requireNonNull(level, "level");
    Objects.requireNonNull(reason, "reason");
  }

  public boolean out() {
    return level == Level.OUT;
  }
}
