package io.spindle.yarn;

import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.hadoop.yarn.api.protocolrecords.SignalContainerRequest;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.SignalContainerCommand;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeSignalContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;

/** {@link SchedulerCalls} on the running {@link SpindleScheduler}: its attempts, containers, nodes and dispatcher. */
final class YarnSchedulerCalls implements SchedulerCalls {

  private final SpindleScheduler scheduler;
  private final Map<ApplicationId, AppAsks> asks;
  /** Read at each call: YARN sets the context after the scheduler is made. */
  private final Supplier<RMContext> rmContext;

  YarnSchedulerCalls(SpindleScheduler scheduler, Map<ApplicationId, AppAsks> asks, Supplier<RMContext> rmContext) {
    this.scheduler = scheduler;
    this.asks = asks;
    this.rmContext = rmContext;
  }

  @Override
  public SpindleAppAttempt attempt(ApplicationId app) {
    SchedulerApplication<SpindleAppAttempt> a = scheduler.getSchedulerApplications().get(app);
    return a == null ? null : a.getCurrentAppAttempt();
  }

  @Override
  public SpindleAppAttempt attemptOf(ContainerId container) {
    return scheduler.getCurrentAttemptForContainer(container);
  }

  @Override
  public AppAsks asks(ApplicationId app) {
    return asks.get(app);
  }

  @Override
  public RMContainer container(ContainerId id) {
    return scheduler.getRMContainer(id);
  }

  @Override
  public FiCaSchedulerNode node(NodeId id) {
    return scheduler.trackedNode(id);
  }

  @Override
  public void complete(RMContainer container, ContainerStatus status, RMContainerEventType event) {
    scheduler.completedContainer(container, status, event);
  }

  /** Asks the container's NodeManager to send it SIGTERM; it goes out with the node's next heartbeat answer. */
  void signalGracefulShutdown(ContainerId id) {
    RMContainer c = scheduler.getRMContainer(id);
    RMContext rm = rmContext.get();
    if (c != null && rm != null) {
      rm.getDispatcher().getEventHandler().handle(new RMNodeSignalContainerEvent(c.getContainer().getNodeId(),
          SignalContainerRequest.newInstance(id, SignalContainerCommand.GRACEFUL_SHUTDOWN)));
    }
  }

  /** The password of the application's current AMRMToken: the secret its checkpoint client signs with. */
  static Optional<byte[]> amRmTokenPassword(RMContext rm, ApplicationId app) {
    RMApp rmApp = rm == null ? null : rm.getRMApps().get(app);
    if (rmApp == null || rmApp.getCurrentAppAttempt() == null
        || rmApp.getCurrentAppAttempt().getAMRMToken() == null) {
      return Optional.empty();
    }
    return Optional.of(rmApp.getCurrentAppAttempt().getAMRMToken().getPassword());
  }

  @Override
  public void kill(ApplicationId app, String diagnostics) {
    rmContext.get().getDispatcher().getEventHandler().handle(new RMAppEvent(app, RMAppEventType.KILL, diagnostics));
  }
}
