package io.spindle.ha;

import io.spindle.core.engine.DurableState;
import io.spindle.core.engine.Elasticity;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.GpuIsolation;
import io.spindle.core.model.GpuModelSet;
import io.spindle.core.model.Resources;
import io.spindle.core.preemption.CheckpointHandshake;
import io.spindle.core.preemption.Need;
import io.spindle.core.reliability.FailureObservations;
import io.spindle.ha.avro.BelowFairShareSinceRecord;
import io.spindle.ha.avro.CheckpointReportRecord;
import io.spindle.ha.avro.DeclaredEndRecord;
import io.spindle.ha.avro.FailureObservationsRecord;
import io.spindle.ha.avro.HandshakeStateRecord;
import io.spindle.ha.avro.NeedRecord;
import io.spindle.ha.avro.NoticeContainerRecord;
import io.spindle.ha.avro.NoticeRecord;
import io.spindle.ha.avro.PlacementSpecRecord;
import io.spindle.ha.avro.ReclaimRecord;
import io.spindle.ha.avro.ReservationBackoffRecord;
import io.spindle.ha.avro.ReservationRecord;
import io.spindle.ha.avro.ResourceVectorRecord;
import io.spindle.ha.avro.ResourcesRecord;
import io.spindle.ha.avro.ResumeRecord;
import io.spindle.ha.avro.SchedulerState;
import io.spindle.ha.avro.UnitRecord;
import io.spindle.ha.avro.WaitingSinceRecord;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Function;

/**
 * Converts the engine's {@link DurableState} to the Avro records of {@code SchedulerState.avsc} and back, field for
 * field. Converting back validates as the engine's records do (an {@link IllegalArgumentException} naming the field).
 */
final class SchedulerStateRecords {

  private SchedulerStateRecords() {}

  static SchedulerState toRecord(DurableState s, long leaderEpoch, int schemaVersion) {
    return new SchedulerState(schemaVersion, leaderEpoch, s.nextNoticeId(), s.nextUnitId(),
        map(s.units(), u -> new UnitRecord(u.unitId(), u.appId().value(), u.requestKey(), resources(u.shape()),
            spec(u.spec()), u.startMillis(), u.size(), u.containers())),
        map(s.reservations(), r -> new ReservationRecord(r.appId().value(), r.requestKey(), r.subtree(),
            map(r.nodeIds(), NodeId::value), r.createdMillis(), r.gangSize())),
        map(s.reservationBackoffs(), b -> new ReservationBackoffRecord(b.appId().value(), b.requestKey(),
            b.noReservationBeforeMillis())),
        map(s.reclaims(), r -> new ReclaimRecord(need(r.need()), r.withdrawn(), map(r.notices(),
            SchedulerStateRecords::notice))),
        map(s.checkpoints(), c -> new CheckpointReportRecord(c.appId().value(), c.atMillis(), c.location(),
            c.writeMillis().isPresent() ? c.writeMillis().getAsLong() : null)),
        map(s.resumeFrom(), r -> new ResumeRecord(r.appId().value(), r.requestKey(), r.location())),
        map(s.starvation().requests(), w -> new WaitingSinceRecord(w.appId().value(), w.requestKey(), w.sinceMillis())),
        map(s.starvation().queues(), b -> new BelowFairShareSinceRecord(b.queue(), b.sinceMillis())),
        map(s.declaredEnds(), e -> new DeclaredEndRecord(e.container(), e.endsAtMillis())),
        map(s.attained(), a -> new io.spindle.ha.avro.AttainedRecord(a.appId().value(), a.gpuUnitMillis(),
            a.ranMillis(), a.asOfMillis(), a.submittedMillis(), a.declaredMillis())),
        map(s.learnedRuntimes(), l -> new io.spindle.ha.avro.LearnedRuntimeRecord(l.user(), l.kind(), l.runMillis())),
        map(s.cordons(), c -> new io.spindle.ha.avro.CordonRecord(c.nodeId().value(), c.reason())),
        new FailureObservationsRecord(s.failures().gpuMillis(), s.failures().asOfMillis(), s.failures().gpus(),
            s.failures().failures()),
        map(s.gpuFaults(), f -> new io.spindle.ha.avro.GpuFaultRecord(f.nodeId().value(), f.gpuIndex(),
            f.health().name(), f.failureMillis(), f.quarantinedUntilMillis(), f.cordonReason())),
        map(s.usageHistory(), u -> new io.spindle.ha.avro.UsageRecord(u.queue(), u.user(), u.memoryMbSeconds(),
            u.vcoreSeconds(), u.gpuUnitSeconds(), u.rate().memoryMb(), u.rate().vcores(), u.rate().gpuUnits(),
            u.asOfMillis())));
  }

  static DurableState toState(SchedulerState r) {
    return new DurableState(r.getNextNoticeId(), r.getNextUnitId(),
        map(r.getUnits(), u -> new DurableState.UnitState(u.getUnitId(), AppId.of(u.getAppId()), u.getRequestKey(),
            resources(u.getShape()), spec(u.getSpec()), u.getStartMillis(), u.getSize(), u.getContainers())),
        map(r.getReservations(), v -> new DurableState.ReservationState(AppId.of(v.getAppId()), v.getRequestKey(),
            v.getSubtree(), map(v.getNodeIds(), NodeId::of), v.getCreatedMillis(), v.getGangSize())),
        map(r.getReservationBackoffs(), b -> new DurableState.ReservationBackoff(AppId.of(b.getAppId()),
            b.getRequestKey(), b.getNoReservationBeforeMillis())),
        map(r.getReclaims(), c -> new DurableState.ReclaimState(need(c.getNeed()), c.getWithdrawn(),
            map(c.getNotices(), SchedulerStateRecords::notice))),
        map(r.getCheckpoints(), c -> new DurableState.CheckpointState(AppId.of(c.getAppId()), c.getAtMillis(),
            c.getLocation(), c.getWriteMillis() == null ? OptionalLong.empty() : OptionalLong.of(c.getWriteMillis()))),
        map(r.getResumeFrom(), v -> new DurableState.ResumeState(AppId.of(v.getAppId()), v.getRequestKey(),
            v.getLocation())),
        new DurableState.StarvationState(
            map(r.getWaitingSince(), w -> new DurableState.WaitingSince(AppId.of(w.getAppId()), w.getRequestKey(),
                w.getSinceMillis())),
            map(r.getBelowFairShareSince(), b -> new DurableState.BelowFairShareSince(b.getQueue(),
                b.getSinceMillis()))),
        map(r.getDeclaredEnds(), e -> new DurableState.DeclaredEnd(e.getContainer(), e.getEndsAtMillis())),
        map(r.getAttained(), a -> new DurableState.AttainedState(AppId.of(a.getAppId()), a.getGpuUnitMillis(),
            a.getRanMillis(), a.getAsOfMillis(), a.getSubmittedMillis(), a.getDeclaredMillis())),
        map(r.getLearnedRuntimes(), l -> new DurableState.LearnedRuntime(l.getUser(), l.getKind(),
            l.getRunMillis())),
        map(r.getCordons(), c -> new DurableState.CordonState(NodeId.of(c.getNodeId()), c.getReason())),
        new FailureObservations.Saved(r.getFailureObservations().getGpuMillis(),
            r.getFailureObservations().getAsOfMillis(), r.getFailureObservations().getGpus(),
            r.getFailureObservations().getFailures()),
        map(r.getGpuFaults(), f -> new DurableState.GpuFaultState(NodeId.of(f.getNodeId()), f.getGpuIndex(),
            io.spindle.core.model.GpuHealth.State.valueOf(f.getHealth()), f.getFailureMillis(),
            f.getQuarantinedUntilMillis(), f.getCordonReason())),
        map(r.getUsageHistory(), u -> new DurableState.UsageState(u.getQueue(), u.getUser(),
            u.getMemoryMbSeconds(), u.getVcoreSeconds(), u.getGpuUnitSeconds(),
            new io.spindle.core.model.ResourceVector(u.getRateMemoryMb(), u.getRateVcores(), u.getRateGpuUnits()),
            u.getAsOfMillis())));
  }

  private static NoticeRecord notice(DurableState.NoticeState n) {
    return new NoticeRecord(n.noticeId(), n.unitId(), n.appId().value(), n.requestKey(),
        map(n.containers(), c -> new NoticeContainerRecord(c.name(), c.nodeId().value(), resources(c.shape()),
            c.endsAtMillis(), c.ended())),
        n.noticedAtMillis(), n.deadlineMillis(), n.extensionsGranted(), n.maxExtensions(), n.maxExtensionMillis(),
        n.reason(), n.checkpointLocation(), HandshakeStateRecord.valueOf(n.state().name()), n.reclaimReason());
  }

  private static DurableState.NoticeState notice(NoticeRecord n) {
    return new DurableState.NoticeState(n.getNoticeId(), n.getUnitId(), AppId.of(n.getAppId()), n.getRequestKey(),
        map(n.getContainers(), c -> new DurableState.NoticeContainer(c.getName(), NodeId.of(c.getNodeId()),
            resources(c.getShape()), c.getEndsAtMillis(), c.getEnded())),
        n.getNoticedAtMillis(), n.getDeadlineMillis(), n.getExtensionsGranted(), n.getMaxExtensions(),
        n.getMaxExtensionMillis(), n.getReason(), n.getCheckpointLocation(),
        CheckpointHandshake.State.valueOf(n.getState().name()), n.getReclaimReason());
  }

  private static ResourcesRecord resources(Resources r) {
    return new ResourcesRecord(r.memoryMb(), r.vcores(), r.gpus(), r.models().text(), r.migProfile(),
        r.migInstances(), r.partition(), r.gpuMilli(), r.gpuMemoryMb(), r.isolation().text());
  }

  private static Resources resources(ResourcesRecord r) {
    return new Resources(r.getMemoryMb(), r.getVcores(), r.getGpus(), GpuModelSet.parse(r.getGpuModel()),
        r.getMigProfile(), r.getMigInstances(), r.getPartition(), r.getGpuMilli(), r.getGpuMemoryMb(),
        GpuIsolation.parse("isolation", r.getIsolation()));
  }

  private static PlacementSpecRecord spec(PlacementSpec s) {
    return new PlacementSpecRecord(s.gang(), s.topologyLevel(), s.required(), s.maxRuntimeMillis(), s.preemptible(),
        s.restartOnMemberLoss(), s.elasticity().min(), s.elasticity().step());
  }

  private static PlacementSpec spec(PlacementSpecRecord s) {
    return new PlacementSpec(s.getGang(), s.getTopologyLevel(), s.getRequired(), s.getMaxRuntimeMillis(),
        s.getPreemptible(), s.getRestartOnMemberLoss(),
        s.getElasticMin() > 0 ? Elasticity.of(s.getElasticMin(), s.getElasticStep()) : Elasticity.RIGID);
  }

  private static NeedRecord need(Need n) {
    return new NeedRecord(n.appId().value(), n.requestKey(), n.queue(), n.user(), n.priority(), vector(n.charge()),
        n.containers(), n.gang(), n.crossQueue(), vector(n.userUsage()),
        n.userLimit() == null ? null : vector(n.userLimit()), n.reorders(), n.rank(), n.submitMillis());
  }

  private static Need need(NeedRecord n) {
    return new Need(AppId.of(n.getAppId()), n.getRequestKey(), n.getQueue(), n.getUser(), n.getPriority(),
        vector(n.getCharge()), n.getContainers(), n.getGang(), n.getCrossQueue(), vector(n.getUserUsage()),
        n.getUserLimit() == null ? null : vector(n.getUserLimit()), n.getReorders(), n.getRank(), n.getSubmitMillis());
  }

  private static ResourceVectorRecord vector(ResourceVector v) {
    return new ResourceVectorRecord(v.memoryMb(), v.vcores(), v.gpuUnits());
  }

  private static ResourceVector vector(ResourceVectorRecord v) {
    return new ResourceVector(v.getMemoryMb(), v.getVcores(), v.getGpuUnits());
  }

  private static <A, B> List<B> map(List<A> in, Function<A, B> f) {
    return in.stream().map(f).toList();
  }
}
