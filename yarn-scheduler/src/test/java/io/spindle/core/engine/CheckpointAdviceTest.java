package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.gpuNode;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.CheckpointReported;
import io.spindle.core.engine.EngineEvent.ContainerRecovered;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueTree;
import io.spindle.core.reliability.CheckpointAdvice;
import io.spindle.core.reliability.CheckpointAdvisor;
import io.spindle.core.reliability.CheckpointInterval;
import io.spindle.core.reliability.FailureRate;
import io.spindle.ha.SchedulerStateCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * The checkpoint interval the engine advises, on a virtual clock: for the GPUs an application holds (or asks for),
 * at the failure rate the cluster has seen, with the write time the application reported; with preemption off, as
 * by default; and the same after a failover.
 */
class CheckpointAdviceTest {

  private static final long HOUR = 3_600_000;
  private static final Resources EIGHT_GPUS = Resources.of(1024, 1).withGpus(8);
  private static final Topology RACK = Topology.builder("rack").location("/r1").build();
  private static final QueueTree ONE = queues("root.queues", "a", "root.a.capacity", "100",
      "root.a.user-limit-factor", "-1");
  private static final AppId TRAIN = AppId.of("train");

  private final ManualClock clock = new ManualClock(0);

  private Engine engine() {
    Engine e = new Engine(CATALOG, ONE, RACK, clock, EngineSettings.defaults());
    e.cycle(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)), new NodeAdded(gpuNode("n2", "/r1", 8))));
    return e;
  }

  private CycleResult at(Engine e, long millis, EngineEvent... events) {
    clock.set(millis);
    return e.cycle(List.of(events));
  }

  /** {@code train} runs two containers of 8 GPUs: the whole cluster. */
  private List<Allocate> train(Engine e) {
    List<Allocate> started = at(e, 0, new AppSubmitted(TRAIN, "a", "u", 0), new Demand(TRAIN, "w", EIGHT_GPUS, 2))
        .allocations();
    assertThat(started).hasSize(2);
    return started;
  }

  private static double mtbf(double perGpuHour, int gpus) {
    return FailureRate.mtbfMillis(perGpuHour, gpus);
  }

  @Test
  void aNewClusterAdvisesFromThePriorAndTheDefaultWriteTime() {
    Engine e = engine();
    train(e);

    CheckpointAdvice a = e.checkpointAdvice(TRAIN).orElseThrow();

    assertThat(a.gpus()).isEqualTo(16);
    assertThat(a.failuresPerGpuHour()).isEqualTo(FailureRate.LLAMA3_PER_GPU_HOUR);
    assertThat(a.writeMillis()).isEqualTo(CheckpointAdvisor.DEFAULT_WRITE_MILLIS);
    assertThat(a.evidence().writeReported()).isFalse();
    assertThat(a.intervalMillis()).isEqualTo(CheckpointInterval.dalyMillis(60_000,
        mtbf(FailureRate.LLAMA3_PER_GPU_HOUR, 16)));
    assertThat(e.status().app(TRAIN).orElseThrow().checkpointAdvice()).isEqualTo(a);
  }

  @Test
  void theReportedWriteTimeIsUsedAndKeptByReportsThatDoNotSayIt() {
    Engine e = engine();
    train(e);
    at(e, HOUR, new CheckpointReported(TRAIN, HOUR - 20_000, "s3://ckpt/1", OptionalLong.of(20_000)));
    assertThat(e.checkpointAdvice(TRAIN).orElseThrow().writeMillis()).isEqualTo(20_000);

    at(e, 2 * HOUR, new CheckpointReported(TRAIN, 2 * HOUR, "s3://ckpt/2"));
    CheckpointAdvice a = e.checkpointAdvice(TRAIN).orElseThrow();
    assertThat(a.writeMillis()).as("an older client's report").isEqualTo(20_000);
    assertThat(a.evidence().writeReported()).isTrue();
    assertThat(a.intervalMillis()).isEqualTo(CheckpointInterval.dalyMillis(20_000, a.mtbfMillis()));
  }

  @Test
  void failuresSeenOverTheClustersGpuHoursMoveTheRate() {
    Engine e = engine();
    train(e);
    at(e, 1_000 * HOUR);
    for (int i = 0; i < 3; i++) {
      e.failureObservations().gpuFailed(clock.nowMillis());
    }

    CheckpointAdvice a = e.checkpointAdvice(TRAIN).orElseThrow();

    double rate = FailureRate.defaults().perGpuHour(3, 16 * 1_000.0);
    assertThat(a.failuresPerGpuHour()).isCloseTo(rate, within(1e-15));
    assertThat(a.evidence().gpuHoursSeen()).isEqualTo(16_000.0);
    assertThat(a.mtbfMillis()).isCloseTo(mtbf(rate, 16), within(1e-3));
    assertThat(rate).isGreaterThan(FailureRate.LLAMA3_PER_GPU_HOUR);
  }

  @Test
  void aWaitingApplicationIsAdvisedForWhatItAsksAndOneWithoutGpusForNothing() {
    Engine e = engine();
    train(e);
    AppId next = AppId.of("next");
    AppId cpu = AppId.of("cpu");
    at(e, HOUR, new AppSubmitted(next, "a", "u", 0), new Demand(next, "w", EIGHT_GPUS, 4),
        new AppSubmitted(cpu, "a", "u", 0), new Demand(cpu, "r", Resources.of(512, 1), 1));

    CheckpointAdvice waiting = e.checkpointAdvice(next).orElseThrow();
    assertThat(waiting.gpus()).isEqualTo(32);
    assertThat(waiting.evidence().gpusHeld()).isFalse();
    assertThat(e.checkpointAdvice(cpu)).isEmpty();
    assertThat(e.checkpointAdvice(AppId.of("unknown"))).isEmpty();
    assertThat(e.status().app(cpu).orElseThrow().checkpointAdvice()).isNull();
  }

  @Test
  void timePassingIsNoChangeToSaveButANodeJoiningIs() {
    Engine e = engine();
    train(e);
    long version = e.durableVersion();
    DurableState before = e.durableState(id -> "c" + id);
    at(e, 500 * HOUR);
    assertThat(e.durableVersion()).isEqualTo(version);
    assertThat(e.durableState(id -> "c" + id)).isEqualTo(before);

    at(e, 501 * HOUR, new NodeAdded(gpuNode("n3", "/r1", 8)));
    assertThat(e.durableVersion()).isGreaterThan(version);
    assertThat(e.durableState(id -> "c" + id).failures())
        .isEqualTo(new io.spindle.core.reliability.FailureObservations.Saved(16 * 501 * HOUR, 501 * HOUR, 24, 0));
  }

  @Test
  void theWriteTimeAndWhatTheClusterSawSurviveAFailoverThroughTheAvroState() {
    Engine leader = engine();
    List<Allocate> running = train(leader);
    at(leader, 100 * HOUR, new CheckpointReported(TRAIN, 100 * HOUR, "s3://ckpt/9", OptionalLong.of(45_000)));
    leader.failureObservations().gpuFailed(clock.nowMillis());
    DurableState saved = SchedulerStateCodec.decode(SchedulerStateCodec.encode(
        leader.durableState(id -> "c" + id), 3)).state();
    clock.set(110 * HOUR);
    CheckpointAdvice expected = leader.checkpointAdvice(TRAIN).orElseThrow();

    Engine standby = new Engine(CATALOG, ONE, RACK, clock, EngineSettings.defaults());
    List<EngineEvent> recovery = new ArrayList<>(List.of(new NodeAdded(gpuNode("n1", "/r1", 8)),
        new NodeAdded(gpuNode("n2", "/r1", 8)), new AppSubmitted(TRAIN, "a", "u", 0)));
    for (Allocate a : running) {
      recovery.add(new ContainerRecovered(-a.allocationId(), TRAIN, "w", a.nodeId(), a.shape()));
    }
    standby.cycle(recovery);
    RestoreReport report = standby.restore(saved, name -> -Long.parseLong(name.substring(1)));

    assertThat(report.dropped()).isEmpty();
    assertThat(standby.checkpointAdvice(TRAIN)).contains(expected);
    assertThat(expected.writeMillis()).isEqualTo(45_000);
    assertThat(expected.evidence().failuresSeen()).isEqualTo(1);
    assertThat(expected.evidence().gpuHoursSeen()).as("the failover's 10 hours counted too").isEqualTo(1_760.0);
  }

  @Test
  void thePriorAndDefaultWriteTimeAreSettings() {
    EngineSettings s = EngineSettings.fromConfiguration(java.util.Map.of(
        EngineSettings.RELIABILITY_PRIOR_FAILURES_PER_GPU_HOUR, "1e-4",
        EngineSettings.RELIABILITY_PRIOR_GPU_HOURS, "1000", EngineSettings.CHECKPOINT_DEFAULT_WRITE_SECONDS, "300"));
    assertThat(s.checkpointAdvice()).isEqualTo(new CheckpointAdvisor(new FailureRate(1e-4, 1000), 300_000));
    assertThat(EngineSettings.fromConfiguration(java.util.Map.of()).checkpointAdvice())
        .isEqualTo(CheckpointAdvisor.defaults());
    assertThat(s.withPreemption(io.spindle.core.preemption.PreemptionSettings.defaults()).withShareCandidates(3)
        .checkpointAdvice()).as("kept by every with-er").isEqualTo(s.checkpointAdvice());
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> EngineSettings.fromConfiguration(java.util.Map.of(
        EngineSettings.RELIABILITY_PRIOR_FAILURES_PER_GPU_HOUR, "often")))
        .hasMessageContaining(EngineSettings.RELIABILITY_PRIOR_FAILURES_PER_GPU_HOUR);
  }
}
