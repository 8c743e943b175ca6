package io.spindle.yarn;

import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationResourceUsageReport;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
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
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;

/** An application attempt: YARN's bookkeeping of its asks and containers, which Spindle's decisions fill. */
final class SpindleAppAttempt extends FiCaSchedulerApp {

  SpindleAppAttempt(ApplicationAttemptId id, String user, Queue queue, AbstractUsersManager users,
      RMContext rmContext) {
    super(id, user, queue, users, rmContext);
  }

  /**
   * YARN's usage report of the attempt (resource-seconds, queue and cluster shares), as SchedulerApplicationAttempt
   * writes it. FiCaSchedulerApp's own casts the queue to CapacityScheduler's queue class as soon as YARN's node-label
   * manager knows any node's resources — which it does under Spindle, since Spindle activates nodes there as
   * CapacityScheduler does — and failed every application report with a ClassCastException.
   */
  @Override
  public ApplicationResourceUsageReport getResourceUsageReport() {
    writeLock.lock();
    try {
      long now = System.currentTimeMillis();
      Map<String, Long> seconds = new HashMap<>();
      for (RMContainer c : liveContainers.values()) {
        long usedMillis = now - c.getCreationTime();
        for (ResourceInformation r : c.getContainer().getResource().getResources()) {
          seconds.merge(r.getName(), r.getValue() * usedMillis / 1000, Long::sum);
        }
      }
      Resource used = Resources.clone(attemptResourceUsage.getAllUsed());
      Resource reserved = Resources.clone(attemptResourceUsage.getReserved());
      Resource cluster = rmContext.getScheduler().getClusterResource();
      ResourceCalculator calc = rmContext.getScheduler().getResourceCalculator();
      float queuePercent = 0;
      float clusterPercent = 0;
      if (!calc.isInvalidDivisor(cluster)) {
        float capacity = getQueue().getQueueInfo(false, false).getCapacity();
        queuePercent = capacity <= 0 ? 0 : calc.divide(cluster, used, Resources.multiply(cluster, capacity)) * 100;
        clusterPercent = calc.divide(cluster, used, cluster) * 100;
      }
      Map<String, Long> preempted = new HashMap<>();
      preempted.put(ResourceInformation.MEMORY_MB.getName(), 0L);
      preempted.put(ResourceInformation.VCORES.getName(), 0L);
      return ApplicationResourceUsageReport.newInstance(liveContainers.size(), reservedContainers.size(), used,
          reserved, Resources.add(used, reserved), seconds, queuePercent, clusterPercent, preempted);
    } finally {
      writeLock.unlock();
    }
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
