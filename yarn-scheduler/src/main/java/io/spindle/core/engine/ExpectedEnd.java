package io.spindle.core.engine;

/**
 * When a running container is expected to have ended, for planning reservations: how long a gang's reserved nodes
 * take to drain decides where it reserves, when it is projected to start, and how long the reservation is held.
 *
 * <p>An implementation must be deterministic: a function of the allocation and of what the engine was told (its
 * injected clock included), never of the wall clock.
 */
@FunctionalInterface
interface ExpectedEnd {

  /** The declared run time, nothing else. */
  ExpectedEnd DECLARED = Allocation::endsAtMillis;

  /** When {@code a} is expected to have ended; {@code Long.MAX_VALUE} when nothing is known. */
  long of(Allocation a);

  /**
   * The declared end; where none was declared, the run time learned for the application's kind
   * ({@link RuntimeEstimates}) less what the application has run so far. A run that has outlived its estimate is
   * unknown again ({@code Long.MAX_VALUE}): the estimate was wrong for it, and guessing "any moment now" would keep a
   * reservation on it for ever.
   */
  static ExpectedEnd declaredOrLearned(EngineState state, Clock clock) {
    return a -> {
      if (a.endsAtMillis() != Long.MAX_VALUE) {
        return a.endsAtMillis();
      }
      AppState app = state.app(a.appId());
      long expected = app == null ? 0 : state.estimates().expectedMillis(app);
      if (expected <= 0) {
        return Long.MAX_VALUE;
      }
      long now = clock.nowMillis();
      long left = expected - app.attained.ranMillis(now);
      return left > 0 ? now + left : Long.MAX_VALUE;
    };
  }
}
