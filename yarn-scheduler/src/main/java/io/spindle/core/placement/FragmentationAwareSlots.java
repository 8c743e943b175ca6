package io.spindle.core.placement;

import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import java.util.List;

/**
 * Spindle's MIG slot choice: put the instance where what the GPU can still hold shrinks least.
 *
 * <p>For a layout {@code L}, let {@code room(L, q)} be how many more instances of profile {@code q} fit on it. Placing
 * an instance changes {@code room} for every profile; the <b>loss</b> of a slot is
 * {@code sum over profiles q of charge(q) * (room(L, q) - room(L + instance, q))}, where {@code charge} is the
 * profile's size in GPU-equivalents, so losing the only place a 7g could go costs more than losing one of seven 1g
 * places. The slot with the least loss wins; ties go to a layout already being planned (fewer GPUs disturbed),
 * then the earlier layout, then the higher start (small instances at the top leave the low starts, where 4g and 7g
 * must begin, free).
 *
 * <p>Example on an empty H100: a 1g.10gb at start 6 loses the 7g, one 3g, one 1g.20gb and one 1g places; at start
 * 0 it also loses the 4g and a 2g place, so 6 wins. A 3g.40gb goes to start 4, which keeps the 4g place at 0.
 */
public final class FragmentationAwareSlots implements MigSlotPolicy {

  @Override
  public Choice choose(MigProfile profile, List<MigLayout> options) {
    Choice best = null;
    long bestLoss = Long.MAX_VALUE;
    for (int i = 0; i < options.size(); i++) {
      MigLayout layout = options.get(i);
      for (int start : profile.legalStarts()) {
        MigPlacement p = new MigPlacement(profile, start);
        if (!layout.canAdd(p)) {
          continue;
        }
        long loss = loss(layout, layout.with(p));
        // Strictly less wins; equal loss keeps the earlier option, and within it the later (higher) start.
        if (loss < bestLoss || (loss == bestLoss && best != null && best.option() == i)) {
          best = new Choice(i, start);
          bestLoss = loss;
        }
      }
    }
    return best;
  }

  /** Room lost, weighted by profile size, when going from {@code before} to {@code after}. */
  public static long loss(MigLayout before, MigLayout after) {
    long loss = 0;
    for (MigProfile q : before.model().profiles()) {
      loss += q.gpuUnits() * (before.placeable(q) - after.placeable(q));
    }
    return loss;
  }
}
