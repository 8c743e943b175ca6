package io.spindle.core.placement;

import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigProfile;
import java.util.List;

/**
 * Where the next MIG instance goes when GPUs are re-partitioned: which of the candidate layouts, and at
 * which legal start. Spindle's own policy is {@link FragmentationAwareSlots}; {@link FirstFitSlots} and
 * {@link RandomSlots} exist as baselines for benchmarks.
 */
public interface MigSlotPolicy {

  /** A chosen layout (index into the options) and memory-slice start. */
  record Choice(int option, int start) {}

  /**
   * @param options distinct layouts of one GPU model that can take the instance: first those already being planned
   *     this cycle, then GPUs with work on them, then idle GPUs (or, when none of these can, layouts with the unused
   *     instances in the way removed, least destroyed first); ties should go to the earlier option
   * @return where to put one instance of {@code profile}, or {@code null} when no option can hold it
   */
  Choice choose(MigProfile profile, List<MigLayout> options);
}
