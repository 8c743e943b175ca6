package io.spindle.yarn;

import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.core.model.Resources;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.AppPlacementAllocator;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/**
 * Turns an attempt's outstanding YARN asks into engine demands, only where they changed: the AM container's ask as
 * such, the gang request held back until the application asks for every member, a shape Spindle cannot place
 * rejected at once. Called from {@code allocate()} under the attempt's monitor.
 */
final class AskForwarder {

  private final YarnResources translate;
  private final DecisionApplier rejections;
  private final AppActivation parallel;
  private final Consumer<EngineEvent> toEngine;

  AskForwarder(YarnResources translate, DecisionApplier rejections, AppActivation parallel,
      Consumer<EngineEvent> toEngine) {
    this.translate = translate;
    this.parallel = parallel;
    this.rejections = rejections;
    this.toEngine = toEngine;
  }

  /**
   * An application held back by a running-application limit ({@link AppActivation}) may run now: its asks go to the
   * engine as they stand, under the attempt's monitor as {@code allocate} forwards them.
   */
  void forwardHeld(ApplicationId appId, SchedulerCalls scheduler) {
    SpindleAppAttempt attempt = scheduler.attempt(appId);
    AppAsks appAsks = scheduler.asks(appId);
    if (attempt == null || appAsks == null) {
      return; // No attempt yet: its first allocate forwards what it asks.
    }
    synchronized (attempt) {
      if (!attempt.isStopped()) {
        forward(appId, attempt, appAsks);
      }
    }
  }

  /**
   * The partition (node label expression) of the ask's ANY request, as the RM normalised it (a queue's
   * {@code default-node-label-expression} filled in, checked against the queue's accessible labels); none: the
   * default partition.
   */
  private static String partition(SpindleAppAttempt attempt, SchedulerRequestKey key) {
    AppPlacementAllocator<?> allocator = attempt.getAppPlacementAllocator(key);
    String p = allocator == null ? null : allocator.getPrimaryRequestedNodePartition();
    return p == null ? io.spindle.core.model.Node.DEFAULT_PARTITION : p;
  }

  void forward(ApplicationId appId, SpindleAppAttempt attempt, AppAsks appAsks) {
    // Only a call that sees asks may take the RM's first one as the AM container's: an application held back by the
    // AM limit and let run between its attempt's creation and the RM's AM ask is forwarded once with nothing asked
    // yet, and the AM ask that follows would then count as the gang's first member (found by spindle-run's tests:
    // the gang waited for ever for "all members").
    boolean amAsk = !attempt.getSchedulerKeys().isEmpty() && appAsks.expectsAmAsk(attempt);
    Optional<String> waits = parallel.whyWaiting(appId);
    Set<String> listed = new HashSet<>();
    for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
      PendingAsk pending = attempt.getPendingAsk(key, ResourceRequest.ANY);
      Resource capability = pending.getPerAllocationResource();
      String keyName = AppAsks.keyName(key);
      listed.add(keyName);
      if (amAsk) {
        appAsks.markAm(keyName);
      }
      if (waits.isPresent()) { // Not recorded as told: the asks go out as they stand once the application may run.
        appAsks.holdBack(waits.get());
        continue;
      }
      int count = pending.getCount();
      boolean gang = !appAsks.isAm(keyName) && appAsks.takesGang(keyName, count);
      if (!appAsks.changed(keyName, key, capability, count)) {
        continue;
      }
      Resources shape;
      try {
        shape = translate.shape(capability, appAsks.tags()).withPartition(partition(attempt, key));
      } catch (IllegalArgumentException e) {
        rejections.reject(appId, keyName, e.getMessage());
        continue;
      }
      int gangSize = appAsks.tags().gangSize();
      if (gang && count > 0 && count < gangSize) {
        appAsks.holdBack("gang of " + gangSize + " waits for the application to ask for all members (it asks "
            + count + ")");
        continue;
      }
      appAsks.noneHeldBack();
      PlacementSpec spec = appAsks.isAm(keyName) ? PlacementSpec.APPLICATION_MASTER
          : appAsks.tags().placement(gang || appAsks.growsGang(keyName));
      toEngine.accept(new EngineEvent.Demand(YarnIds.app(appId), keyName, shape, count, spec));
    }
    // An ask withdrawn to 0 leaves YARN's list of keys: the engine would go on placing it. Seen when a preempted gang
    // was re-admitted on its AM's behalf before the AM's own re-ask arrived, which the AM then withdrew
    // (CheckpointPreemptionTest, about one run in ten; docs/reliability.md).
    for (String gone : appAsks.withdrawnUnless(listed)) {
      toEngine.accept(new EngineEvent.Demand(YarnIds.app(appId), gone, Resources.NONE, 0));
    }
  }
}
