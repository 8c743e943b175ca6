package io.spindle.yarn;

import io.spindle.core.engine.CycleClock;
import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.DurableState;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.EngineStats;
import io.spindle.core.engine.EngineStatus;
import io.spindle.core.engine.QueueSnapshot;
import io.spindle.core.model.AppId;
import io.spindle.core.queue.QueueTree;
import io.spindle.core.status.AppHistory;
import io.spindle.journal.DecisionJournal;
import io.spindle.metrics.SpindleMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine behind its lock: every cycle at one time and journaled with its events and decisions, its outcomes
 * remembered for {@code why}, and its status published for readers that must not take the lock (the status API, the
 * GPU map, {@code yarn queue -status}, the gauges).
 */
final class EngineRunner implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EngineRunner.class);

  /** Applications whose rejections and preemptions {@code why} remembers: the most recently touched. */
  static final int HISTORY_APPS = 10_000;

  /** Restores a previous leader's state into the engine, journaled; called holding the engine's lock. */
  interface TakeOver {
    void restore(DurableState state, Engine engine, DecisionJournal journal, long nowMillis);
  }

  /** Writes the engine's durable state when it changed; called holding the engine's lock. */
  interface StateSaver {
    void saveIfChanged(Engine engine);
  }

  private final Engine engine;
  private final DecisionJournal journal;
  /** The engine's clock: moved once before each cycle, so a cycle has one time, which the journal records. */
  private final CycleClock clock;
  private final SpindleMetrics metrics;
  private final LongSupplier wallClock;
  /** Rejections, notices and preemptions per application, for {@code why}; guarded by itself. */
  private final AppHistory history = new AppHistory(HISTORY_APPS);
  /** What the engine showed after the last published cycle. */
  private volatile EngineStatus published;
  private long lastPublish;

  EngineRunner(Engine engine, DecisionJournal journal, CycleClock clock, SpindleMetrics metrics,
      LongSupplier wallClock) {
    this.engine = engine;
    this.journal = journal;
    this.clock = clock;
    this.metrics = metrics;
    this.wallClock = wallClock;
    this.published = engine.status();
  }

  /**
   * One cycle of {@code batch}; with a state to take over, first what YARN recovered, then the previous leader's
   * state over it, then the asks, as restore expects. Returns the decisions to apply.
   */
  synchronized List<Decision> cycle(List<EngineEvent> batch, Optional<DurableState> saved, TakeOver takeOver) {
    List<Decision> decisions = new ArrayList<>();
    List<EngineEvent> events = batch;
    if (saved.isPresent()) {
      List<EngineEvent> asks = new ArrayList<>();
      List<EngineEvent> recovered = new ArrayList<>(batch);
      recovered.removeIf(event -> event instanceof EngineEvent.Demand && asks.add(event));
      decisions.addAll(journaledCycle(recovered));
      takeOver.restore(saved.get(), engine, journal, clock.nowMillis());
      events = asks;
    }
    decisions.addAll(journaledCycle(events));
    return decisions;
  }

  private List<Decision> journaledCycle(List<EngineEvent> events) {
    long now = clock.tick();
    CycleResult result = engine.cycle(events, EngineRunner::ignored);
    journal.cycle(now, events, result.decisions());
    synchronized (history) {
      history.record(result);
    }
    return result.decisions();
  }

  private static void ignored(EngineEvent event, RuntimeException problem) {
    LOG.error("Spindle ignored an event it cannot apply ({}): {}", event, problem.getMessage());
  }

  /** Applies a new queue tree (refused whole with the engine's reason) and publishes it at once. */
  synchronized void reconfigure(QueueTree next, Map<String, String> entries) {
    engine.reconfigure(next);
    journal.reconfigured(entries);
    published = engine.status(); // `yarn queue -status` shows the new tree as soon as the refresh returns
  }

  synchronized void save(StateSaver saver) {
    saver.saveIfChanged(engine);
  }

  /**
   * Refreshes the published status and the gauges after a cycle that changed something, and at least once a second
   * (ages move with time): not on every idle cycle, since the stats walk every GPU.
   */
  void publish(boolean changed) {
    long now = wallClock.getAsLong();
    if (!changed && now - lastPublish < 1_000) {
      return;
    }
    lastPublish = now;
    synchronized (this) {
      metrics.publish(engine.stats(), engine.queueSnapshots());
      published = engine.status();
    }
  }

  EngineStatus published() {
    return published;
  }

  List<AppHistory.Outcome> history(AppId appId) {
    synchronized (history) {
      return history.of(appId);
    }
  }

  synchronized EngineStats liveStats() {
    return engine.stats();
  }

  synchronized List<QueueSnapshot> liveQueues() {
    return engine.queueSnapshots();
  }

  @Override
  public void close() {
    journal.close();
  }
}
