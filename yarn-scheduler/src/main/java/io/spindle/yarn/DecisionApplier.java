package io.spindle.yarn;

import io.spindle.core.engine.Decision;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.model.AppId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ContainerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out a cycle's decisions in YARN: containers handed to attempts, rejections as application kills, reclaims
 * and gang restarts as preempted containers asked for again, checkpoint notices and MIG re-partitions sent on. Runs on
 * the scheduling thread; what YARN could not take (an attempt gone, a node gone) goes back to the engine as an event.
 */
final class DecisionApplier {

  private static final Logger LOG = LoggerFactory.getLogger(DecisionApplier.class);

  private final SchedulerCalls yarn;
  private final ContainerBook book;
  private final SchedulerLocks locks;
  private final CheckpointDelivery checkpoints;
  private final NodeInventory inventory;
  private final Consumer<EngineEvent> toEngine;

  DecisionApplier(SchedulerCalls yarn, ContainerBook book, SchedulerLocks locks, CheckpointDelivery checkpoints,
      NodeInventory inventory, Consumer<EngineEvent> toEngine) {
    this.yarn = yarn;
    this.book = book;
    this.locks = locks;
    this.checkpoints = checkpoints;
    this.inventory = inventory;
    this.toEngine = toEngine;
    book.onUnbind(inventory::shareEnded);
  }

  void apply(List<Decision> all) {
    // An application's containers of one cycle are handed to its attempt under the attempt's monitor, which its AM's
    // allocate() also takes: the AM sees a gang whole or not at all, never a part pulled in between.
    Map<AppId, List<Decision.Allocate>> allocationsByApp = new LinkedHashMap<>();
    for (Decision d : all) {
      if (d instanceof Decision.Allocate a) {
        allocationsByApp.computeIfAbsent(a.appId(), k -> new ArrayList<>()).add(a);
      } else {
        apply(d);
      }
    }
    synchronized (locks.nodeRemoval) {
      allocationsByApp.forEach((appId, list) -> {
        SpindleAppAttempt attempt = yarn.attempt(YarnIds.application(appId));
        Object lock = attempt == null ? new Object() : attempt;
        synchronized (lock) {
          list.forEach(this::startContainer);
        }
      });
    }
  }

  private void apply(Decision decision) {
    if (decision instanceof Decision.Reject r) {
      reject(YarnIds.application(r.appId()), r.requestKey(), r.reason());
    } else if (decision instanceof Decision.Wait w) {
      LOG.info("Application {} request {} waits: {}", w.appId(), w.requestKey(), w.reason());
    } else if (decision instanceof Decision.Reserve r) {
      LOG.info("Reserved {} nodes in {} for the gang of {} (projected start {})", r.nodeIds().size(), r.subtree(),
          r.appId(), r.projectedStartMillis());
    } else if (decision instanceof Decision.RequestCheckpoint r) {
      checkpoints.request(r);
    } else if (decision instanceof Decision.CancelCheckpoint c) {
      checkpoints.cancel(c);
    } else if (decision instanceof Decision.Preempt p) {
      reclaim(p);
    } else if (decision instanceof Decision.RestartGang r) {
      restartGang(r);
    } else if (decision instanceof Decision.StopContainers c) {
      stopContainers(c);
    } else if (decision instanceof Decision.Resize r) {
      LOG.info("Application {} request {}: elastic gang {} from {} to {} members ({})", r.appId(), r.requestKey(),
          r.grew() ? "grows" : "shrinks", r.fromSize(), r.toSize(), r.reason());
    } else if (decision instanceof Decision.ReconfigureMig m) {
      Optional<EngineEvent> refused = inventory.request(m);
      if (refused.isPresent()) {
        LOG.warn("MIG re-partition of {} GPU {} to {} cannot be sent: the node does not report to ZooKeeper",
            m.nodeId(), m.gpuIndex(), m.layout());
        toEngine.accept(refused.get());
      } else {
        LOG.info("MIG re-partition of {} GPU {} to {} asked of the node", m.nodeId(), m.gpuIndex(), m.layout());
      }
    }
  }

  /**
   * Kills the victims with status PREEMPTED and asks for their containers again on the application's behalf. The
   * engine re-queues preempted work itself (a gang whole), so YARN's outstanding ask must hold it too, or the
   * re-queued containers could not be handed out; YARN does the same for a container killed before its AM saw it.
   * An AM that asks again itself sends an absolute count, which then simply stands; one that does not want the work
   * back asks for none.
   */
  private void reclaim(Decision.Preempt p) {
    checkpoints.reclaimed(p);
    stopAndAskAgain(p.appId(), p.requestKey(), p.allocationIds(), List.of(), "by Spindle: " + p.reason(),
        p.isResize());
    LOG.info("Preempted {} containers of {} (notice {}); it resumes from {}", p.allocationIds().size(), p.appId(),
        p.noticeId(), p.checkpointLocation());
  }

  private void restartGang(Decision.RestartGang r) {
    stopAndAskAgain(r.appId(), r.requestKey(), r.allocationIds(), r.lostAllocationIds(),
        "by Spindle, which restarts the gang: " + r.reason(), false);
    LOG.warn("Application {} request {}: {}", r.appId(), r.requestKey(), r.reason());
  }

  /**
   * Kills containers whose GPU left service, with exit status ABORTED (YARN's "killed by the framework", as for a
   * lost node: not the application's failure) and the reason as diagnostics; their application asks again itself.
   */
  private void stopContainers(Decision.StopContainers c) {
    for (long allocation : c.allocationIds()) {
      RMContainer container = book.container(allocation).map(yarn::container).orElse(null);
      if (container != null) {
        yarn.complete(container, SchedulerUtils.createAbnormalContainerStatus(container.getContainerId(),
            "Stopped by Spindle: " + c.reason()), RMContainerEventType.KILL);
      }
    }
    LOG.warn("Application {}: stopped {} container(s): {}", c.appId(), c.allocationIds().size(), c.reason());
  }

  /**
   * Kills the running containers (status PREEMPTED: not the application's failure) and puts them, and the lost
   * ones, back into YARN's outstanding ask on the application's behalf, as YARN does for a container killed before
   * its AM saw it: the engine re-queued them, and what YARN holds must agree.
   *
   * @param gangRunsOn the containers are members an elastic gang grew by: it runs on, and asks for them again as
   *     growth, not as a new start of the gang
   */
  private void stopAndAskAgain(AppId application, String requestKey, List<Long> running, List<Long> lost,
      String why, boolean gangRunsOn) {
    ApplicationId appId = YarnIds.application(application);
    SpindleAppAttempt attempt = yarn.attempt(appId);
    AppAsks appAsks = yarn.asks(appId);
    Object lock = attempt == null ? new Object() : attempt;
    synchronized (lock) { // As allocate(): the AM sees its asks and our re-ask of them change together.
      for (long allocation : running) {
        RMContainer c = book.container(allocation).map(yarn::container).orElse(null);
        if (c == null) {
          // It was lost itself meanwhile (its loss may still be on its way to the engine): ask for it as lost.
          book.takeLost(allocation).ifPresent(ask -> askAgain(attempt, appAsks, requestKey, ask, gangRunsOn));
          continue;
        }
        boolean yarnAsksAgain = c.getContainerRequest() != null; // Not yet acquired by the AM.
        yarn.complete(c, SchedulerUtils.createPreemptedContainerStatus(c.getContainerId(),
            SchedulerUtils.PREEMPTED_CONTAINER + " " + why), RMContainerEventType.KILL);
        askAgain(attempt, appAsks, requestKey, new ContainerBook.LostAsk(c.getAllocatedSchedulerKey(),
            c.getAllocatedResource(), yarnAsksAgain), gangRunsOn);
      }
      for (long allocation : lost) {
        book.takeLost(allocation).ifPresent(ask -> askAgain(attempt, appAsks, requestKey, ask, gangRunsOn));
      }
    }
  }

  private void askAgain(SpindleAppAttempt attempt, AppAsks appAsks, String requestKey, ContainerBook.LostAsk ask,
      boolean gangRunsOn) {
    if (attempt == null || appAsks == null) {
      return;
    }
    if (!ask.yarnAsksAgain()) {
      synchronized (locks.queueMetrics) {
        attempt.recoverResourceRequestsForContainer(new ContainerRequest(List.of(ResourceRequest.newBuilder()
            .priority(ask.key().getPriority()).allocationRequestId(ask.key().getAllocationRequestId())
            .resourceName(ResourceRequest.ANY).capability(ask.capability()).numContainers(1).build())));
      }
    }
    appAsks.requeued(requestKey, ask.key(), ask.capability(), gangRunsOn);
  }

  private void startContainer(Decision.Allocate a) {
    ApplicationId appId = YarnIds.application(a.appId());
    SpindleAppAttempt attempt = yarn.attempt(appId);
    AppAsks appAsks = yarn.asks(appId);
    FiCaSchedulerNode node = yarn.node(YarnIds.yarnNode(a.nodeId()));
    AppAsks.Ask ask = appAsks == null ? null : appAsks.ask(a.requestKey());
    if (attempt == null || node == null || ask == null) {
      toEngine.accept(new EngineEvent.ContainerFinished(a.allocationId()));
      return;
    }
    ContainerId containerId = BuilderUtils.newContainerId(attempt.getApplicationAttemptId(),
        attempt.getNewContainerId());
    io.spindle.core.model.GpuModel shareGpu = a.shape().wantsShare() && !a.gpus().isEmpty()
        ? inventory.gpuModel(node.getNodeID(), a.gpus().get(0).gpuIndex()) : null;
    Container container = BuilderUtils.newContainer(containerId, node.getNodeID(), node.getHttpAddress(),
        GpuAskShapes.containerResource(ask.capability(), a.shape(), shareGpu), ask.key().getPriority(), null,
        ask.key().getAllocationRequestId());
    RMContainer rmContainer;
    synchronized (locks.queueMetrics) {
      rmContainer = attempt.assign(node, ask.key(), container);
    }
    if (rmContainer == null) {
      toEngine.accept(new EngineEvent.ContainerFinished(a.allocationId()));
      return;
    }
    book.bind(containerId, a.allocationId());
    inventory.shareAllocated(containerId, a);
    appAsks.allocated(a.requestKey());
    node.allocateContainer(rmContainer);
    appAsks.noneHeldBack();
  }

  /** A request that can never be served: the application is killed with the reason as its diagnostics. */
  void reject(ApplicationId appId, String requestKey, String reason) {
    String message = "Spindle rejected " + (requestKey == null ? "the application" : "request " + requestKey)
        + ": " + reason;
    LOG.info("{}: {}", appId, message);
    yarn.kill(appId, message);
  }
}
