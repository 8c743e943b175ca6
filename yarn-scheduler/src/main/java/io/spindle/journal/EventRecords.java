package io.spindle.journal;

import static io.spindle.journal.ModelRecords.layout;
import static io.spindle.journal.ModelRecords.node;
import static io.spindle.journal.ModelRecords.resources;
import static io.spindle.journal.ModelRecords.spec;

import io.spindle.core.engine.EngineEvent;
import io.spindle.core.model.AppId;
import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.HealthEvidence;
import io.spindle.core.model.NodeId;
import io.spindle.core.preemption.CheckpointAnswer;
import io.spindle.journal.avro.AppFinishedRecord;
import io.spindle.journal.avro.AppPriorityChangedRecord;
import io.spindle.journal.avro.GpuCordonChangedRecord;
import io.spindle.journal.avro.GpuHealthReportedRecord;
import io.spindle.journal.avro.HealthEvidenceRecord;
import io.spindle.journal.avro.NodeCordonChangedRecord;
import io.spindle.journal.avro.NodePartitionChangedRecord;
import io.spindle.journal.avro.AppSubmittedRecord;
import io.spindle.journal.avro.CheckpointAnswerRecord;
import io.spindle.journal.avro.CheckpointAnsweredRecord;
import io.spindle.journal.avro.CheckpointReportedRecord;
import io.spindle.journal.avro.ContainerFinishedRecord;
import io.spindle.journal.avro.ContainerLostRecord;
import io.spindle.journal.avro.ContainerRecoveredRecord;
import io.spindle.journal.avro.DemandRecord;
import io.spindle.journal.avro.MigLayoutReportedRecord;
import io.spindle.journal.avro.NodeAddedRecord;
import io.spindle.journal.avro.NodeRemovedRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/** Every {@link EngineEvent} type as its record in {@code DecisionJournal.avsc}, field for field, and back. */
final class EventRecords {

  private final ModelRecords model;

  EventRecords(ModelRecords model) {
    this.model = model;
  }

  static Object toRecord(EngineEvent event) {
    if (event instanceof EngineEvent.NodeAdded e) {
      return new NodeAddedRecord(node(e.node()));
    } else if (event instanceof EngineEvent.NodeRemoved e) {
      return new NodeRemovedRecord(e.nodeId().value());
    } else if (event instanceof EngineEvent.AppSubmitted e) {
      return new AppSubmittedRecord(e.appId().value(), e.queue(), e.user(), e.priority(), e.kind());
    } else if (event instanceof EngineEvent.AppFinished e) {
      return new AppFinishedRecord(e.appId().value());
    } else if (event instanceof EngineEvent.Demand e) {
      return new DemandRecord(e.appId().value(), e.requestKey(), resources(e.shape()), e.count(), spec(e.spec()));
    } else if (event instanceof EngineEvent.MigLayoutReported e) {
      return new MigLayoutReportedRecord(e.nodeId().value(), e.gpuIndex(), layout(e.layout()));
    } else if (event instanceof EngineEvent.ContainerRecovered e) {
      return new ContainerRecoveredRecord(e.allocationId(), e.appId().value(), e.requestKey(), e.nodeId().value(),
          resources(e.shape()), e.preemptible());
    } else if (event instanceof EngineEvent.ContainerFinished e) {
      return new ContainerFinishedRecord(e.allocationId());
    } else if (event instanceof EngineEvent.ContainerLost e) {
      return new ContainerLostRecord(e.allocationId(), e.reason());
    } else if (event instanceof EngineEvent.CheckpointAnswered e) {
      return new CheckpointAnsweredRecord(e.appId().value(), e.noticeId(),
          CheckpointAnswerRecord.valueOf(e.answer().name()), e.requestedExtensionMillis(), e.checkpointLocation());
    } else if (event instanceof EngineEvent.AppPriorityChanged e) {
      return new AppPriorityChangedRecord(e.appId().value(), e.priority());
    } else if (event instanceof EngineEvent.NodePartitionChanged e) {
      return new NodePartitionChangedRecord(e.nodeId().value(), e.partition(), e.sharesIdle());
    } else if (event instanceof EngineEvent.NodeCordonChanged e) {
      return new NodeCordonChangedRecord(e.nodeId().value(), e.reason());
    } else if (event instanceof EngineEvent.GpuHealthReported e) {
      List<HealthEvidenceRecord> evidence = new ArrayList<>();
      e.health().evidence().forEach(h -> evidence.add(new HealthEvidenceRecord(h.kind().name(), h.value(), h.detail())));
      return new GpuHealthReportedRecord(e.nodeId().value(), e.gpuIndex(), e.health().state().name(), evidence);
    } else if (event instanceof EngineEvent.GpuCordonChanged e) {
      return new GpuCordonChangedRecord(e.nodeId().value(), e.gpuIndex(), e.reason());
    } else if (event instanceof EngineEvent.CheckpointReported e) {
      return new CheckpointReportedRecord(e.appId().value(), e.lastCheckpointMillis(), e.location(),
          e.writeMillis().isPresent() ? e.writeMillis().getAsLong() : null);
    }
    throw new IllegalArgumentException("no journal record for event " + event);
  }

  EngineEvent toEvent(Object record) {
    if (record instanceof NodeAddedRecord r) {
      return new EngineEvent.NodeAdded(model.node(r.getNode()));
    } else if (record instanceof NodeRemovedRecord r) {
      return new EngineEvent.NodeRemoved(NodeId.of(r.getNodeId()));
    } else if (record instanceof AppSubmittedRecord r) {
      return new EngineEvent.AppSubmitted(AppId.of(r.getAppId()), r.getQueue(), r.getUser(), r.getPriority(),
          r.getKind());
    } else if (record instanceof AppFinishedRecord r) {
      return new EngineEvent.AppFinished(AppId.of(r.getAppId()));
    } else if (record instanceof DemandRecord r) {
      return new EngineEvent.Demand(AppId.of(r.getAppId()), r.getRequestKey(), resources(r.getShape()), r.getCount(),
          spec(r.getSpec()));
    } else if (record instanceof MigLayoutReportedRecord r) {
      return new EngineEvent.MigLayoutReported(NodeId.of(r.getNodeId()), r.getGpuIndex(), model.layout(r.getLayout()));
    } else if (record instanceof ContainerRecoveredRecord r) {
      return new EngineEvent.ContainerRecovered(r.getAllocationId(), AppId.of(r.getAppId()), r.getRequestKey(),
          NodeId.of(r.getNodeId()), resources(r.getShape()), r.getPreemptible());
    } else if (record instanceof ContainerFinishedRecord r) {
      return new EngineEvent.ContainerFinished(r.getAllocationId());
    } else if (record instanceof ContainerLostRecord r) {
      return new EngineEvent.ContainerLost(r.getAllocationId(), r.getReason());
    } else if (record instanceof CheckpointAnsweredRecord r) {
      return new EngineEvent.CheckpointAnswered(AppId.of(r.getAppId()), r.getNoticeId(),
          CheckpointAnswer.valueOf(r.getAnswer().name()), r.getRequestedExtensionMillis(), r.getCheckpointLocation());
    } else if (record instanceof AppPriorityChangedRecord r) {
      return new EngineEvent.AppPriorityChanged(AppId.of(r.getAppId()), r.getPriority());
    } else if (record instanceof NodePartitionChangedRecord r) {
      return new EngineEvent.NodePartitionChanged(NodeId.of(r.getNodeId()), r.getPartition(), r.getSharesIdle());
    } else if (record instanceof NodeCordonChangedRecord r) {
      return new EngineEvent.NodeCordonChanged(NodeId.of(r.getNodeId()), r.getReason());
    } else if (record instanceof GpuHealthReportedRecord r) {
      List<HealthEvidence> evidence = new ArrayList<>();
      r.getEvidence().forEach(h -> evidence.add(
          new HealthEvidence(HealthEvidence.Kind.valueOf(h.getKind()), h.getValue(), h.getDetail())));
      return new EngineEvent.GpuHealthReported(NodeId.of(r.getNodeId()), r.getGpuIndex(),
          new GpuHealth(GpuHealth.State.valueOf(r.getState()), evidence));
    } else if (record instanceof GpuCordonChangedRecord r) {
      return new EngineEvent.GpuCordonChanged(NodeId.of(r.getNodeId()), r.getGpuIndex(), r.getReason());
    } else if (record instanceof CheckpointReportedRecord r) {
      return new EngineEvent.CheckpointReported(AppId.of(r.getAppId()), r.getLastCheckpointMillis(), r.getLocation(),
          r.getWriteMillis() == null ? OptionalLong.empty() : OptionalLong.of(r.getWriteMillis()));
    }
    throw new IllegalArgumentException("not a journal event record: " + record);
  }
}
