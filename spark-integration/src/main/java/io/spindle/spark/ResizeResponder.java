package io.spindle.spark;

import io.spindle.client.CheckpointDecision;
import io.spindle.client.CheckpointNoticeView;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver's answer to a resize notice: Spindle takes some executors of an elastic gang back and the job runs on
 * with the rest. The named executors are decommissioned (their blocks move to the executors that stay, their running
 * tasks finish), and once they have left, or shortly before the deadline, the notice is answered DONE; Spindle then
 * reclaims whatever containers are still there. No checkpoint is involved: nothing stops.
 */
final class ResizeResponder {

  private static final Logger LOG = LoggerFactory.getLogger(ResizeResponder.class);
  private static final long POLL_MILLIS = 100;

  private final ExecutorTasks tasks;
  private final ExecutorDecommission decommission;
  private final Duration ackBeforeDeadline;
  private final LongSupplier clock;

  ResizeResponder(ExecutorTasks tasks, ExecutorDecommission decommission, Duration ackBeforeDeadline,
      LongSupplier clock) {
    this.tasks = Objects.requireNonNull(tasks, "tasks");
    this.decommission = Objects.requireNonNull(decommission, "decommission");
    this.ackBeforeDeadline = Objects.requireNonNull(ackBeforeDeadline, "ackBeforeDeadline");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  CheckpointDecision onResize(CheckpointNoticeView notice) throws InterruptedException {
    Set<String> going = tasks.executorsIn(notice.containerIds());
    LOG.info("Spindle resize notice {}: the executor gang goes on with {}; decommissioning executors {} "
        + "(containers {}) by {}: {}", notice.noticeId(), notice.targetSize(), going, notice.containerIds(),
        Instant.ofEpochMilli(notice.deadlineMillis()), notice.reason());
    if (!going.isEmpty()) {
      // A re-issued notice finds them decommissioning already; Spark ignores those, and waiting goes on.
      Set<String> accepted = decommission.decommission(going, "Spindle resize notice " + notice.noticeId());
      LOG.info("Spark decommissions executors {} of {}", accepted, going);
    }
    long stopAt = notice.deadlineMillis() - ackBeforeDeadline.toMillis();
    Set<String> left;
    while (!(left = tasks.executorsIn(notice.containerIds())).isEmpty() && clock.getAsLong() < stopAt) {
      Thread.sleep(POLL_MILLIS);
    }
    if (left.isEmpty()) {
      LOG.info("Executors {} decommissioned; answering Spindle's resize notice {}", going, notice.noticeId());
    } else {
      LOG.warn("Executors {} still decommissioning close to Spindle's deadline; answering now. Spindle stops them, "
          + "and Spark re-runs their tasks and recomputes blocks they had not moved", left);
    }
    return CheckpointDecision.done();
  }
}
