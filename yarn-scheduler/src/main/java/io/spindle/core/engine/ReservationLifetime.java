package io.spindle.core.engine;

/**
 * How long a reservation holds its nodes. A reservation only helps if it lasts until the work it waits for has
 * drained: on traces whose jobs run for hours or days a fixed timeout dropped it before that, the gang backed off, and
 * later gangs took the nodes — the waits got longer with reservations than without. So a reservation lasts as long as
 * its nodes are expected to take to drain, plus a margin (for the last container's end to be reported and a cycle to
 * run), at least the timeout and at most the cap. Where a container on its nodes declared no run time the drain is
 * unknown, and the timeout alone holds, as before.
 *
 * @param timeoutMillis the shortest lifetime, and the whole lifetime when the drain is unknown
 *     ({@link EngineSettings#reservationTimeoutMillis()})
 * @param maxDrainMillis the longest lifetime a known drain may give; at or below the timeout, the timeout holds
 *     ({@link EngineSettings#reservationMaxDrainMillis()})
 * @param marginMillis added to the expected drain
 */
record ReservationLifetime(long timeoutMillis, long maxDrainMillis, long marginMillis) {

  /** A minute: heartbeats report an ended container within seconds, and a cycle follows within a second. */
  static final long DEFAULT_MARGIN_MILLIS = 60_000;

  static ReservationLifetime of(EngineSettings settings) {
    return new ReservationLifetime(settings.reservationTimeoutMillis(), settings.reservationMaxDrainMillis(),
        DEFAULT_MARGIN_MILLIS);
  }

  /**
   * When a reservation made at {@code createdMillis} is dropped if its gang has not started.
   *
   * @param drainedAtMillis when what runs on its nodes is expected to have ended; {@code Long.MAX_VALUE} if unknown,
   *     at or before {@code createdMillis} if nothing runs there
   */
  long deadlineMillis(long createdMillis, long drainedAtMillis) {
    if (drainedAtMillis == Long.MAX_VALUE || drainedAtMillis <= createdMillis) {
      return createdMillis + timeoutMillis;
    }
    long wanted = Math.min(drainedAtMillis - createdMillis, Long.MAX_VALUE - marginMillis) + marginMillis;
    return createdMillis + Math.max(timeoutMillis, Math.min(wanted, maxDrainMillis));
  }

  /** Whether the reservation was held for longer than the timeout because of a known drain. */
  boolean extended(long createdMillis, long deadlineMillis) {
    return deadlineMillis - createdMillis > timeoutMillis;
  }
}
