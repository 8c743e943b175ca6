package io.spindle.yarn;

import io.spindle.core.engine.EngineStatus;
import io.spindle.core.model.AppId;
import io.spindle.core.queue.QueueTree;
import io.spindle.core.status.AppHistory;
import io.spindle.core.status.Explanation;
import io.spindle.ha.SchedulerLeadership;
import io.spindle.web.SchedulerView;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.QueueACL;

/** The status API's window on the scheduler: published snapshots and thread-safe calls only. */
final class SchedulerWebView implements SchedulerView {

  private final SpindleScheduler scheduler;
  private final SchedulerSettings settings;
  /** {@code null} without ZooKeeper: the scheduler always leads, in no term. */
  private final SchedulerHa ha;
  private final EngineRunner engine;
  private final ContainerBook book;
  private final QueueRegistry queues;

  SchedulerWebView(SpindleScheduler scheduler, SchedulerSettings settings, SchedulerHa ha, EngineRunner engine,
      ContainerBook book, QueueRegistry queues) {
    this.scheduler = scheduler;
    this.queues = queues;
    this.settings = settings;
    this.ha = ha;
    this.engine = engine;
    this.book = book;
  }

  @Override
  public EngineStatus status() {
    return scheduler.status();
  }

  @Override
  public SchedulerInfo info() {
    SchedulerLeadership.Term term = ha == null ? null : ha.term();
    return new SchedulerInfo(settings.rmId(), ha == null || term != null, term == null ? -1L : term.epoch(),
        settings.cycleIntervalMs(), queues.ignoredKeys().stream().map(QueueTree.IgnoredKey::describe).toList());
  }

  @Override
  public Explanation explain(AppId appId) {
    return scheduler.explain(YarnIds.application(appId));
  }

  @Override
  public List<AppHistory.Outcome> history(AppId appId) {
    return engine.history(appId);
  }

  @Override
  public Optional<String> containerName(long allocationId) {
    return book.container(allocationId).map(ContainerId::toString);
  }

  @Override
  public boolean isQueueAdmin(String user, String queuePath) {
    return scheduler.checkAccess(UserGroupInformation.createRemoteUser(user), QueueACL.ADMINISTER_QUEUE, queuePath);
  }

  @Override
  public String refreshQueues() throws IOException {
    return scheduler.refreshQueues();
  }

  @Override
  public String cordon(String node, String reason) {
    return scheduler.cordon(node, reason);
  }

  @Override
  public String cordonGpu(String node, int gpu, String reason) {
    return scheduler.cordonGpu(node, gpu, reason);
  }
}
