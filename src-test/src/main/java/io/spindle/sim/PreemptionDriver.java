package io.spindle.sim;

import io.spindle.core.engine.Decision;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.model.AppId;
import io.spindle.core.preemption.CheckpointAnswer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;

/**
 * The simulated applications' side of preemption, and what it cost. Every job runs from its last checkpoint until it
 * has done its trace duration ({@link JobProgress}); under a preempting policy it writes a checkpoint after every
 * {@link SimOptions#checkpointIntervalMillis} of run time (taking no time) and reports it to the engine
 * ({@code CheckpointReported}, which the engine's victim order uses). On a checkpoint notice the job either writes a
 * checkpoint ({@link SimOptions#checkpointWriteMillis}, no progress meanwhile; asking for an extension when the
 * write would outlast the deadline) and answers DONE, or says nothing ({@link PreemptionMode#checkpointsOnNotice}). When killed it loses what it did since its last checkpoint; the
 * engine queues it again and it resumes from that checkpoint when placed.
 *
 * <p>Periodic checkpoints are reported at the next cycle after they are written, with the instant they were
 * written; they are kept off the timeline so that they cost no cycles of their own.
 */
final class PreemptionDriver {

  private record Due(long time, long seq, JobRun run, long generation) {}

  private final PreemptionMode mode;
  private final long intervalMillis;
  private final long writeMillis;
  private final Timeline timeline;
  private final ElasticModel elastic;
  private long resizes;
  private double resizingGpuMs;
  private final PriorityQueue<Due> periodic = new PriorityQueue<>((a, b) -> a.time != b.time
      ? Long.compare(a.time, b.time) : Long.compare(a.seq, b.seq));
  private long seq;
  private final Set<Long> noticed = new HashSet<>();
  private final Set<Long> forUrgent = new HashSet<>();
  private final Set<String> urgentServed = new LinkedHashSet<>();
  private final List<double[]> urgentWaits = new ArrayList<>(); // {GPUs, wait s}
  private long notices;
  private long withdrawn;
  private long preemptions;
  private long preemptionsForUrgent;
  private int jobsPreempted;
  private double lostGpuMs;
  private double writingGpuMs;

  PreemptionDriver(PreemptionMode mode, SimOptions options, Timeline timeline) {
    this.elastic = options.elastic();
    this.mode = mode;
    this.intervalMillis = mode.enabled() ? options.checkpointIntervalMillis() : 0;
    this.writeMillis = options.checkpointWriteMillis();
    this.timeline = timeline;
  }

  /** The job holds all its containers at {@code now}: it runs from its last checkpoint; its end is scheduled. */
  void started(JobRun r, long now) {
    if (r.timesPreempted == 0 && r.job.queue().equals(UrgentJobs.QUEUE)) {
      urgentWaits.add(new double[] {r.job.gpus(), (now - r.job.submitMillis()) / 1000.0});
    }
    r.progress.start(now, r.rate(elastic));
    scheduleEnd(r);
    schedulePeriodic(r);
  }

  /** The job reached its duration. */
  void ended(JobRun r, long now) {
    r.progress.stop(now);
  }

  /** Before a cycle at {@code now}: the periodic checkpoints written since the last cycle, to the engine. */
  void reportCheckpoints(long now, List<EngineEvent> events) {
    while (!periodic.isEmpty() && periodic.peek().time <= now) {
      Due d = periodic.poll();
      JobProgress p = d.run.progress;
      if (d.generation != p.generation() || !p.catchUp(now, intervalMillis)) {
        continue; // Stopped, paused or resumed since: a newer entry stands for it, or none is due.
      }
      events.add(new EngineEvent.CheckpointReported(d.run.app, p.savedAt(), location(d.run)));
      schedulePeriodic(d.run);
    }
  }

  /**
   * A checkpoint notice: a checkpointing application pauses to write one (or, when it would end before the write
   * does, just finishes), and asks for more time ({@code replies}, to be delivered at once) when that outlasts the
   * deadline; a silent one carries on.
   */
  void notice(Decision.RequestCheckpoint rc, JobRun victim, JobRun beneficiary, long now, List<EngineEvent> replies) {
    if (!noticed.add(rc.noticeId())) {
      return; // The same notice again, after an extension was granted or refused: the write goes on.
    }
    notices++;
    if (beneficiary != null && beneficiary.job.queue().equals(UrgentJobs.QUEUE)) {
      urgentServed.add(beneficiary.job.id());
      forUrgent.add(rc.noticeId());
    }
    if (!mode.checkpointsOnNotice() || victim == null) {
      return;
    }
    JobProgress p = victim.progress;
    long doneAt; // When the victim no longer needs its containers: checkpoint written, or job ended.
    if (p.paused()) {
      // A checkpoint is being written already (for a notice since withdrawn): it answers this one too.
      doneAt = now - p.writingFor(now) + writeMillis;
      victim.noticeToAnswer = rc.noticeId();
    } else if (p.remainingAt(now) <= writeMillis) {
      // It would end before a checkpoint is written: it just finishes, and its containers end on their own.
      doneAt = now + p.remainingAt(now);
    } else {
      p.catchUp(now, intervalMillis);
      p.pause(now);
      doneAt = now + writeMillis;
      victim.noticeToAnswer = rc.noticeId();
      timeline.add(doneAt, Timeline.CHECKPOINT_WRITTEN, victim, null, p.generation());
    }
    long missing = doneAt - rc.deadlineMillis();
    if (missing > 0 && rc.extensionsLeft() > 0) {
      // As spindle-client's handler does when its checkpoint will not fit: EXTEND at once, DONE when written. The
      // engine grants at most maxExtensionMillis; if that is not enough the deadline comes first and the victim is
      // killed, losing what it did since its last periodic checkpoint.
      replies.add(new EngineEvent.CheckpointAnswered(victim.app, rc.noticeId(), CheckpointAnswer.EXTEND,
          missing, null));
    }
  }

  /** The checkpoint a notice asked for is written: the job goes on from it, reports it, and answers DONE. */
  void checkpointWritten(Timeline.Timed e, long now, List<EngineEvent> events) {
    JobRun r = e.run();
    JobProgress p = r.progress;
    if (e.generation() != p.generation()) {
      return; // Killed while writing (the deadline came first).
    }
    long took = p.resume(now);
    if (r.resizing) {
      resizingGpuMs += took * r.heldGpus();
      r.resizing = false;
    } else {
      writingGpuMs += took * r.gpus();
    }
    if (r.rate(elastic) != p.rate()) {
      p.rateFromNow(now, r.rate(elastic));
    }
    scheduleEnd(r);
    schedulePeriodic(r);
    String where = location(r);
    events.add(new EngineEvent.CheckpointReported(r.app, now, where));
    if (r.noticeToAnswer >= 0) {
      events.add(new EngineEvent.CheckpointAnswered(r.app, r.noticeToAnswer, CheckpointAnswer.DONE, 0, where));
      r.noticeToAnswer = -1;
    }
  }

  /**
   * The notice is withdrawn: nothing to answer. A checkpoint being written is finished all the same (spindle-client's
   * handler is not interrupted when a notice closes), so its time is spent for nothing.
   */
  void withdrawn(Decision.CancelCheckpoint cc, JobRun victim) {
    withdrawn++;
    if (victim != null && victim.noticeToAnswer == cc.noticeId()) {
      victim.noticeToAnswer = -1;
    }
  }

  /**
   * An elastic job grew while it ran: it writes a checkpoint ({@link SimOptions#checkpointWriteMillis}, no progress
   * meanwhile, counted as resizing) and goes on from it on all its members, at their speed; one writing a checkpoint
   * already goes on at the new speed when that is written.
   */
  void grew(JobRun r, long now) {
    resizes++;
    JobProgress p = r.progress;
    if (p.paused()) {
      return;
    }
    p.catchUp(now, intervalMillis);
    p.pause(now);
    r.resizing = true;
    timeline.add(now + writeMillis, Timeline.CHECKPOINT_WRITTEN, r, null, p.generation());
  }

  /**
   * Members an elastic job grew by were reclaimed at {@code now} through a resize notice: having checkpointed for the
   * notice (its DONE came now) it goes on at the smaller size from that checkpoint; killed at the deadline instead, it
   * goes on from its last checkpoint, doing again what it did since (counted as resizing).
   */
  void shrunk(JobRun r, double gpusBefore, long now) {
    resizes++;
    JobProgress p = r.progress;
    if (!p.paused() && p.savedAt() == now) {
      p.rateFromNow(now, r.rate(elastic));
    } else {
      if (r.resizing) {
        resizingGpuMs += p.writingFor(now) * gpusBefore;
        r.resizing = false;
      }
      p.catchUp(now, intervalMillis);
      resizingGpuMs += p.restartAt(now, r.rate(elastic)) * gpusBefore;
    }
    r.noticeToAnswer = -1;
    scheduleEnd(r);
    schedulePeriodic(r);
  }

  /** The job's containers are killed at {@code now}: it falls back to its last checkpoint. */
  void preempted(Decision.Preempt p, JobRun r, long now) {
    preemptions++;
    if (forUrgent.contains(p.noticeId())) {
      preemptionsForUrgent++;
    }
    if (r.timesPreempted++ == 0) {
      jobsPreempted++;
    }
    JobProgress progress = r.progress;
    progress.catchUp(now, intervalMillis);
    writingGpuMs += progress.writingFor(now) * r.gpus();
    lostGpuMs += progress.stop(now) * r.heldGpus();
    r.noticeToAnswer = -1;
    r.resizing = false;
  }

  RunResult.Preemption result() {
    double[] waits = new double[urgentWaits.size()];
    Map<Integer, List<Double>> bySize = new TreeMap<>();
    for (int i = 0; i < waits.length; i++) {
      waits[i] = urgentWaits.get(i)[1];
      bySize.computeIfAbsent((int) urgentWaits.get(i)[0], g -> new ArrayList<>()).add(waits[i]);
    }
    Map<Integer, Stats.Tail> tails = new TreeMap<>();
    bySize.forEach((g, w) -> tails.put(g, Stats.Tail.of(w.stream().mapToDouble(Double::doubleValue).toArray())));
    String model = !mode.enabled() ? "none: " + mode.description() : String.format(Locale.ROOT,
        "%s; jobs checkpoint every %s of run time (taking no time) and report it; a checkpoint on notice takes %d s",
        mode.description(), intervalMillis == 0 ? "never" : intervalMillis % 60_000 == 0
        ? intervalMillis / 60_000 + " min" : intervalMillis / 1000 + " s", writeMillis / 1000);
    return new RunResult.Preemption(model, notices, withdrawn, preemptions, preemptionsForUrgent, jobsPreempted,
        lostGpuMs / 3_600_000.0, writingGpuMs / 3_600_000.0, Stats.Tail.of(waits), tails, urgentServed.size(),
        resizes, resizingGpuMs / 3_600_000.0);
  }

  private void scheduleEnd(JobRun r) {
    timeline.add(r.progress.endAt(), Timeline.END, r, null, r.progress.generation());
  }

  private void schedulePeriodic(JobRun r) {
    if (intervalMillis > 0) {
      periodic.add(new Due(r.progress.savedAt() + intervalMillis, seq++, r, r.progress.generation()));
    }
  }

  /** Where a job's checkpoint is, for the engine to hand back when it resumes: its id and progress in seconds. */
  private static String location(JobRun r) {
    return "ckpt://" + r.job.id() + "/" + r.progress.savedProgress() / 1000;
  }
}
