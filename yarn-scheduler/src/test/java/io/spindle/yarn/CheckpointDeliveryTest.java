package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision;
import io.spindle.core.model.AppId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.junit.jupiter.api.Test;

class CheckpointDeliveryTest {

  private static final String APP = "application_1700000000000_0001";
  private static final ContainerId WORKER = ContainerId.fromString("container_1700000000000_0001_01_000002");

  private static Decision.RequestCheckpoint notice(long... allocations) {
    List<Long> ids = new ArrayList<>();
    for (long a : allocations) {
      ids.add(a);
    }
    return new Decision.RequestCheckpoint(1, AppId.of(APP), "workers", ids, 120_000, 0, 1, 300_000, null,
        AppId.of("application_1700000000000_0002"), "workers", "room for a higher priority");
  }

  /**
   * The engine chose victims that YARN completed before the decision was applied (seen in the seed demo when the
   * victim's AM ended): no notice and no empty strict contract goes to the AM.
   */
  @Test
  void aNoticeWhoseContainersHaveAllEndedIsNotSent() {
    PreemptionNotices contracts = new PreemptionNotices();
    Map<Long, ContainerId> live = Map.of(7L, WORKER);
    List<ContainerId> signalled = new ArrayList<>();
    CheckpointDelivery delivery = new CheckpointDelivery(contracts,
        CheckpointDelivery.containers(a -> live.get(a), app -> Optional.empty()), e -> { }, () -> 1_000);
    delivery.signalOnNotice(signalled::add);

    delivery.request(notice(5, 6));
    assertThat(contracts.contract(ApplicationId.fromString(APP))).as("YARN's 'none'").isNull();
    assertThat(signalled).isEmpty();

    delivery.request(notice(6, 7));
    assertThat(contracts.contract(ApplicationId.fromString(APP))).containsExactly(WORKER);
    assertThat(signalled).containsExactly(WORKER);
  }
}
