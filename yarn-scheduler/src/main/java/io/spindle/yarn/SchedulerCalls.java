package io.spindle.yarn;

import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;

/**
 * What the YARN adapter's parts need of the scheduler itself: its attempts, asks, containers and nodes, and the
 * calls into YARN that only the {@code AbstractYarnScheduler} can make.
 */
interface SchedulerCalls {
  /** The application's current attempt, or {@code null}. */
  SpindleAppAttempt attempt(ApplicationId app);

  /** The current attempt of the container's application, or {@code null}. */
  SpindleAppAttempt attemptOf(ContainerId container);

  AppAsks asks(ApplicationId app);

  RMContainer container(ContainerId id);

  FiCaSchedulerNode node(NodeId id);

  void complete(RMContainer container, ContainerStatus status, RMContainerEventType event);

  /** Kills the application with {@code diagnostics}. */
  void kill(ApplicationId app, String diagnostics);
}

