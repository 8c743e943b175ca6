package io.spindle.spark;

import io.spindle.client.CheckpointDecision;
import io.spindle.client.CheckpointHandler;
import io.spindle.client.CheckpointNoticeView;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.apache.spark.SparkContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver's answer to a checkpoint notice: the user's {@link SparkCheckpointHandler} if one is configured,
 * otherwise let the tasks running on the named executors finish (until shortly before the deadline) and answer DONE
 * without a new checkpoint. A checkpoint the answer names is also reported, so that Spindle's victim selection knows
 * this application has just saved its state. A resize notice (an elastic gang shrinks, the job goes on) goes to the
 * {@link ResizeResponder} instead, never to the handler: nothing stops, so there is nothing to save.
 */
final class NoticeResponder implements CheckpointHandler {

  private static final Logger LOG = LoggerFactory.getLogger(NoticeResponder.class);
  private static final long POLL_MILLIS = 100;

  /** Writes a checkpoint report to Spindle (the client's {@code reportCheckpoint}). */
  interface Reporter {
    void report(String location, long checkpointMillis) throws IOException;
  }

  private final SparkCheckpointHandler handler;
  private final SparkContext sc;
  private final ExecutorTasks tasks;
  private final Duration ackBeforeDeadline;
  private final LongSupplier clock;
  private final ResizeResponder resizes;
  private final AtomicReference<SparkCheckpoint> last = new AtomicReference<>();
  private volatile Reporter reporter;

  /**
   * @param handler the user's handler, or {@code null} to drain the named executors and answer DONE
   * @param ackBeforeDeadline without a handler: how long before the deadline to stop waiting for running tasks
   */
  NoticeResponder(SparkCheckpointHandler handler, SparkContext sc, ExecutorTasks tasks, Duration ackBeforeDeadline,
      LongSupplier clock) {
    this(handler, sc, tasks, ackBeforeDeadline, clock, null);
  }

  /** @param resizes answers resize notices; {@code null}: they are drained like a preemption's */
  NoticeResponder(SparkCheckpointHandler handler, SparkContext sc, ExecutorTasks tasks, Duration ackBeforeDeadline,
      LongSupplier clock, ResizeResponder resizes) {
    this.resizes = resizes;
    this.handler = handler;
    this.sc = sc;
    this.tasks = Objects.requireNonNull(tasks, "tasks");
    this.ackBeforeDeadline = Objects.requireNonNull(ackBeforeDeadline, "ackBeforeDeadline");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** Where checkpoints are reported from now on; until set, they are only remembered. */
  void reportTo(Reporter reporter) {
    this.reporter = reporter;
  }

  @Override
  public CheckpointDecision onNotice(CheckpointNoticeView notice) throws Exception {
    if (notice.isResize() && resizes != null) {
      return resizes.onResize(notice);
    }
    LOG.info("Spindle will preempt executors {} (containers {}) at {}: {}", tasks.executorsIn(notice.containerIds()),
        notice.containerIds(), Instant.ofEpochMilli(notice.deadlineMillis()), notice.reason());
    CheckpointDecision decision = handler == null ? drain(notice) : handler.onNotice(notice, sc);
    if (decision instanceof CheckpointDecision.Done done && done.location().isPresent()) {
      checkpointed(done.location().get(), done.checkpointMillis().orElse(clock.getAsLong()));
    }
    return decision;
  }

  /**
   * Records a checkpoint and reports it to Spindle.
   *
   * @return whether Spindle was told (false: not connected, or the write failed; logged)
   */
  boolean checkpointed(String location, long checkpointMillis) {
    SparkCheckpoint checkpoint = new SparkCheckpoint(location, checkpointMillis);
    last.accumulateAndGet(checkpoint, (a, b) -> a == null || b.checkpointMillis() >= a.checkpointMillis() ? b : a);
    Reporter r = reporter;
    if (r == null) {
      return false;
    }
    try {
      r.report(location, checkpointMillis);
      return true;
    } catch (IOException e) {
      LOG.warn("Spindle was not told of checkpoint {}: {}", location, e.getMessage());
      return false;
    }
  }

  Optional<SparkCheckpoint> lastCheckpoint() {
    return Optional.ofNullable(last.get());
  }

  /**
   * Waits until no task runs on the notice's executors, or until {@code ackBeforeDeadline} before its deadline (the
   * deadline is the ResourceManager's clock, so this is an estimate), then answers DONE without a checkpoint: the
   * last reported one stands. Tasks cut off at the deadline are re-run by Spark elsewhere.
   */
  private CheckpointDecision drain(CheckpointNoticeView notice) throws InterruptedException {
    long stopAt = notice.deadlineMillis() - ackBeforeDeadline.toMillis();
    int running;
    while ((running = tasks.runningIn(notice.containerIds())) > 0 && clock.getAsLong() < stopAt) {
      Thread.sleep(POLL_MILLIS);
    }
    if (running > 0) {
      LOG.warn("{} task(s) still run on executors {} close to Spindle's deadline; answering now, Spark re-runs them",
          running, tasks.executorsIn(notice.containerIds()));
    } else {
      LOG.info("No task runs on executors {}; answering Spindle's notice {}", tasks.executorsIn(notice.containerIds()),
          notice.noticeId());
    }
    return CheckpointDecision.done();
  }
}
