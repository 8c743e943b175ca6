package io.spindle.core.placement;

import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Baseline: a uniformly random legal (layout, start) pair. Seeded, so runs repeat. */
public final class RandomSlots implements MigSlotPolicy {

  private final Random random;

  public RandomSlots(long seed) {
    this.random = new Random(seed);
  }

  @Override
  public Choice choose(MigProfile profile, List<MigLayout> options) {
    List<Choice> legal = new ArrayList<>();
    for (int i = 0; i < options.size(); i++) {
      for (int start : profile.legalStarts()) {
        if (options.get(i).canAdd(new MigPlacement(profile, start))) {
          legal.add(new Choice(i, start));
        }
      }
    }
    return legal.isEmpty() ? null : legal.get(random.nextInt(legal.size()));
  }
}
