package io.spindle.core.engine;

import io.spindle.core.model.AppId;
import io.spindle.core.model.RequestRef;
import io.spindle.core.preemption.CheckpointHandshake;
import io.spindle.core.preemption.Need;
import io.spindle.core.preemption.ReclaimLedger;
import io.spindle.core.preemption.StarvationClock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * What preemption knows beyond the runs themselves, and what a failover carries to the next leader: the reclaims in
 * flight, how long requests and queues have starved, the applications' checkpoint reports, and where re-queued
 * requests resume. Shared by the preemption bridge ({@link EnginePreemption}), its planner snapshot and its
 * failover; owned by the bridge.
 */
final class PreemptionState {

  /**
   * An application's last checkpoint report: work before {@code atMillis} is not lost by preemption;
   * {@code writeMillis}, how long its checkpoints take to write, as it last said.
   */
  record Checkpoint(long atMillis, String location, OptionalLong writeMillis) {}

  final ReclaimLedger ledger = new ReclaimLedger();
  final StarvationClock starvation = new StarvationClock();
  /** By application id. */
  final Map<AppId, Checkpoint> checkpoints = new LinkedHashMap<>();
  /** Where a re-queued request should resume from. */
  final Map<RequestRef, String> resumeFrom = new LinkedHashMap<>();
  /**
   * Counts changes to what a failover exports (runs, the ledger, checkpoint reports, resume locations, starvation),
   * so that a driver saves the durable state only when it changed.
   */
  private long durableChanges;

  void durableChange() {
    durableChanges++;
  }

  long durableChanges() {
    return durableChanges;
  }

  /** Where a reclaimed victim resumes: the location its answer gave, else its application's last report. */
  String checkpointOf(CheckpointHandshake h) {
    if (h.checkpointLocation() != null) {
      return h.checkpointLocation();
    }
    Checkpoint c = checkpoints.get(h.appId());
    return c == null ? null : c.location();
  }

  /** When the application last checkpointed, {@link Long#MIN_VALUE} if it never said. */
  long lastCheckpointMillis(AppId appId) {
    Checkpoint c = checkpoints.get(appId);
    return c == null ? Long.MIN_VALUE : c.atMillis();
  }

  /**
   * By victim unit id: 0 for one that stops whole, else the size its elastic gang runs on with once its reclaims are
   * done (set by the bridge, which knows the runs).
   */
  java.util.function.LongToIntFunction targetSizeOf = unitId -> 0;

  /** The notice as it stands; {@code refusal} says why an extension was refused. */
  Decision.RequestCheckpoint notice(CheckpointHandshake h, String refusal) {
    Need n = ledger.planOf(h.noticeId()).need();
    return new Decision.RequestCheckpoint(h.noticeId(), h.appId(), h.requestKey(), h.runningAllocationIds(),
        h.deadlineMillis(), h.extensionsGranted(), h.maxExtensions(), h.maxExtensionMillis(), refusal, n.appId(),
        n.requestKey(), h.reason(), targetSizeOf.applyAsInt(h.unitId()));
  }

  /** The kill of a victim's {@code running} containers, for {@code reason}. */
  Decision.Preempt preempt(CheckpointHandshake h, List<Long> running, String reason) {
    return new Decision.Preempt(h.noticeId(), h.appId(), h.requestKey(), running, checkpointOf(h), reason,
        targetSizeOf.applyAsInt(h.unitId()));
  }

  /** For whom the victim of this notice is reclaimed, for people. */
  String reclaimedFor(CheckpointHandshake h) {
    return "reclaimed for " + describe(ledger.planOf(h.noticeId()).need());
  }

  static String describe(Need n) {
    return (n.gang() ? "the gang of " + n.containers() : "a container") + " of request " + n.requestKey()
        + " of application " + n.appId() + " in queue " + n.queue();
  }
}
