package io.spindle.client;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/** What an application answers to a checkpoint notice. */
public sealed interface CheckpointDecision {

  /**
   * Checkpointed: the scheduler may reclaim the containers now. The gang re-queues with {@code location}, or with the
   * last {@link SpindleCheckpointClient#reportCheckpoint reported} checkpoint when there is none.
   */
  static CheckpointDecision done(String location, long checkpointMillis) {
    return new Done(Optional.of(CheckpointAckView.checkLocation(location)), OptionalLong.of(checkpointMillis));
  }

  /** Done without a new checkpoint (nothing worth saving, or the last report stands). */
  static CheckpointDecision done() {
    return new Done(Optional.empty(), OptionalLong.empty());
  }

  /**
   * Asks to move the deadline {@code by} later. The scheduler decides (bounded per queue) and answers with a new
   * revision of the notice: a later deadline, or the same one with a refusal.
   */
  static CheckpointDecision extend(Duration by) {
    return new Extend(by);
  }

  /** No answer now: the handler answers later with {@link SpindleCheckpointClient#answer}, or stays silent. */
  static CheckpointDecision later() {
    return Later.INSTANCE;
  }

  record Done(Optional<String> location, OptionalLong checkpointMillis) implements CheckpointDecision {
    public Done {
      Objects.requireNonNull(location, "location");
      Objects.requireNonNull(checkpointMillis, "checkpointMillis");
      location.ifPresent(CheckpointAckView::checkLocation);
      if (checkpointMillis.orElse(0) < 0) {
        throw new IllegalArgumentException("checkpointMillis must be >= 0, not " + checkpointMillis);
      }
    }

    @Override
    public String toString() {
      return "DONE, checkpoint " + location.orElse("(none given)")
          + (checkpointMillis.isPresent() ? " taken at " + Instant.ofEpochMilli(checkpointMillis.getAsLong()) : "");
    }
  }

  record Extend(Duration by) implements CheckpointDecision {
    public Extend {
      if (by == null || by.isNegative() || by.isZero() || by.toMillis() == 0) {
        throw new IllegalArgumentException("an extension must be at least 1 ms, not " + by);
      }
    }

    @Override
    public String toString() {
      return "EXTEND by " + by;
    }
  }

  enum Later implements CheckpointDecision { INSTANCE }
}
