package io.spindle.yarn;

import io.spindle.core.engine.Decision;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.model.AppId;
import io.spindle.ha.SchedulerLeadership;
import io.spindle.metrics.SpindleMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.hadoop.yarn.api.records.ApplicationId;

/**
 * One scheduling cycle in the ResourceManager, run by the scheduling thread: whether it may run at all (YARN's
 * recovery wait, leadership, a take-over still waiting for applications), the inbox drained as one batch with the
 * nodes' reports, one engine cycle, its decisions carried out, the views published and the durable state saved.
 */
final class SchedulingCycle {

  private final BooleanSupplier yarnReady;
  /** {@code null} without ZooKeeper: this scheduler always leads. */
  private final SchedulerHa ha;
  private final Predicate<ApplicationId> running;
  private final CheckpointDelivery checkpoints;
  private final SchedulerLocks locks;
  private final Queue<EngineEvent> inbox;
  private final NodeEvents nodes;
  private final EngineRunner engine;
  private final DecisionApplier applier;
  private final ContainerBook book;
  private final PreemptionNotices preemptions;
  private final SpindleMetrics metrics;
  private final Function<AppId, Optional<String>> queueOf;

  SchedulingCycle(BooleanSupplier yarnReady, SchedulerHa ha, Predicate<ApplicationId> running,
      CheckpointDelivery checkpoints, SchedulerLocks locks, Queue<EngineEvent> inbox, NodeEvents nodes,
      EngineRunner engine, DecisionApplier applier, ContainerBook book, PreemptionNotices preemptions,
      SpindleMetrics metrics, Function<AppId, Optional<String>> queueOf) {
    this.yarnReady = yarnReady;
    this.ha = ha;
    this.running = running;
    this.checkpoints = checkpoints;
    this.locks = locks;
    this.inbox = inbox;
    this.nodes = nodes;
    this.engine = engine;
    this.applier = applier;
    this.book = book;
    this.preemptions = preemptions;
    this.metrics = metrics;
    this.queueOf = queueOf;
  }

  void run() {
    if (!yarnReady.getAsBoolean()) {
      return;
    }
    SchedulerLeadership.Term term = ha == null ? null : ha.term();
    if (ha != null && term == null) {
      return; // Not the leader: what arrives waits in the inbox for a term that may never come.
    }
    checkpoints.sweepOnce(running);
    if (ha != null && ha.takeOverWaits(running)) {
      return;
    }
    List<EngineEvent> batch = new ArrayList<>();
    synchronized (locks.nodeRemoval) {
      EngineEvent e;
      while ((e = inbox.poll()) != null) {
        batch.add(e);
      }
    }
    nodes.collect(batch);
    List<Long> lostInBatch = batch.stream().filter(EngineEvent.ContainerLost.class::isInstance)
        .map(event -> ((EngineEvent.ContainerLost) event).allocationId()).toList();
    com.codahale.metrics.Timer.Context timing = metrics.timeCycle();
    List<Decision> decisions = engine.cycle(batch, ha == null ? Optional.empty() : ha.claimTakeOver(),
        (state, e, journal, now) -> ha.restore(state, e, journal, now, book, preemptions));
    applier.apply(decisions);
    lostInBatch.forEach(book::takeLost); // Their gangs did not restart (or restarting used them): not needed.
    timing.stop();
    metrics.decided(decisions, queueOf);
    engine.publish(!batch.isEmpty() || !decisions.isEmpty());
    if (term != null) {
      engine.save(e -> ha.saveIfChanged(term, e, book));
    }
  }
}
