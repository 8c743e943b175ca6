package io.spindle.yarn;

import io.spindle.channel.checkpoint.CheckpointNoticeStore;
import io.spindle.channel.mig.MigLayoutExchange;
import io.spindle.ha.SchedulerZk;
import io.spindle.ha.SchedulerZkIdentity;
import io.spindle.ha.ZkSettings;
import io.spindle.ha.avro.MigLayoutRecord;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;

/**
 * The scheduler's ZooKeeper session and what runs over it: leadership and the saved state ({@link SchedulerHa}), the
 * MIG-layout channel to the NodeManagers' agents, and the checkpoint-notice channel to the ApplicationMasters; both
 * channels write fenced by the leadership.
 */
final class SchedulerZooKeeper implements AutoCloseable {

  private final SchedulerZk session;
  private final SchedulerHa ha;
  private final MigLayoutExchange migExchange;
  private final CheckpointNoticeStore notices;

  private SchedulerZooKeeper(SchedulerZk session, SchedulerHa ha, MigLayoutExchange migExchange,
      CheckpointNoticeStore notices) {
    this.session = session;
    this.ha = ha;
    this.migExchange = migExchange;
    this.notices = notices;
  }

  /**
   * Connects when ZooKeeper is configured ({@link ZkSettings}); empty otherwise. {@code migReports} hears each layout
   * an agent reports; notices and their answers go through {@code checkpoints}.
   */
  static Optional<SchedulerZooKeeper> connect(Configuration c, SchedulerSettings settings, Runnable wake,
      Consumer<String> fatal, Consumer<MigLayoutRecord> migReports, CheckpointDelivery checkpoints)
      throws Exception {
    ZkSettings zk = ZkSettings.from(c);
    if (!zk.enabled()) {
      return Optional.empty();
    }
    SchedulerZkIdentity identity = SchedulerZkIdentity.from(c);
    SchedulerZk session = SchedulerZk.connect(zk, identity, c);
    SchedulerHa ha = new SchedulerHa(session, identity, settings.instanceId(), settings.takeOverWaitMillis(),
        System::currentTimeMillis, wake, fatal);
    MigLayoutExchange migExchange = MigLayoutExchange.start(session.client(), zk.root(), ha.fence(),
        identity.schedulerOnlyAcl(), migReports);
    CheckpointNoticeStore notices = CheckpointNoticeStore.start(session.client(), zk.root(), identity.aclId(),
        ha.fence(), checkpoints);
    checkpoints.useStore(notices);
    return Optional.of(new SchedulerZooKeeper(session, ha, migExchange, notices));
  }

  SchedulerHa ha() {
    return ha;
  }

  MigLayoutExchange migExchange() {
    return migExchange;
  }

  @Override
  public void close() throws Exception {
    ha.close();
    migExchange.close();
    notices.close();
    session.close();
  }
}
