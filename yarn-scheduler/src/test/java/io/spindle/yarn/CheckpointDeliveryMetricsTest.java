package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.client.CheckpointAckView;
import io.spindle.client.CheckpointNoticeView;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.model.AppId;
import io.spindle.metrics.SpindleMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** What {@link CheckpointDelivery} counts in {@link SpindleMetrics}: answers with their latency, and ends. */
class CheckpointDeliveryMetricsTest {

  private static final String APP = "application_1700000000000_0001";

  private final AtomicLong now = new AtomicLong(1_000);
  private final List<EngineEvent> toEngine = new ArrayList<>();
  private final SpindleMetrics metrics = new SpindleMetrics();
  private final CheckpointDelivery delivery = new CheckpointDelivery(new PreemptionNotices(),
      CheckpointDelivery.containers(id -> null, app -> Optional.empty()), toEngine::add, now::get);

  {
    delivery.measure(metrics);
  }

  private static CheckpointNoticeView notice(long id, long issuedMillis) {
    return new CheckpointNoticeView(APP, id, 1, List.of("workers"), List.of(), "room for root.b", issuedMillis,
        issuedMillis + 120_000, 0, 1, 300_000, Optional.empty());
  }

  private long outcomes(String outcome) {
    return metrics.registry().meter("spindle.checkpoint.outcomes." + outcome).getCount();
  }

  @Test
  void answersAreTimedFromTheNoticeAndCountedByKind() {
    now.set(4_500);
    delivery.onAck(new CheckpointAckView(APP, 7, 1, CheckpointAckView.Kind.EXTEND, 60_000, Optional.empty(),
        OptionalLong.empty(), 4_400), notice(7, 1_000));
    now.set(12_000);
    delivery.onAck(new CheckpointAckView(APP, 7, 2, CheckpointAckView.Kind.DONE, 0, Optional.of("hdfs:///ckpt/7"),
        OptionalLong.of(11_000), 11_900), notice(7, 2_000));

    assertThat(outcomes("extend")).isEqualTo(1);
    assertThat(outcomes("done")).isEqualTo(1);
    var latency = metrics.registry().timer("spindle.checkpoint.ack.seconds");
    assertThat(latency.getCount()).isEqualTo(2);
    assertThat(latency.getSnapshot().getMin()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(3_500));
    assertThat(latency.getSnapshot().getMax()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(10_000));
    assertThat(toEngine).hasSize(2); // The answers still reach the engine.
  }

  @Test
  void reclaimsAreCountedApartByWhetherTheVictimAnsweredAndWithdrawalsOnTheirOwn() {
    delivery.reclaimed(new Decision.Preempt(1, AppId.of(APP), "workers", List.of(1L), null,
        "the checkpoint deadline (121000 ms) passed without a DONE answer; reclaimed for 4 GPUs of root.b"));
    delivery.reclaimed(new Decision.Preempt(2, AppId.of(APP), "workers", List.of(2L), "hdfs:///ckpt/2",
        "the application reported its checkpoint done; reclaimed for 4 GPUs of root.b"));
    delivery.reclaimed(new Decision.Preempt(3, AppId.of(APP), "workers", List.of(3L), "hdfs:///ckpt/3",
        "the application reported its checkpoint done; reclaimed for 4 GPUs of root.b"));
    delivery.cancel(new Decision.CancelCheckpoint(4, AppId.of(APP), List.of(4L), "root.b no longer starves"));

    assertThat(outcomes("reclaimed_at_deadline")).isEqualTo(1);
    assertThat(outcomes("reclaimed_after_done")).isEqualTo(2);
    assertThat(outcomes("withdrawn")).isEqualTo(1);
  }
}
