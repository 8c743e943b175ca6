package io.spindle.yarn;

import io.spindle.core.engine.EngineEvent;
import io.spindle.metrics.SpindleMetrics;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Containers ending and containers recovered, as YARN tells them: each becomes an engine event (finished, lost with
 * the cause, recovered with its shape), and YARN's own books (attempt, node) are updated under the adapter's locks.
 */
final class ContainerEvents {

  private static final Logger LOG = LoggerFactory.getLogger(ContainerEvents.class);

  private final SchedulerCalls yarn;
  private final ContainerBook book;
  private final PreemptionNotices preemptions;
  private final SchedulerLocks locks;
  private final YarnResources translate;
  private final SpindleMetrics metrics;
  private final Consumer<EngineEvent> toEngine;

  ContainerEvents(SchedulerCalls yarn, ContainerBook book, PreemptionNotices preemptions, SchedulerLocks locks,
      YarnResources translate, SpindleMetrics metrics, Consumer<EngineEvent> toEngine) {
    this.yarn = yarn;
    this.book = book;
    this.preemptions = preemptions;
    this.locks = locks;
    this.translate = translate;
    this.metrics = metrics;
    this.toEngine = toEngine;
  }

  void completed(RMContainer rmContainer, ContainerStatus status, RMContainerEventType event) {
    Container container = rmContainer.getContainer();
    SpindleAppAttempt attempt = yarn.attemptOf(container.getId());
    FiCaSchedulerNode node = yarn.node(container.getNodeId());
    Optional<Long> allocation = book.unbind(container.getId());
    preemptions.ended(container.getId());
    if (allocation.isPresent()) {
      String lost = lostBecause(status, event);
      if (lost == null) {
        toEngine.accept(new EngineEvent.ContainerFinished(allocation.get()));
        // A process's own failure (a positive exit code; YARN's kills and releases are negative): kept for `why`,
        // which then says what a gang restart by the application followed.
        AppAsks appAsks = status.getExitStatus() > 0
            ? yarn.asks(container.getId().getApplicationAttemptId().getApplicationId()) : null;
        if (appAsks != null) {
          appAsks.failedExit(container.getId().toString(), status.getExitStatus(), status.getDiagnostics());
        }
      } else {
        // The engine may restart the container's gang; asking for it again then needs what it was asked as.
        book.lost(allocation.get(), new ContainerBook.LostAsk(rmContainer.getAllocatedSchedulerKey(),
            rmContainer.getAllocatedResource(), rmContainer.getContainerRequest() != null));
        toEngine.accept(new EngineEvent.ContainerLost(allocation.get(), lost));
      }
    }
    if (attempt != null) {
      synchronized (attempt) { // Same lock order as allocate(): monitor, then the attempt's write lock.
        synchronized (locks.queueMetrics) {
          attempt.containerCompleted(rmContainer, status, event, rmContainer.getNodeLabelExpression());
        }
      }
    }
    if (node != null) {
      node.releaseContainer(container.getId(), false);
    }
  }

  /**
   * Why a container ended through no doing of its application or of Spindle, or {@code null} if it did not: its
   * node was lost, it expired before it was launched, or its disks failed.
   */
  private static String lostBecause(ContainerStatus status, RMContainerEventType event) {
    if (event == RMContainerEventType.EXPIRE) {
      return "it was allocated but not launched within " + YarnConfiguration.RM_CONTAINER_ALLOC_EXPIRY_INTERVAL_MS;
    }
    if (SchedulerUtils.LOST_CONTAINER.equals(status.getDiagnostics())) {
      return "its node was lost";
    }
    if (status.getExitStatus() == ContainerExitStatus.DISKS_FAILED) {
      return "its node's disks failed";
    }
    return null;
  }

  /**
   * Work-preserving recovery: once YARN has rebuilt its view of the node's running containers, each is told to the
   * engine so it is charged to its queue and its capacity stays taken.
   */
  void recovered(List<NMContainerStatus> reports, RMNode node) {
    for (NMContainerStatus report : reports) {
      ContainerId id = report.getContainerId();
      RMContainer rmContainer = yarn.container(id);
      if (rmContainer == null || book.isBound(id)) {
        continue;
      }
      try {
        long allocation = book.bindRecovered(id);
        // Under the request's own key, so that a reclaimed recovered container is asked for again under it.
        toEngine.accept(new EngineEvent.ContainerRecovered(allocation,
            YarnIds.app(id.getApplicationAttemptId().getApplicationId()),
            AppAsks.keyName(rmContainer.getAllocatedSchedulerKey()),
            YarnIds.node(node.getNodeID()), translate.shape(report.getAllocatedResource(), tags(id)),
            !rmContainer.isAMContainer()));
        metrics.recovered();
        LOG.info("Recovered container {} on {}", id, node.getNodeID());
      } catch (IllegalArgumentException e) {
        LOG.error("Recovered container {} cannot be accounted: {}", id, e.getMessage());
      }
    }
  }

  /** The application's tags, as far as they are known again (its models matter to the shape of its GPU asks). */
  private SpindleTags tags(ContainerId id) {
    AppAsks asks = yarn.asks(id.getApplicationAttemptId().getApplicationId());
    return asks == null ? SpindleTags.NONE : asks.tags();
  }
}
