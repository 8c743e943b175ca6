package io.spindle.sim.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.NodeId;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Failure injection's accounting and its use of the engine, on small cases whose answer is known by hand: one GPU
 * failure at a known time loses exactly the training since the last checkpoint, plus the restart, plus the re-placing;
 * hot swap restarts the gang in the rack it held.
 */
class SimFaultsTest {

  private static final long MIN = 60_000;

  @Test
  void theBucketsOfOneInterruptionAreTheHandComputation() {
    // 30 min of training, a 1-min write, 10 min to start; a failure 10 + 2 x 31 + 20 = 92 min in.
    TrainingRun run = new TrainingRun("t", 16, 30 * MIN, MIN, 10 * MIN, 0);
    run.started(0);
    run.interrupted(92 * MIN);
    assertThat(run.usefulMillis).isEqualTo(60 * MIN);
    assertThat(run.writeTotalMillis).isEqualTo(2 * MIN);
    assertThat(run.restartMillis).isEqualTo(10 * MIN);
    assertThat(run.redoneMillis).as("the training since the last write").isEqualTo(20 * MIN);
    run.started(107 * MIN);
    run.end(148 * MIN); // 10 min start, 30 trained, 1 written.
    assertThat(run.replacingMillis).isEqualTo(15 * MIN);
    assertThat(run.usefulMillis).isEqualTo(90 * MIN);
    assertThat(run.usefulMillis + run.redoneMillis + run.writeTotalMillis + run.restartMillis + run.replacingMillis)
        .as("every millisecond in one bucket").isEqualTo(run.wallMillis());
    assertThat(run.effective()).isEqualTo(90.0 / 148);
  }

  @Test
  void aWriteCutShortIsLostWithTheIntervalBeforeIt() {
    TrainingRun run = new TrainingRun("t", 8, 30 * MIN, 2 * MIN, 0, 0);
    run.started(0);
    run.interrupted(31 * MIN);
    assertThat(run.redoneMillis).isEqualTo(30 * MIN);
    assertThat(run.writeTotalMillis).isEqualTo(MIN);
    assertThat(run.usefulMillis).isZero();
  }

  private static FaultOptions small(String restart) {
    // 2 racks of 4 nodes; one 16-GPU job; no random faults, no other work; checkpoints every 30 min, 1-min writes,
    // 10 min to restart, 30 s to stop; a failed GPU is back after 100 h.
    return FaultOptions.parse(Map.ofEntries(Map.entry("failures", "none"), Map.entry("nodes", "8"),
        Map.entry("nodes-per-rack", "4"), Map.entry("training-gpus", "16"), Map.entry("checkpoint", "fixed:1800"),
        Map.entry("checkpoint-write-seconds", "60"), Map.entry("restart-minutes", "10"),
        Map.entry("stop-seconds", "30"), Map.entry("background-load", "0"), Map.entry("repair-hours", "100"),
        Map.entry("days", "0.125"), Map.entry("restart", restart)));
  }

  @Test
  void oneFailureThroughTheEngineLosesTheWorkSinceTheCheckpointAndHotSwapStaysInTheRack() {
    FaultSimulator sim = new FaultSimulator(small("in-domain"), List.of());
    sim.failTrainingAt(92 * MIN, 0);
    FaultResult r = sim.run();
    FaultResult.Training t = r.training().get(0);
    assertThat(t.hardwareInterruptions()).isEqualTo(1);
    assertThat(t.redoneGpuHours()).as("20 min since the last write, x 16 GPUs").isEqualTo(20 / 60.0 * 16);
    assertThat(t.replacingGpuHours()).as("its members stop in 30 s, then it is placed at once")
        .isEqualTo(0.5 / 60 * 16);
    // 180 min: 10 + 2 x 31 + 20 (lost) + 0.5 (re-placing) + 10 (restart) = 102.5; then 77.5 min: 2 x 31 + 15.5.
    assertThat(t.usefulGpuHours()).isEqualTo((60 + 60 + 15.5) / 60 * 16);
    List<NodeId> after = sim.nodesOf(0);
    assertThat(after).hasSize(2);
    assertThat(after.stream().map(sim::rackOf).distinct()).as("the rack it held: rack 0, where it started")
        .containsExactly("/rack000");
  }

  @Test
  void restartAnywhereIsPlacedAtOnceOnOtherNodesWhileItsMembersStop() {
    FaultSimulator sim = new FaultSimulator(small("anywhere"), List.of());
    sim.failTrainingAt(92 * MIN, 0);
    FaultResult.Training t = sim.run().training().get(0);
    assertThat(t.hardwareInterruptions()).isEqualTo(1);
    assertThat(t.redoneGpuHours()).isEqualTo(20 / 60.0 * 16);
    assertThat(t.replacingGpuHours()).isZero();
  }

  @Test
  void twoRunsOfOneSeedAreTheSame() {
    FaultOptions o = FaultOptions.parse(Map.of("nodes", "64", "nodes-per-rack", "8", "training-gpus", "256",
        "failures", "0.001", "background-load", "0", "days", "2", "seed", "7"));
    assertThat(new FaultSimulator(o, List.of()).run().json()).isEqualTo(new FaultSimulator(o, List.of()).run().json());
  }
}
