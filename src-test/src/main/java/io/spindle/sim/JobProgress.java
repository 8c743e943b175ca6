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
 *
 * <p>An elastic job runs at a {@link #rate()} below 1 while it holds fewer members than the trace gave it
 * ({@link ElasticModel}); the rate changes only where progress is folded into a checkpoint (start, resume,
 * {@link #restartAt}), so between two checkpoints it is constant. Progress is then the trace's run time done, and
 * "run time" in {@link #catchUp} is wall time.
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
  private double rate = 1;

  JobProgress(long durationMillis) {
    this.durationMillis = durationMillis;
  }

  /** The job holds all its containers at {@code now}: it runs from its last checkpoint. */
  void start(long now) {
    start(now, 1);
  }

  /** The job starts at {@code now} from its last checkpoint, at {@code rate} of its trace speed. */
  void start(long now, double rate) {
    this.rate = rate;
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

  double rate() {
    return rate;
  }

  /** Progress made in {@code wallMillis} at the current rate (exactly the wall time at full speed). */
  private long progressIn(long wallMillis) {
    return rate == 1 ? wallMillis : (long) Math.floor(wallMillis * rate);
  }

  long savedProgress() {
    return saved;
  }

  long savedAt() {
    return savedAt;
  }

  /** Progress at {@code now} (the job runs). */
  long progressAt(long now) {
    return saved + progressIn((paused() ? pausedFrom : now) - savedAt);
  }

  /** Run time still to go at {@code now}. */
  long remainingAt(long now) {
    return durationMillis - progressAt(now);
  }

  /** When the job ends if nothing interrupts it; {@code Long.MAX_VALUE} while it writes a checkpoint. */
  long endAt() {
    if (paused()) {
      return Long.MAX_VALUE;
    }
    return rate == 1 ? savedAt + durationMillis - saved : savedAt + (long) Math.ceil((durationMillis - saved) / rate);
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
    saved += progressIn(k * intervalMillis);
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
    saved += progressIn(pausedFrom - savedAt);
    savedAt = now;
    pausedFrom = -1;
    generation++;
    return took;
  }

  /** How long a checkpoint write has been in progress at {@code now}; 0 when none is. */
  long writingFor(long now) {
    return paused() ? now - pausedFrom : 0;
  }

  /** The checkpoint a resume wrote goes on at {@code rate} from now on (the job resized meanwhile). */
  void rateFromNow(long now, double newRate) {
    if (savedAt != now || paused()) {
      throw new IllegalStateException("the rate changes only at a checkpoint");
    }
    rate = newRate;
    generation++;
  }

  /**
   * The job restarts at {@code now} from its last checkpoint at {@code newRate} (it resized without writing one
   * first). Returns the wall time of run lost, as {@link #stop} does.
   */
  long restartAt(long now, double newRate) {
    long lost = stop(now);
    start(now, newRate);
    return lost;
  }

  /**
   * The job is killed at {@code now}: it falls back to its last checkpoint. Returns the wall time of run lost (since
   * that checkpoint); a checkpoint being written is lost with it.
   */
  long stop(long now) {
    long lost = (paused() ? pausedFrom : now) - savedAt;
    savedAt = -1;
    pausedFrom = -1;
    generation++;
    return lost;
  }
}
