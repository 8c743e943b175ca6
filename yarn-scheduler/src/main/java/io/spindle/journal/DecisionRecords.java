package io.spindle.journal;

import static io.spindle.journal.ModelRecords.layout;
import static io.spindle.journal.ModelRecords.map;
import static io.spindle.journal.ModelRecords.resources;
import static io.spindle.journal.ModelRecords.vector;

import io.spindle.core.engine.Decision;
import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import io.spindle.journal.avro.AllocateRecord;
import io.spindle.journal.avro.CancelCheckpointRecord;
import io.spindle.journal.avro.PreemptRecord;
import io.spindle.journal.avro.ReconfigureMigRecord;
import io.spindle.journal.avro.RejectRecord;
import io.spindle.journal.avro.RequestCheckpointRecord;
import io.spindle.journal.avro.ResizeRecord;
import io.spindle.journal.avro.RestartGangRecord;
import io.spindle.journal.avro.StopContainersRecord;
import io.spindle.journal.avro.ReserveRecord;
import io.spindle.journal.avro.WaitRecord;

/** Every {@link Decision} type as its record in {@code DecisionJournal.avsc}, field for field, and back. */
final class DecisionRecords {

  private final ModelRecords model;

  DecisionRecords(ModelRecords model) {
    this.model = model;
  }

  Object toRecord(Decision decision) {
    if (decision instanceof Decision.Allocate d) {
      return new AllocateRecord(d.allocationId(), d.appId().value(), d.requestKey(), d.nodeId().value(),
          resources(d.shape()), map(d.gpus(), model::slot), vector(d.charge()));
    } else if (decision instanceof Decision.Reject d) {
      return new RejectRecord(d.appId().value(), d.requestKey(), d.reason());
    } else if (decision instanceof Decision.Reserve d) {
      return new ReserveRecord(d.appId().value(), d.requestKey(), d.subtree(), map(d.nodeIds(), NodeId::value),
          d.projectedStartMillis());
    } else if (decision instanceof Decision.Wait d) {
      return new WaitRecord(d.appId().value(), d.requestKey(), d.reason());
    } else if (decision instanceof Decision.ReconfigureMig d) {
      return new ReconfigureMigRecord(d.nodeId().value(), d.gpuIndex(), layout(d.layout()), d.availableAtMillis());
    } else if (decision instanceof Decision.RequestCheckpoint d) {
      return new RequestCheckpointRecord(d.noticeId(), d.appId().value(), d.requestKey(), d.allocationIds(),
          d.deadlineMillis(), d.extensionsGranted(), d.maxExtensions(), d.maxExtensionMillis(), d.refusal(),
          d.forAppId().value(), d.forRequestKey(), d.reason(), d.targetSize());
    } else if (decision instanceof Decision.CancelCheckpoint d) {
      return new CancelCheckpointRecord(d.noticeId(), d.appId().value(), d.allocationIds(), d.reason());
    } else if (decision instanceof Decision.Preempt d) {
      return new PreemptRecord(d.noticeId(), d.appId().value(), d.requestKey(), d.allocationIds(),
          d.checkpointLocation(), d.reason(), d.targetSize());
    } else if (decision instanceof Decision.RestartGang d) {
      return new RestartGangRecord(d.appId().value(), d.requestKey(), d.allocationIds(), d.lostAllocationIds(),
          d.reason());
    } else if (decision instanceof Decision.StopContainers d) {
      return new StopContainersRecord(d.appId().value(), d.allocationIds(), d.reason());
    } else if (decision instanceof Decision.Resize d) {
      return new ResizeRecord(d.appId().value(), d.requestKey(), d.fromSize(), d.toSize(), d.allocationIds(),
          d.reason());
    }
    throw new IllegalArgumentException("no journal record for decision " + decision);
  }

  Decision toDecision(Object record) {
    if (record instanceof AllocateRecord r) {
      return new Decision.Allocate(r.getAllocationId(), AppId.of(r.getAppId()), r.getRequestKey(),
          NodeId.of(r.getNodeId()), resources(r.getShape()), map(r.getGpus(), model::slot), vector(r.getCharge()));
    } else if (record instanceof RejectRecord r) {
      return new Decision.Reject(AppId.of(r.getAppId()), r.getRequestKey(), r.getReason());
    } else if (record instanceof ReserveRecord r) {
      return new Decision.Reserve(AppId.of(r.getAppId()), r.getRequestKey(), r.getSubtree(),
          map(r.getNodeIds(), NodeId::of), r.getProjectedStartMillis());
    } else if (record instanceof WaitRecord r) {
      return new Decision.Wait(AppId.of(r.getAppId()), r.getRequestKey(), r.getReason());
    } else if (record instanceof ReconfigureMigRecord r) {
      return new Decision.ReconfigureMig(NodeId.of(r.getNodeId()), r.getGpuIndex(), model.layout(r.getLayout()),
          r.getAvailableAtMillis());
    } else if (record instanceof RequestCheckpointRecord r) {
      return new Decision.RequestCheckpoint(r.getNoticeId(), AppId.of(r.getAppId()), r.getRequestKey(),
          r.getAllocationIds(),
          r.getDeadlineMillis(), r.getExtensionsGranted(), r.getMaxExtensions(), r.getMaxExtensionMillis(),
          r.getRefusal(), AppId.of(r.getForAppId()), r.getForRequestKey(), r.getReason(), r.getTargetSize());
    } else if (record instanceof CancelCheckpointRecord r) {
      return new Decision.CancelCheckpoint(r.getNoticeId(), AppId.of(r.getAppId()), r.getAllocationIds(),
          r.getReason());
    } else if (record instanceof PreemptRecord r) {
      return new Decision.Preempt(r.getNoticeId(), AppId.of(r.getAppId()), r.getRequestKey(), r.getAllocationIds(),
          r.getCheckpointLocation(), r.getReason(), r.getTargetSize());
    } else if (record instanceof RestartGangRecord r) {
      return new Decision.RestartGang(AppId.of(r.getAppId()), r.getRequestKey(), r.getAllocationIds(),
          r.getLostAllocationIds(), r.getReason());
    } else if (record instanceof StopContainersRecord r) {
      return new Decision.StopContainers(AppId.of(r.getAppId()), r.getAllocationIds(), r.getReason());
    } else if (record instanceof ResizeRecord r) {
      return new Decision.Resize(AppId.of(r.getAppId()), r.getRequestKey(), r.getFromSize(), r.getToSize(),
          r.getAllocationIds(), r.getReason());
    }
    throw new IllegalArgumentException("not a journal decision record: " + record);
  }
}
