package io.spindle.sim.faults;

/**
 * One large training job's wall time, split as failure studies split it (Meta's Llama 3 report counts "effective
 * training time", the share of time spent on useful training). The job makes progress only while all its members run.
 * Each run (a <em>segment</em>: from the moment it holds all its members, or restarts in place, to its next
 * interruption) spends {@code startupMillis} starting (containers, NCCL, loading the last checkpoint), then alternates
 * {@code intervalMillis} of training with a checkpoint write of {@code writeMillis}. An interruption loses the training
 * since the last completed write (and a write in progress); the time until all members run again is re-placing.
 *
 * <p>Every millisecond from the first start to the end falls in exactly one bucket: useful, redone (lost to an
 * interruption), checkpoint writes, restart (startup after each placement or restart in place) and re-placing (not
 * running at all). Times are wall time of the whole job; GPU-hours are these times its GPUs.
 */
final class TrainingRun {

  final String id;
  final int gpus;
  final long intervalMillis;
  final long writeMillis;
  final long startupMillis;
  final long submitMillis;

  long firstStartMillis = -1;
  long endMillis = -1;
  long usefulMillis;
  long redoneMillis;
  long writeTotalMillis;
  long restartMillis;
  long replacingMillis;
  int hardwareInterruptions;
  int softInterruptions;
  /** Moves with every start, so that an event meant for an earlier segment is recognised and dropped. */
  int segment;
  private long segmentStart = -1;
  private long downSince;

  TrainingRun(String id, int gpus, long intervalMillis, long writeMillis, long startupMillis, long submitMillis) {
    if (intervalMillis <= 0 || writeMillis < 0 || startupMillis < 0) {
      throw new IllegalArgumentException("interval must be positive, write and startup not negative");
    }
    this.id = id;
    this.gpus = gpus;
    this.intervalMillis = intervalMillis;
    this.writeMillis = writeMillis;
    this.startupMillis = startupMillis;
    this.submitMillis = submitMillis;
    this.downSince = submitMillis;
  }

  boolean running() {
    return segmentStart >= 0;
  }

  /** All members run (first start, or again after an interruption). */
  void started(long now) {
    if (firstStartMillis < 0) {
      firstStartMillis = now;
    } else {
      replacingMillis += now - downSince;
    }
    segmentStart = now;
    segment++;
  }

  /** Lost a member to hardware: it stops and waits to be placed again. */
  void interrupted(long now) {
    if (running()) {
      close(now, false);
      hardwareInterruptions++;
      segmentStart = -1;
      downSince = now;
    }
  }

  /** A software or other non-GPU interruption: it restarts on the containers it holds. */
  void restartedInPlace(long now) {
    if (running()) {
      close(now, false);
      softInterruptions++;
      segmentStart = now;
      segment++;
    }
  }

  /** The simulation ends: what it trained since its last write counts (nothing interrupted it). */
  void end(long now) {
    if (running()) {
      close(now, true);
      segmentStart = -1;
    } else if (firstStartMillis >= 0) {
      replacingMillis += now - downSince;
    }
    endMillis = now;
  }

  private void close(long now, boolean atEnd) {
    long elapsed = now - segmentStart;
    long startup = Math.min(elapsed, startupMillis);
    restartMillis += startup;
    long rest = elapsed - startup;
    long cycle = intervalMillis + writeMillis;
    long cycles = rest / cycle;
    long tail = rest % cycle;
    usefulMillis += cycles * intervalMillis;
    writeTotalMillis += cycles * writeMillis;
    long trained = Math.min(tail, intervalMillis);
    if (atEnd) {
      usefulMillis += trained;
    } else {
      redoneMillis += trained;
    }
    writeTotalMillis += tail - trained;
  }

  /** Wall time from the first start to the end: the sum of the buckets. */
  long wallMillis() {
    return firstStartMillis < 0 ? 0 : endMillis - firstStartMillis;
  }

  /** Useful share of the wall time since the first start (Llama 3's "effective training time"). */
  double effective() {
    long wall = wallMillis();
    return wall == 0 ? 0 : (double) usefulMillis / wall;
  }

  static double gpuHours(long millis, int gpus) {
    return millis / 3_600_000.0 * gpus;
  }
}
