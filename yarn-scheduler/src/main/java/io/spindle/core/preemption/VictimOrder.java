package io.spindle.core.preemption;

import java.util.Comparator;
import java.util.function.ToDoubleFunction;

/**
 * The order in which running work is considered for preemption, cheapest first:
 * <ol>
 *   <li>members elastic gangs grew by above their minimum ({@link Candidate#elastic}), before any whole gang or
 *       container: giving back growth costs a resize, not a restart;
 *   <li>least work lost since the last checkpoint ({@link Candidate#workLost}: elapsed time since the later of start
 *       and last checkpoint, times GPU-equivalents held), so an application that just checkpointed goes first;
 *   <li>then the lowest application priority;
 *   <li>then the queue furthest above its fair share (dominant share of usage minus dominant share of fair share);
 *   <li>then, for a total order, the shortest time since checkpoint, then the most recently started.
 * </ol>
 * The order only decides which victims are tried first; which of them may be taken at all is the planner's rule.
 */
public final class VictimOrder {

  private VictimOrder() {}

  /**
   * @param distanceAboveFairShare per leaf queue path: how far the queue is above its fair share (negative below)
   */
  public static Comparator<Candidate> at(long nowMillis, ToDoubleFunction<String> distanceAboveFairShare) {
    return (a, b) -> {
      int c = Boolean.compare(b.elastic(), a.elastic());
      if (c != 0) {
        return c;
      }
      c = Long.compare(a.workLost(nowMillis), b.workLost(nowMillis));
      if (c != 0) {
        return c;
      }
      c = Integer.compare(a.priority(), b.priority());
      if (c != 0) {
        return c;
      }
      c = Double.compare(distanceAboveFairShare.applyAsDouble(b.queue()),
          distanceAboveFairShare.applyAsDouble(a.queue()));
      if (c != 0) {
        return c;
      }
      c = Long.compare(a.elapsedSinceCheckpoint(nowMillis), b.elapsedSinceCheckpoint(nowMillis));
      if (c != 0) {
        return c;
      }
      return Long.compare(b.unitId(), a.unitId());
    };
  }
}
