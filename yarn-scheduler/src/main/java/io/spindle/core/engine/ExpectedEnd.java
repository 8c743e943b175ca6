package io.spindle.core.engine;

/**
 * When a running container is expected to have ended, for planning reservations: how long a gang's reserved nodes
 * take to drain decides where it reserves, when it is projected to start, and how long the reservation is held.
 *
 * <p>Today the only estimate is the run time the application declared ({@link PlacementSpec#maxRuntimeMillis()},
 * kept as {@link Allocation#endsAtMillis()}). The run times {@code shortest-first} learns ({@link RuntimeEstimates}) are
 * not used here yet: they are kept only for ranked leaves, and an allocation does not keep its start. They are meant
 * to plug in here, as another implementation, and everything that plans reservations follows it. An implementation must be deterministic: a function of the allocation and of what the
 * engine was told, never of the wall clock.
 */
@FunctionalInterface
interface ExpectedEnd {

  /** The declared run time, nothing else. */
  ExpectedEnd DECLARED = Allocation::endsAtMillis;

  /** When {@code a} is expected to have ended; {@code Long.MAX_VALUE} when nothing is known. */
  long of(Allocation a);
}
