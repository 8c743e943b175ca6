package io.spindle.core.engine;

import io.spindle.core.model.Resources;
import io.spindle.core.placement.Placement;

/** A running (or starting) container the engine has charged to an application. */
record Allocation(long id, String appId, String requestKey, Resources shape, Placement placement) {}
