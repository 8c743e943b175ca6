package io.spindle.yarn;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.model.Resources;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.thirdparty.com.google.common.util.concurrent.SettableFuture;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.placement.ApplicationPlacementContext;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.records.ApplicationStateData;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An application's life as YARN tells it to the scheduler: admitted into its leaf queue (or rejected with a reason
 * the user reads), its attempts added and removed, its end. Each step reaches the engine as an event. Called on the
 * RM's dispatcher thread.
 */
final class AppLifecycle {

  private static final Logger LOG = LoggerFactory.getLogger(AppLifecycle.class);

  private final ConcurrentMap<ApplicationId, SchedulerApplication<SpindleAppAttempt>> applications;
  private final Map<ApplicationId, AppAsks> asks;
  private final QueueRegistry queues;
  private final Supplier<RMContext> rm;
  private final BooleanSupplier aclsEnabled;
  private final SchedulerCalls containers;
  private final SchedulerLocks locks;
  private final Consumer<ApplicationId> forget;
  private final CheckpointDelivery checkpoints;
  private final Consumer<EngineEvent> toEngine;
  private final AppActivation parallel;
  private final Consumer<ApplicationId> startHeld;
  private final Function<String, Optional<String>> createQueue;

  /**
   * @param forget told of every application that ended, for what is kept per application elsewhere (take-over)
   * @param startHeld told of an application that may now run (see {@link AppActivation}): its held asks go out
   * @param createQueue creates the leaf (full path) an application a mapping placed there, or says why not
   */
  AppLifecycle(ConcurrentMap<ApplicationId, SchedulerApplication<SpindleAppAttempt>> applications,
      Map<ApplicationId, AppAsks> asks, QueueRegistry queues, Supplier<RMContext> rm, BooleanSupplier aclsEnabled,
      SchedulerCalls containers, SchedulerLocks locks, Consumer<ApplicationId> forget,
      CheckpointDelivery checkpoints, Consumer<EngineEvent> toEngine, AppActivation parallel,
      Consumer<ApplicationId> startHeld, Function<String, Optional<String>> createQueue) {
    this.createQueue = createQueue;
    this.parallel = parallel;
    this.startHeld = startHeld;
    this.applications = applications;
    this.asks = asks;
    this.queues = queues;
    this.rm = rm;
    this.aclsEnabled = aclsEnabled;
    this.containers = containers;
    this.locks = locks;
    this.forget = forget;
    this.checkpoints = checkpoints;
    this.toEngine = toEngine;
  }

  /** YARN's application and attempt events, each to its step below. */
  void handle(SchedulerEvent event) {
    if (event instanceof AppAddedSchedulerEvent e) {
      add(e.getApplicationId(), e.getQueue(), e.getPlacementContext(), e.getUser(), e.getIsAppRecovering(),
          e.isUnmanagedAM());
    } else if (event instanceof AppRemovedSchedulerEvent e) {
      remove(e.getApplicationID(), e.getFinalState());
    } else if (event instanceof AppAttemptAddedSchedulerEvent e) {
      addAttempt(e.getApplicationAttemptId(), e.getTransferStateFromPreviousAttempt(), e.getIsAttemptRecovering());
    } else if (event instanceof AppAttemptRemovedSchedulerEvent e) {
      removeAttempt(e.getApplicationAttemptID(), e.getKeepContainersAcrossAppAttempts());
    } else {
      throw new IllegalArgumentException("not an application event: " + event.getType());
    }
  }

  /**
   * What the application is, for the run times {@code shortest-first} learns: its name and its tags, sorted, without
   * Spindle's own (which say how it is placed, not what it is). {@code null} without an RMApp.
   */
  static String kind(RMApp rmApp) {
    if (rmApp == null) {
      return null;
    }
    StringBuilder s = new StringBuilder(rmApp.getName() == null ? "" : rmApp.getName());
    Set<String> tags = rmApp.getApplicationTags() == null ? Set.of() : rmApp.getApplicationTags();
    for (String tag : new java.util.TreeSet<>(tags)) {
      if (!tag.startsWith("spindle.")) {
        s.append(' ').append(tag);
      }
    }
    return s.toString();
  }

  /**
   * @param placement where the queue mappings placed the application (its parent given in full), or {@code null}:
   *     then {@code queueName}, as submitted, names the leaf
   */
  void add(ApplicationId appId, String queueName, ApplicationPlacementContext placement, String user,
      boolean recovering, boolean unmanagedAm) {
    RMApp rmApp = rm.get().getRMApps().get(appId);
    QueueRegistry.Admission admission = admission(appId, queueName, placement, user);
    String rejection = admission instanceof QueueRegistry.Admission.Refused r ? r.reason() : null;
    SpindleTags tags = SpindleTags.NONE;
    if (rejection == null) {
      try {
        tags = SpindleTags.parse(rmApp == null ? Set.of() : rmApp.getApplicationTags());
      } catch (IllegalArgumentException e) {
        rejection = "Spindle: " + e.getMessage();
      }
    }
    if (rejection == null && aclsEnabled.getAsBoolean()) {
      rejection = QueueRegistry.refusesSubmission(((QueueRegistry.Admission.Admitted) admission).queue(), appId,
          user).orElse(null);
    }
    if (rejection == null && !recovering) { // A recovered application was accepted once; it is not judged again.
      SpindleQueue leaf = ((QueueRegistry.Admission.Admitted) admission).queue();
      rejection = leaf.rules().refuses(leaf.path(), appId, user, applications.values()).orElse(null);
    }
    if (rejection != null) {
      LOG.info("Rejected application {}: {}", appId, rejection);
      rm.get().getDispatcher().getEventHandler().handle(
          new RMAppEvent(appId, RMAppEventType.APP_REJECTED, rejection));
      return;
    }
    SpindleQueue queue = ((QueueRegistry.Admission.Admitted) admission).queue();
    // The RM set the priority through checkAndGetApplicationPriority; after a restart it is the one last updated.
    Priority priority = rmApp == null || rmApp.getApplicationPriority() == null ? Priority.newInstance(0)
        : rmApp.getApplicationPriority();
    applications.put(appId, new SchedulerApplication<>(queue, user, priority, unmanagedAm));
    asks.put(appId, new AppAsks(tags, unmanagedAm));
    queue.getMetrics().submitApp(user, unmanagedAm);
    toEngine.accept(new EngineEvent.AppSubmitted(YarnIds.app(appId), queue.path(), user, priority.getPriority(),
        kind(rmApp)));
    if (!parallel.admit(appId, queue.path(), user, amResource(rmApp, unmanagedAm), recovering)) {
      LOG.info("Application {} waits to run: {}", appId, parallel.whyWaiting(appId).orElse(""));
    }
    LOG.info("Accepted application {} from {} into {} (tags {})", appId, user, queue.path(), tags);
    if (!recovering) {
      rm.get().getDispatcher().getEventHandler().handle(new RMAppEvent(appId, RMAppEventType.APP_ACCEPTED));
    }
  }

  /** What the application's ApplicationMaster container asks (the RM normalised it); none for an unmanaged AM. */
  private static Resource amResource(RMApp rmApp, boolean unmanagedAm) {
    if (unmanagedAm || rmApp == null || rmApp.getAMResourceRequests() == null
        || rmApp.getAMResourceRequests().isEmpty()) {
      return org.apache.hadoop.yarn.util.resource.Resources.none();
    }
    return rmApp.getAMResourceRequests().get(0).getCapability();
  }

  /**
   * The leaf the application goes to. A mapping's target that does not exist yet under a queue that creates queues is
   * created now, as CapacityScheduler creates it when the application is added (again on recovery: created queues
   * live as long as the ResourceManager, and a restarted one places its recovered applications anew).
   */
  private QueueRegistry.Admission admission(ApplicationId appId, String queueName,
      ApplicationPlacementContext placement, String user) {
    if (placement == null || !placement.hasParentQueue()) {
      return queues.leaf(appId, queueName, user);
    }
    if (queues.tree().createsBelow(placement.getFullQueuePath())) {
      Optional<String> why = createQueue.apply(placement.getFullQueuePath());
      if (why.isPresent()) {
        return new QueueRegistry.Admission.Refused("Spindle: application " + appId + " submitted by user " + user
            + ": queue " + placement.getFullQueuePath() + " could not be created: " + why.get());
      }
    }
    return queues.leaf(appId, placement.getFullQueuePath(), user);
  }

  /**
   * {@code yarn application -updatePriority}, as CapacityScheduler does it: checked like a submission's, written to
   * the RM's state store (so a restarted or failed-over RM recovers the application at it), then in force from the
   * engine's next cycle.
   */
  Priority updatePriority(Priority requested, ApplicationId appId, SettableFuture<Object> future,
      UserGroupInformation user) throws YarnException {
    SchedulerApplication<SpindleAppAttempt> app = applications.get(appId);
    RMApp rmApp = rm.get().getRMApps().get(appId);
    if (app == null || rmApp == null) {
      throw new YarnException("Application '" + appId + "' is not present, hence could not change priority.");
    }
    Priority p = queues.priorities().check(requested, user, rmApp.getQueue(), appId);
    if (p.equals(app.getPriority())) {
      future.set(null);
      return p;
    }
    rmApp.getApplicationSubmissionContext().setPriority(p);
    ApplicationStateData state = ApplicationStateData.newInstance(rmApp.getSubmitTime(), rmApp.getStartTime(),
        rmApp.getApplicationSubmissionContext(), rmApp.getUser(), rmApp.getCallerContext());
    state.setApplicationTimeouts(rmApp.getApplicationTimeouts());
    rm.get().getStateStore().updateApplicationStateSynchronously(state, false, future);
    app.setPriority(p);
    if (app.getCurrentAppAttempt() != null) {
      app.getCurrentAppAttempt().setPriority(p);
    }
    toEngine.accept(new EngineEvent.AppPriorityChanged(YarnIds.app(appId), p.getPriority()));
    LOG.info("Priority '{}' is updated in queue :{} for application: {} for the user: {}", p, rmApp.getQueue(), appId,
        rmApp.getUser());
    return p;
  }

  void addAttempt(ApplicationAttemptId attemptId, boolean transferState, boolean recovering) {
    SchedulerApplication<SpindleAppAttempt> app = applications.get(attemptId.getApplicationId());
    if (app == null) {
      LOG.warn("Attempt {} of an application Spindle does not know", attemptId);
      return;
    }
    SpindleQueue queue = (SpindleQueue) app.getQueue();
    SpindleAppAttempt attempt = new SpindleAppAttempt(attemptId, app.getUser(), queue,
        queue.getAbstractUsersManager(), rm.get());
    if (transferState) {
      attempt.transferStateFromPreviousAttempt(app.getCurrentAppAttempt());
    }
    attempt.setPriority(app.getPriority());
    app.setCurrentAppAttempt(attempt);
    queue.getMetrics().submitAppAttempt(app.getUser(), app.isUnmanagedAM());
    AppAsks appAsks = asks.get(attemptId.getApplicationId());
    if (appAsks != null) {
      appAsks.newAttempt();
    }
    if (!recovering) {
      rm.get().getDispatcher().getEventHandler().handle(
          new RMAppAttemptEvent(attemptId, RMAppAttemptEventType.ATTEMPT_ADDED));
    }
  }

  void removeAttempt(ApplicationAttemptId attemptId, boolean keepContainers) {
    SchedulerApplication<SpindleAppAttempt> app = applications.get(attemptId.getApplicationId());
    SpindleAppAttempt attempt = app == null ? null : app.getCurrentAppAttempt();
    if (attempt == null) {
      return;
    }
    // One step under the attempt's monitor, which handing out containers takes too: a cycle that ran between the
    // completions and the stop (the completions freed room for the attempt's remaining asks) handed it a container
    // nobody ever completed, which held its node for good (SpindleSchedulerMiniClusterTest, docs/reliability.md).
    synchronized (attempt) {
      for (RMContainer c : attempt.getLiveContainers()) {
        if (keepContainers && c.getState().equals(RMContainerState.RUNNING)) {
          continue;
        }
        containers.complete(c, SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(),
            SchedulerUtils.COMPLETED_APPLICATION), RMContainerEventType.KILL);
      }
      AppAsks appAsks = asks.get(attemptId.getApplicationId());
      if (appAsks != null) {
        for (String key : appAsks.cancelAll()) {
          toEngine.accept(new EngineEvent.Demand(YarnIds.app(attemptId.getApplicationId()), key, Resources.NONE, 0));
        }
      }
      synchronized (locks.queueMetrics) {
        attempt.stop(RMAppAttemptState.FINISHED);
      }
    }
  }

  void remove(ApplicationId appId, RMAppState finalState) {
    SchedulerApplication<SpindleAppAttempt> app = applications.remove(appId);
    if (app == null) {
      return;
    }
    app.stop(finalState);
    asks.remove(appId);
    forget.accept(appId);
    checkpoints.forget(appId);
    toEngine.accept(new EngineEvent.AppFinished(YarnIds.app(appId)));
    parallel.ended(appId).forEach(startHeld);
  }
}
