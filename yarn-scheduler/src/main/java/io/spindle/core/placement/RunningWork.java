package io.spindle.core.placement;

import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import java.util.List;

/**
 * What runs on each node and when each container is expected to end, as the engine knows it (declared run times
 * today; see {@code io.spindle.core.engine.ExpectedEnd}). Reservations are planned from it: where a gang reserves,
 * when it is projected to start, and so how long its reservation lasts.
 */
@FunctionalInterface
public interface RunningWork {

  /** The containers running on {@code node}, in the order they started there. */
  List<Running> on(NodeId node);

  /**
   * One running container.
   *
   * @param expectedEndMillis when it is expected to have ended; {@code Long.MAX_VALUE} when unknown
   */
  record Running(Resources shape, Placement placement, long expectedEndMillis) {}
}
