package io.spindle.core.engine;

import io.spindle.core.model.ResourceVector;

/**
 * Why a request cannot be served, now or ever. Typed, so the engine's logic tests kinds rather than words, and worded
 * once, by {@link #describe()}, for the people who read it: the reason of a {@code Wait} or {@code Reject}, and of
 * {@code why}. In the spirit of Fenzo's {@code AssignmentFailure}. A refusal holds the figures as they were when it
 * was made, so its wording never changes afterwards.
 */
sealed interface Refusal {

  String describe();

  /** No node has room for the shape now. Worded at the end of the cycle, against the cluster as the cycle leaves it. */
  enum NoRoom implements Refusal {
    NOW;

    @Override
    public String describe() {
      return "no room";
    }
  }

  /** A queue on the request's path would pass its maximum-capacity. */
  record QueueAtMaximum(String queue, ResourceVector usage, ResourceVector maximum, ResourceVector charge)
      implements Refusal {
    @Override
    public String describe() {
      return "queue " + queue + " is at its maximum-capacity: it uses " + usage + " of at most " + maximum
          + ", and this request needs " + charge + " more";
    }
  }

  /** The user would pass the leaf's user limit (user-limit-factor times its guarantee) in one resource. */
  record UserLimit(String user, String queue, double factor, ResourceVector guarantee, int dimension)
      implements Refusal {
    @Override
    public String describe() {
      return "user " + user + " is at the user limit of queue " + queue + " (user-limit-factor " + factor
          + " x guarantee " + guarantee + ") in " + ResourceVector.dimensionName(dimension);
    }
  }

  /**
   * The user would pass its share of the leaf among the users asking there (CapacityScheduler's
   * {@code minimum-user-limit-percent}) in one resource.
   */
  record UserShare(String user, String queue, double minimumPercent, int activeUsers, ResourceVector limit,
      int dimension) implements Refusal {
    @Override
    public String describe() {
      return "user " + user + " holds its share of queue " + queue + " among " + activeUsers + " users asking "
          + "(minimum-user-limit-percent " + minimumPercent + ": at most " + limit + ") in "
          + ResourceVector.dimensionName(dimension);
    }
  }

  /** A gang waits for the nodes reserved for it to drain. */
  record ReservationDraining(int gangSize, String subtree, long projectedStartMillis) implements Refusal {
    @Override
    public String describe() {
      return "gang of " + gangSize + " waits for its reservation on " + subtree + " to drain"
          + (projectedStartMillis == Long.MAX_VALUE ? " (containers there declared no run time)"
              : " (projected start " + java.time.Instant.ofEpochMilli(projectedStartMillis) + ")");
    }
  }

  /** A gang does not fit, and no reservation can be made for it now (all slots held, or its backoff runs). */
  record NoReservationSlot(int gangSize, String where) implements Refusal {
    @Override
    public String describe() {
      return "gang of " + gangSize + " does not fit in " + where + " now; waiting for a reservation slot";
    }
  }

  /**
   * A gang does not fit, and the nodes that would hold it soonest have work of undeclared run time: only the gang its
   * queue serves first may hold such nodes idle for itself.
   */
  record BehindHeadGang(int gangSize, String where) implements Refusal {
    @Override
    public String describe() {
      return "gang of " + gangSize + " does not fit in " + where + " now; nodes whose work declared no run time are "
          + "reserved only for the gang its queue serves first";
    }
  }

  /**
   * A gang restarted after losing members to hardware waits for the members being stopped to end: their room is
   * where it restarts, inside the domain it held.
   */
  record RestartingInDomain(int gangSize, int stopping) implements Refusal {
    @Override
    public String describe() {
      return "gang of " + gangSize + " restarts inside the domain it held once its " + stopping + " stopped member"
          + (stopping == 1 ? " has" : "s have") + " ended";
    }
  }

  /** A gang does not fit, and the nodes it would need are reserved for other gangs. */
  record NodesHeldForOthers(int gangSize, String where) implements Refusal {
    @Override
    public String describe() {
      return "gang of " + gangSize + " does not fit in " + where + " now, and its nodes are held for other gangs";
    }
  }

  /** The request can never be served as asked: a bad shape, count or level, or larger than the cluster or queue. */
  record Impossible(String reason) implements Refusal {
    @Override
    public String describe() {
      return reason;
    }
  }
}
