package io.spindle.yarn;

import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerImpl;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ContainerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/** An application attempt: YARN's bookkeeping of its asks and containers, which Spindle's decisions fill. */
final class SpindleAppAttempt extends FiCaSchedulerApp {

  SpindleAppAttempt(ApplicationAttemptId id, String user, Queue queue, AbstractUsersManager users,
      RMContext rmContext) {
    super(id, user, queue, users, rmContext);
  }

  /**
   * Hands the attempt a container the engine decided on. {@code null} if the attempt stopped or no longer asks
   * for it (an AM may withdraw asks while the engine decides), in which case the caller returns the capacity.
   */
  RMContainer assign(FiCaSchedulerNode node, SchedulerRequestKey key, Container container) {
    // Lock order: the attempt's monitor, then its write lock — the order allocate() and Hadoop's own methods
    // (addToNewlyAllocatedContainers is synchronized) take them; the other order deadlocks with an AM heartbeat.
    synchronized (this) {
      return assignLocked(node, key, container);
    }
  }

  private RMContainer assignLocked(FiCaSchedulerNode node, SchedulerRequestKey key, Container container) {
    writeLock.lock();
    try {
      if (isStopped || getOutstandingAsksCount(key) <= 0) {
        return null;
      }
      RMContainerImpl rmContainer = new RMContainerImpl(container, key, getApplicationAttemptId(), node.getNodeID(),
          appSchedulingInfo.getUser(), rmContext, node.getPartition());
      rmContainer.setQueueName(getQueueName());
      updateAMContainerDiagnostics(AMState.ASSIGNED, null);
      addToNewlyAllocatedContainers(node, rmContainer);
      ContainerId id = container.getId();
      liveContainers.put(id, rmContainer);
      ContainerRequest request = appSchedulingInfo.allocate(NodeType.OFF_SWITCH, node, key, rmContainer);
      attemptResourceUsage.incUsed(node.getPartition(), container.getResource());
      rmContainer.setContainerRequest(request);
      rmContainer.handle(new RMContainerEvent(id, RMContainerEventType.START));
      return rmContainer;
    } finally {
      writeLock.unlock();
    }
  }
}
