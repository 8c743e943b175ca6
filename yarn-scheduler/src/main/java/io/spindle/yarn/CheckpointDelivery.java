package io.spindle.yarn;

import io.spindle.channel.checkpoint.CheckpointListener;
import io.spindle.channel.checkpoint.CheckpointNoticeStore;
import io.spindle.client.CheckpointAckView;
import io.spindle.client.CheckpointNoticeView;
import io.spindle.client.CheckpointReportView;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.model.AppId;
import io.spindle.core.preemption.CheckpointAnswer;
import io.spindle.core.preemption.CheckpointHandshake;
import io.spindle.metrics.SpindleMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes the engine's checkpoint notices to the applications and their answers back. Every AM sees the victim
 * containers in its allocate answers (YARN's strict preemption contract, {@link PreemptionNotices}); AMs that use
 * Spindle's client also get the notice in ZooKeeper ({@link CheckpointNoticeStore}) and answer it there. Answers and
 * checkpoint reports become engine events through {@code toEngine}.
 *
 * <p>Called on the scheduling thread (decisions), the AM's IPC handler (open) and the store's reader thread (answers).
 */
final class CheckpointDelivery implements CheckpointListener {

  private static final Logger LOG = LoggerFactory.getLogger(CheckpointDelivery.class);

  /** What a notice needs from the adapter: container ids and the application's current AMRMToken password. */
  interface Containers {
    Optional<ContainerId> containerOf(long allocationId);

    /** The AMRMToken password of the application's current attempt; empty before its AM has a token. */
    Optional<byte[]> tokenPassword(ApplicationId app);
  }

  private static final Consumer<ContainerId> NO_SIGNAL = id -> { };

  private final PreemptionNotices contracts;
  private CheckpointNoticeStore store;
  private final Containers containers;
  private final Consumer<EngineEvent> toEngine;
  private final LongSupplier clock;
  private final Set<ApplicationId> opened = ConcurrentHashMap.newKeySet();
  private Consumer<ContainerId> signal = NO_SIGNAL;
  private SpindleMetrics metrics;
  private boolean swept;

  CheckpointDelivery(PreemptionNotices contracts, Containers containers, Consumer<EngineEvent> toEngine,
      LongSupplier clock) {
    this.contracts = contracts;
    this.containers = containers;
    this.toEngine = toEngine;
    this.clock = clock;
  }

  /**
   * Notices also go to ZooKeeper through {@code store}, which calls this object back with answers. Without it
   * (no ZooKeeper) notices reach AMs through the preemption contract only.
   */
  void useStore(CheckpointNoticeStore store) {
    this.store = store;
  }

  /**
   * Each container is also signalled once through {@code signal} when it is first named in a notice (YARN's
   * {@code GRACEFUL_SHUTDOWN}: the NodeManager sends it SIGTERM), for programs that save their state on a signal
   * rather than through the AM.
   */
  void signalOnNotice(Consumer<ContainerId> signal) {
    this.signal = signal;
  }

  /** Answers (and their latency from the notice), withdrawals and reclaims are counted in {@code metrics}. */
  void measure(SpindleMetrics metrics) {
    this.metrics = metrics;
  }

  /**
   * Removes, once, the notice znodes of applications that ended while no scheduler saw it: called by the leader once
   * YARN's recovery has added every application that still runs ({@code running}).
   */
  void sweepOnce(java.util.function.Predicate<ApplicationId> running) {
    if (swept || store == null) {
      return;
    }
    swept = true;
    store.sweep(appId -> {
      try {
        return running.test(ApplicationId.fromString(appId));
      } catch (IllegalArgumentException notAnApplication) {
        return true; // Not for this scheduler to remove.
      }
    });
  }

  /** Lets the application's client write its answers and reports; called once its AM talks to the RM. */
  void open(ApplicationId app) {
    if (store == null || opened.contains(app)) {
      return;
    }
    containers.tokenPassword(app).ifPresent(secret -> {
      opened.add(app);
      store.open(app.toString(), secret).exceptionally(e -> {
        opened.remove(app);
        LOG.warn("Cannot open checkpoint answers for {}: {}", app, e.getMessage());
        return null;
      });
    });
  }

  void request(Decision.RequestCheckpoint r) {
    ApplicationId app = YarnIds.application(r.appId());
    List<ContainerId> ids = containerIds(r.allocationIds());
    if (ids.isEmpty()) {
      // YARN completed the victims between the engine's cycle and now; their ends reach the engine next cycle and
      // finish the reclaim. A notice (or an empty strict contract) would only puzzle the AM.
      LOG.info("Application {}: notice {} not sent, its containers have all ended", app, r.noticeId());
      return;
    }
    contracts.announce(app, Set.copyOf(ids)).forEach(signal);
    LOG.info("Application {} asked to checkpoint {} by {} (notice {}): {}", app, ids, r.deadlineMillis(),
        r.noticeId(), r.reason());
    if (store == null) {
      return;
    }
    Optional<byte[]> secret = containers.tokenPassword(app);
    if (secret.isEmpty()) {
      LOG.warn("Application {} has no AMRMToken yet; its notice {} goes out through the allocate answer only", app,
          r.noticeId());
      return;
    }
    List<String> names = new ArrayList<>();
    ids.forEach(id -> names.add(id.toString()));
    CheckpointNoticeView notice = new CheckpointNoticeView(r.appId().value(), r.noticeId(), 0, List.of(r.requestKey()),
        names, r.reason(), clock.getAsLong(), r.deadlineMillis(), r.extensionsGranted(), r.maxExtensions(),
        r.maxExtensionMillis(), Optional.ofNullable(r.refusal()), r.targetSize());
    store.issue(notice, secret.get()).exceptionally(e -> {
      LOG.error("Cannot write checkpoint notice {} for {}: {}", r.noticeId(), app, e.getMessage());
      return null;
    });
  }

  void cancel(Decision.CancelCheckpoint c) {
    withdraw(c.noticeId(), c.appId(), c.allocationIds());
    if (metrics != null) {
      metrics.checkpointOutcome("withdrawn");
    }
    LOG.info("Checkpoint notice {} to {} withdrawn: {}", c.noticeId(), c.appId(), c.reason());
  }

  /** The containers of a reclaim are about to be killed: the notice is over. */
  void reclaimed(Decision.Preempt p) {
    withdraw(p.noticeId(), p.appId(), p.allocationIds());
    if (metrics != null) {
      metrics.checkpointOutcome(CheckpointHandshake.reclaimedAtDeadline(p.reason()) ? "reclaimed_at_deadline"
          : "reclaimed_after_done");
    }
  }

  void forget(ApplicationId app) {
    contracts.forget(app);
    opened.remove(app);
    if (store != null) {
      store.forget(app.toString());
    }
  }

  List<ContainerId> containerIds(List<Long> allocationIds) {
    List<ContainerId> ids = new ArrayList<>();
    for (long a : allocationIds) {
      containers.containerOf(a).ifPresent(ids::add);
    }
    return ids;
  }

  private void withdraw(long noticeId, AppId appId, List<Long> allocationIds) {
    containerIds(allocationIds).forEach(contracts::ended);
    if (store != null) {
      store.closeNotice(appId.value(), noticeId);
    }
  }

  @Override
  public void onAck(CheckpointAckView ack, CheckpointNoticeView notice) {
    CheckpointAnswer answer = ack.kind() == CheckpointAckView.Kind.DONE ? CheckpointAnswer.DONE
        : CheckpointAnswer.EXTEND;
    if (metrics != null) {
      metrics.checkpointAnswered(answer == CheckpointAnswer.DONE ? "done" : "extend",
          clock.getAsLong() - notice.issuedMillis());
    }
    toEngine.accept(new EngineEvent.CheckpointAnswered(AppId.of(ack.appId()), ack.noticeId(), answer,
        Math.max(0, ack.requestedExtensionMillis()), ack.checkpointLocation().orElse(null)));
  }

  @Override
  public void onReport(CheckpointReportView report) {
    toEngine.accept(new EngineEvent.CheckpointReported(AppId.of(report.appId()), report.checkpointMillis(),
        report.location(), report.writeMillis()));
  }

  @Override
  public void onRejected(String appId, String path, String reason) {
    LOG.warn("Refused a checkpoint answer of {} at {}: {}", appId, path, reason);
  }

  /** For the allocation-to-container lookup: a function view, so the scheduler keeps its own maps. */
  static Containers containers(Function<Long, ContainerId> byAllocation,
      Function<ApplicationId, Optional<byte[]>> secrets) {
    return new Containers() {
      @Override
      public Optional<ContainerId> containerOf(long allocationId) {
        return Optional.ofNullable(byAllocation.apply(allocationId));
      }

      @Override
      public Optional<byte[]> tokenPassword(ApplicationId app) {
        return secrets.apply(app);
      }
    };
  }
}
