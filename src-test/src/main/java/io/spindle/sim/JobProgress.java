package io.spindle.sim;

/**
 * How far one job has got, on virtual time, for preemption: the progress its last checkpoint holds, and what it has
 * done since. Progress is run time in milliseconds; the job ends when it reaches the trace duration. A preempted job
 * resumes from its last checkpoint, so whatever it did after that checkpoint is done again (work lost).
 *
 * <p>Between two checkpoints a job either makes progress or, after a checkpoint notice, writes a checkpoint (paused:
 * no progress); a write always ends in a checkpoint or in the job being killed, so "progress since the last
 * checkpoint" is the time since it, up to the start of a write in progress.
 *
 * <p>The {@link #generation()} changes whenever the job's end time moves (start, pause, resume, stop): events
 * scheduled for an older generation are stale.
 */
final class JobProgress {

  private final long durationMillis;
  /** Progress the last checkpoint holds (or the resume point). */
  private long saved;
  /** When that checkpoint was written (or the run segment began); -1 while the job does not run. */
  private long savedAt = -1;
  /** Writing a checkpoint on notice since then; -1 when not. */
  private long pausedFrom = -1;
  private long generation;

  JobProgress(long durationMillis) {
    this.durationMillis = durationMillis;
  }

  /** The job holds all its containers at {@code now}: it runs from its last checkpoint. */
  void start(long now) {
    savedAt = now;
    pausedFrom = -1;
    generation++;
  }

  boolean running() {
    return savedAt >= 0;
  }

  boolean paused() {
    return pausedFrom >= 0;
  }

  long generation() {
    return generation;
  }

  long savedProgress() {
    return saved;
  }

  long savedAt() {
    return savedAt;
  }

  /** Progress at {@code now} (the job runs). */
  long progressAt(long now) {
    return saved + (paused() ? pausedFrom : now) - savedAt;
  }

  /** Run time still to go at {@code now}. */
  long remainingAt(long now) {
    return durationMillis - progressAt(now);
  }

  /** When the job ends if nothing interrupts it; {@code Long.MAX_VALUE} while it writes a checkpoint. */
  long endAt() {
    return paused() ? Long.MAX_VALUE : savedAt + durationMillis - saved;
  }

  /**
   * Periodic checkpoints every {@code intervalMillis} of run time since the last checkpoint, written up to
   * {@code now} (none while writing one on notice, which ends in a checkpoint anyway). Returns whether any was.
   */
  boolean catchUp(long now, long intervalMillis) {
    if (intervalMillis <= 0 || !running() || paused() || now - savedAt < intervalMillis) {
      return false;
    }
    long k = (now - savedAt) / intervalMillis;
    saved += k * intervalMillis;
    savedAt += k * intervalMillis;
    return true;
  }

  /** A checkpoint notice at {@code now}: the job stops making progress and writes its state as of now. */
  void pause(long now) {
    pausedFrom = now;
    generation++;
  }

  /**
   * The checkpoint begun at the pause is written at {@code now}: it holds the progress at the pause, and the job goes
   * on from it. Returns how long the write took (GPU time that made no progress).
   */
  long resume(long now) {
    long took = now - pausedFrom;
    saved += pausedFrom - savedAt;
    savedAt = now;
    pausedFrom = -1;
    generation++;
    return took;
  }

  /** How long a checkpoint write has been in progress at {@code now}; 0 when none is. */
  long writingFor(long now) {
    return paused() ? now - pausedFrom : 0;
  }

  /**
   * The job is killed at {@code now}: it falls back to its last checkpoint. Returns the progress lost (done since
   * that checkpoint); a checkpoint being written is lost with it.
   */
  long stop(long now) {
    long lost = progressAt(now) - saved;
    savedAt = -1;
    pausedFrom = -1;
    generation++;
    return lost;
  }
}
