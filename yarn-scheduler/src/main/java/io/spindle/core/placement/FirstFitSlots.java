package io.spindle.core.placement;

import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigProfile;
import java.util.List;

/** Baseline: the first legal free start on the first layout that has one. */
public final class FirstFitSlots implements MigSlotPolicy {

  @Override
  public Choice choose(MigProfile profile, List<MigLayout> options) {
    for (int i = 0; i < options.size(); i++) {
      int start = options.get(i).firstFreeStart(profile);
      if (start >= 0) {
        return new Choice(i, start);
      }
    }
    return null;
  }
}
