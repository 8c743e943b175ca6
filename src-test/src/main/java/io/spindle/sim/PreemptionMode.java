package io.spindle.sim;

/**
 * Whether a policy preempts, and how the simulated applications take a checkpoint notice. Both preempting modes run
 * the same engine with the same planner, starvation delay and victim order, and the same applications (which write
 * periodic checkpoints and report them); they differ only in the handshake: the grace before the kill, and whether
 * the victim checkpoints when told.
 *
 * @param suffix what {@code +suffix} after a policy name selects (empty for none)
 * @param graceMillis the engine's checkpoint grace ({@code yarn.scheduler.spindle.preemption.checkpoint-grace-seconds})
 * @param checkpointsOnNotice the victim writes a checkpoint when noticed and answers DONE (otherwise it says
 *     nothing and is killed at the deadline)
 */
public record PreemptionMode(String suffix, boolean enabled, long graceMillis, boolean checkpointsOnNotice,
    String description) {

  public static final PreemptionMode NONE = new PreemptionMode("", false, 0, false, "never preempts");

  /**
   * YARN CapacityScheduler's default: a victim's application gets a preemption message and is killed
   * {@code yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill} (15,000 ms) later. Ordinary
   * applications do nothing with the message, so the victim is silent and loses what it did since its last periodic
   * checkpoint.
   */
  public static final PreemptionMode KILL_AFTER_15_S = new PreemptionMode("preempt-kill-15s", true, 15_000, false,
      "preemption on (starvation 60 s); the victim gets 15 s (YARN's max_wait_before_kill default), ignores the "
          + "notice as ordinary applications ignore YARN's preemption message, and is killed at the deadline");

  /**
   * Spindle's handshake: the victim checkpoints on notice and answers DONE; the engine's default grace (120 s) and
   * extensions (one of at most 300 s).
   */
  public static final PreemptionMode CHECKPOINT = new PreemptionMode("preempt-checkpoint", true, 120_000, true,
      "preemption on (starvation 60 s); the victim gets a checkpoint notice (grace 120 s; one extension of up to "
          + "300 s, which it asks for when its checkpoint takes longer), writes a checkpoint and answers DONE, and is "
          + "killed then");

  static PreemptionMode bySuffix(String suffix) {
    for (PreemptionMode m : new PreemptionMode[] {KILL_AFTER_15_S, CHECKPOINT}) {
      if (m.suffix.equals(suffix)) {
        return m;
      }
    }
    return null;
  }
}
