package io.spindle.core.engine;

/**
 * Usage history: how fast borrowed usage is forgotten and how much it weighs ({@link UsageHistory},
 * {@link io.spindle.core.queue.UsageWeighting}).
 *
 * @param halfLifeMillis decayed usage halves in this time ({@code yarn.scheduler.spindle.usage.half-life-seconds});
 *     0 turns usage history off: no history is kept and idle capacity is shared by plain weights
 * @param windowMillis a history that had nothing added for this long is forgotten whole
 *     ({@code yarn.scheduler.spindle.usage.window-seconds}): it bounds how long a small remainder lingers in the
 *     state, the views and the shares
 * @param strength how far history moves the weights of idle capacity ({@code yarn.scheduler.spindle.usage.strength});
 *     0 keeps and shows history without letting it weigh
 */
public record UsageSettings(long halfLifeMillis, long windowMillis, double strength) {

  public static final String HALF_LIFE_SECONDS = "yarn.scheduler.spindle.usage.half-life-seconds";
  public static final String WINDOW_SECONDS = "yarn.scheduler.spindle.usage.window-seconds";
  public static final String STRENGTH = "yarn.scheduler.spindle.usage.strength";
  /**
   * Off. Turning it on changes how idle capacity is divided on clusters that run today, so it is the operator's
   * choice, as preemption is; the half-life an operator turns on is 1 day by default (see {@link #ON}).
   */
  public static final UsageSettings OFF = new UsageSettings(0, 604_800_000L, 1.0);
  /**
   * The values the admin guide recommends: a 1-day half-life (a night of borrowing still counts three quarters the
   * next morning and a sixteenth four days later: "yesterday" matters, last week hardly; Slurm's 7-day default is
   * made for monthly allocations, not for sharing idle GPUs), a 7-day window, strength 1.
   */
  public static final UsageSettings ON = new UsageSettings(86_400_000L, 604_800_000L, 1.0);

  public UsageSettings {
    if (halfLifeMillis < 0 || windowMillis <= 0) {
      throw new IllegalArgumentException("usage history: half-life must not be negative and the window positive");
    }
    if (!(strength >= 0 && strength <= 100)) {
      throw new IllegalArgumentException("usage history: strength must be within 0..100: " + strength);
    }
  }

  /** Whether history is kept (and shown); with strength 0 it is kept and shown but weighs nothing. */
  public boolean enabled() {
    return halfLifeMillis > 0;
  }
}
