package io.spindle.core.engine;

import io.spindle.core.model.AppId;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.Placement;

/**
 * A running (or starting) container the engine has charged to an application.
 *
 * @param endsAtMillis when it declared it will have ended; {@code Long.MAX_VALUE} if it declared nothing
 */
record Allocation(long id, AppId appId, String requestKey, Resources shape, Placement placement, long endsAtMillis) {}
