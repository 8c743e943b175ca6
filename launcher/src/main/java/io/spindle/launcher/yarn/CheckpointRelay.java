package io.spindle.launcher.yarn;

import io.spindle.client.AmRmTokenSecret;
import io.spindle.client.CheckpointDecision;
import io.spindle.client.CheckpointHandler;
import io.spindle.client.CheckpointNoticeView;
import io.spindle.client.SpindleCheckpointClient;
import io.spindle.client.SpindleZkSettings;
import java.io.IOException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.hadoop.conf.Configuration;

/**
 * The job's end of Spindle's checkpoint handshake. A notice (Spindle will take the gang's GPUs back at a deadline)
 * is held here until the workers learn of it — their next progress report is answered {@code checkpoint <notice>} —
 * and answered DONE with the checkpoint the workers report written, or EXTEND when a worker asks for more time.
 * Every checkpoint a worker reports, asked for or periodic, is also reported to Spindle, so a gang reclaimed
 * without an answer re-queues knowing where it resumes from. A <em>resize</em> notice (an elastic gang gives some
 * members back) goes to the {@link Resizer} first, which says whether the workers must checkpoint for it. Without
 * Spindle's ZooKeeper in the configuration (a cluster without preemption notices) the relay does nothing.
 */
final class CheckpointRelay implements AutoCloseable {

  /** Who shrinks the gang when Spindle asks for some of its members back. */
  interface Resizer {
    /** Resize notice {@code notice} arrived: true when the workers must checkpoint first, false to answer at once. */
    boolean resize(CheckpointNoticeView notice);

    /** Spindle closed notice {@code noticeId} (reclaimed or withdrawn). */
    void closed(long noticeId);
  }

  private static final Resizer NO_RESIZE = new Resizer() {
    @Override
    public boolean resize(CheckpointNoticeView notice) {
      return true;
    }

    @Override
    public void closed(long noticeId) {}
  };

  private final SpindleCheckpointClient spindle;
  private final Consumer<String> note;
  private final LongSupplier clock;
  private final Resizer resizer;
  private volatile CheckpointNoticeView pending;

  private CheckpointRelay(SpindleCheckpointClient spindle, Consumer<String> note, LongSupplier clock,
      Resizer resizer) {
    this.spindle = spindle;
    this.note = note;
    this.clock = clock;
    this.resizer = resizer;
  }

  /** Connects as the application (authenticated with the attempt's AMRMToken) when Spindle's ZooKeeper is set. */
  static CheckpointRelay connect(Configuration conf, String appId, Consumer<String> note, LongSupplier clock) {
    return connect(conf, appId, note, clock, NO_RESIZE);
  }

  static CheckpointRelay connect(Configuration conf, String appId, Consumer<String> note, LongSupplier clock,
      Resizer resizer) {
    SpindleZkSettings zk = SpindleZkSettings.from(conf::get);
    if (!zk.enabled()) {
      return new CheckpointRelay(null, note, clock, resizer);
    }
    try {
      SpindleCheckpointClient client = SpindleCheckpointClient.builder().settings(zk).appId(appId)
          .secret(AmRmTokenSecret.currentUser()).build();
      CheckpointRelay relay = new CheckpointRelay(client, note, clock, resizer);
      client.register(relay.handler());
      return relay;
    } catch (IOException | RuntimeException e) {
      note.accept("checkpoint notices unavailable (" + e.getMessage() + "): a preemption reclaims the workers at"
          + " its deadline and the job resumes from its last checkpoint");
      return new CheckpointRelay(null, note, clock, resizer);
    }
  }

  private CheckpointHandler handler() {
    return new CheckpointHandler() {
      @Override
      public CheckpointDecision onNotice(CheckpointNoticeView notice) {
        long seconds = Math.max(0, notice.timeLeft(clock.getAsLong()).toSeconds());
        if (notice.refusal().isPresent()) {
          note.accept("Spindle refused more time for notice " + notice.noticeId() + ": " + notice.refusal().get());
        } else if (notice.isResize()) {
          note.accept(String.format(Locale.ROOT, "resize notice %d from Spindle: %s; %d worker container(s) go"
              + " back in %d s and the gang runs on with %d", notice.noticeId(), notice.reason(),
              notice.containerIds().size(), seconds, notice.targetSize()));
        } else {
          note.accept(String.format(Locale.ROOT, "checkpoint notice %d from Spindle: %s; reclaim in %d s;"
              + " asking the workers to checkpoint", notice.noticeId(), notice.reason(), seconds));
        }
        if (notice.isResize() && !resizer.resize(notice)) {
          note.accept("answered notice " + notice.noticeId() + " DONE at once: none of its containers runs a worker");
          return CheckpointDecision.done();
        }
        pending = notice;
        return CheckpointDecision.later(); // answered when a worker reports the checkpoint written
      }

      @Override
      public void onClosed(long noticeId) {
        CheckpointNoticeView p = pending;
        if (p != null && p.noticeId() == noticeId) {
          pending = null;
        }
        resizer.closed(noticeId);
      }
    };
  }

  /** The notice the workers should checkpoint for, if one is open. */
  Optional<Long> pendingNotice() {
    return pending().map(CheckpointNoticeView::noticeId);
  }

  /** The open notice, if any. */
  Optional<CheckpointNoticeView> pending() {
    return Optional.ofNullable(pending);
  }

  /**
   * A worker wrote a checkpoint (in {@code writeMillis}, if it said): Spindle learns where, and how long it took, and
   * an open notice is answered DONE with it.
   */
  void checkpointed(String path, OptionalLong writeMillis) {
    if (spindle == null) {
      return;
    }
    long now = clock.getAsLong();
    CheckpointNoticeView p = pending;
    try {
      if (writeMillis.isPresent()) {
        spindle.reportCheckpoint(path, now, Duration.ofMillis(writeMillis.getAsLong()));
      } else {
        spindle.reportCheckpoint(path, now);
      }
      if (p != null) {
        spindle.answer(p.noticeId(), CheckpointDecision.done(path, now));
        pending = null;
        note.accept("answered notice " + p.noticeId() + " DONE with " + path);
      }
    } catch (IOException | RuntimeException e) {
      note.accept("could not tell Spindle of checkpoint " + path + ": " + e.getMessage());
    }
  }

  /** A worker needs more time for the checkpoint asked of it. */
  void extend(long seconds) {
    CheckpointNoticeView p = pending;
    if (spindle == null || p == null || seconds <= 0) {
      return;
    }
    try {
      spindle.answer(p.noticeId(), CheckpointDecision.extend(Duration.ofSeconds(seconds)));
      note.accept("asked Spindle for " + seconds + " s more on notice " + p.noticeId());
    } catch (IOException | RuntimeException e) {
      note.accept("could not ask Spindle for more time: " + e.getMessage());
    }
  }

  @Override
  public void close() {
    if (spindle != null) {
      spindle.close();
    }
  }
}
