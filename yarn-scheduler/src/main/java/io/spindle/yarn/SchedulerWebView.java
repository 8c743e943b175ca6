package io.spindle.yarn;

import io.spindle.core.engine.EngineStatus;
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

  SchedulerWebView(SpindleScheduler scheduler) {
    this.scheduler = scheduler;
  }

  @Override
  public EngineStatus status() {
    return scheduler.status();
  }

  @Override
  public SchedulerInfo info() {
    Optional<SchedulerLeadership.Term> term = scheduler.term();
    return new SchedulerInfo(scheduler.settings().rmId(), scheduler.leads(),
        term.map(SchedulerLeadership.Term::epoch).orElse(-1L), scheduler.settings().cycleIntervalMs());
  }

  @Override
  public Explanation explain(String appId) {
    return scheduler.explain(ApplicationId.fromString(appId));
  }

  @Override
  public List<AppHistory.Outcome> history(String appId) {
    return scheduler.history(appId);
  }

  @Override
  public Optional<String> containerName(long allocationId) {
    return scheduler.container(allocationId).map(ContainerId::toString);
  }

  @Override
  public boolean isQueueAdmin(String user, String queuePath) {
    return scheduler.checkAccess(UserGroupInformation.createRemoteUser(user), QueueACL.ADMINISTER_QUEUE, queuePath);
  }

  @Override
  public String refreshQueues() throws IOException {
    return scheduler.refreshQueues();
  }
}
