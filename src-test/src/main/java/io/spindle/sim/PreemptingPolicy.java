package io.spindle.sim;

import io.spindle.core.engine.EngineSettings;
import io.spindle.core.preemption.PreemptionSettings;

/**
 * A Spindle policy with the engine's preemption on ({@code <policy>+preempt-checkpoint},
 * {@code <policy>+preempt-kill-15s}): everything else as the base policy. Only Spindle policies qualify: every job is
 * then one gang or one container, which the engine preempts whole, so a preempted job stops and later restarts
 * whole.
 */
public record PreemptingPolicy(SpindlePolicy base, PreemptionMode mode) implements WrappingPolicy {

  public PreemptingPolicy {
    if (!mode.enabled()) {
      throw new IllegalArgumentException("a preempting policy needs a preempting mode");
    }
  }

  @Override
  public String name() {
    return base.name() + "+" + mode.suffix();
  }

  @Override
  public String implementation() {
    return base.implementation() + "; " + mode.description();
  }

  @Override
  public EngineSettings engineSettings() {
    // Engine defaults otherwise (starvation 60 s, at most 16 victims per cycle); applications never ask to extend.
    return base.engineSettings().withPreemption(
        PreemptionSettings.defaults().withEnabled(true).withCheckpointGraceMillis(mode.graceMillis()));
  }

  @Override
  public PreemptionMode preemption() {
    return mode;
  }
}
