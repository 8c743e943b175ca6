package io.spindle.core.placement;

import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigProfile;
import java.util.List;

/**
 * Where the next MIG instance goes when idle GPUs are re-partitioned: which of the layouts being planned, and at
 * which legal start. Spindle's own policy is {@link FragmentationAwareSlots}; {@link FirstFitSlots} and
 * {@link RandomSlots} exist as baselines for benchmarks.
 */
public interface MigSlotPolicy {

  /** A chosen layout (index into the options) and memory-slice start. */
  record Choice(int option, int start) {}

  /**
   * @param options layouts of one GPU model: first those already being planned this cycle, then one empty layout
   *     standing for a fresh idle GPU (when one is left)
   * @return where to put one instance of {@code profile}, or {@code null} when no option can hold it
   */
  Choice choose(MigProfile profile, List<MigLayout> options);
}
