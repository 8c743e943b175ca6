package io.spindle.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.ResourceVector;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * H-DRF against shares computed by hand. Each case spells out the arithmetic, so a change in the rule shows up as
 * a reviewable change in these comments.
 */
class FairShareCalculatorTest {

  private static final long G = ResourceVector.GPU_UNITS;

  private static QueueTree tree(String... keyValues) {
    Map<String, String> conf = new HashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      conf.put("yarn.scheduler.capacity." + keyValues[i], keyValues[i + 1]);
    }
    return new QueueConfigParser().parse(conf);
  }

  @Test
  void gpuDominantAndMemoryDominantQueuesOnThreeLevels() {
    // root -> ml (70) | etl (30); ml -> train (50, weight 3) | infer (50, weight 1).
    // Cluster: 1600 MB, 160 vcores, 16 GPUs (13440 units).
    QueueTree t = tree(
        "root.queues", "ml,etl",
        "root.ml.capacity", "70", "root.etl.capacity", "30",
        "root.ml.queues", "train,infer",
        "root.ml.train.capacity", "50", "root.ml.train.spindle.weight", "3",
        "root.ml.infer.capacity", "50");
    ResourceVector cluster = new ResourceVector(1600, 160, 16 * G);
    Map<String, ResourceVector> demand = Map.of(
        "root.ml.train", new ResourceVector(100, 10, 16 * G),
        "root.ml.infer", new ResourceVector(100, 10, 16 * G),
        "root.etl", new ResourceVector(800, 40, 0));

    Map<String, QueueShare> s = FairShareCalculator.compute(t, cluster, demand);

    // Level 1. Guarantees: ml (1120, 112, 9408), etl (480, 48, 4032).
    // Demands: ml (200, 20, 32 GPUs -> capped at 13440), etl (800, 40, 0).
    // Base = min(guarantee, demand): ml (200, 20, 9408), etl (480, 40, 0). Left: (320, 0, 4032).
    // Filling: ml wants (0, 0, 4032), dominant 0.3; etl wants (320, 0, 0), dominant 0.2. Both fill fully.
    assertThat(s.get("root.ml").fairShare()).isEqualTo(new ResourceVector(200, 20, 16 * G));
    assertThat(s.get("root.etl").fairShare()).isEqualTo(new ResourceVector(800, 40, 0));
    // Level 2. Guarantees: 50% of ml's = (560, 56, 4704) each. Base: (100, 10, 4704) each. Left: 4032 GPU units.
    // Both want 8736 more GPU units; weights 3:1 split the 4032 as 3024:1008.
    assertThat(s.get("root.ml.train").fairShare()).isEqualTo(new ResourceVector(100, 10, 4704 + 3024));
    assertThat(s.get("root.ml.infer").fairShare()).isEqualTo(new ResourceVector(100, 10, 4704 + 1008));
    assertThat(s.get("root.ml.train").fairShare().gpus()).isEqualTo(9.2);
    assertThat(s.get("root.ml.infer").fairShare().gpus()).isEqualTo(6.8);
  }

  @Test
  void memoryHeavyAndCpuHeavyQueuesSplitByDominantShare() {
    // root -> x (50) | y (50). Cluster: 1800 MB, 90 vcores, no GPUs.
    QueueTree t = tree("root.queues", "x,y", "root.x.capacity", "50", "root.y.capacity", "50");
    ResourceVector cluster = new ResourceVector(1800, 90, 0);
    Map<String, ResourceVector> demand = Map.of(
        "root.x", new ResourceVector(1200, 30, 0),   // memory-dominant: 2/3 of memory
        "root.y", new ResourceVector(300, 90, 0));   // vcore-dominant: all vcores

    Map<String, QueueShare> s = FairShareCalculator.compute(t, cluster, demand);

    // Guarantees (900, 45) each. Base: x (900, 30), y (300, 45). Left: (600, 15).
    // x wants 300 MB more (dominant 1/6), y wants 45 vcores more (dominant 1/2).
    // At t = 1/6 x is satisfied and the 15 spare vcores are gone, so y ends with 60 vcores.
    assertThat(s.get("root.x").fairShare()).isEqualTo(new ResourceVector(1200, 30, 0));
    assertThat(s.get("root.y").fairShare()).isEqualTo(new ResourceVector(300, 60, 0));
  }

  @Test
  void idleGuaranteeIsLentAndDeeperTreesFollowTheirParents() {
    // root -> a (50) | b (50); a -> a1 (50) | a2 (50). b is idle, so a may use everything.
    // Cluster: 1000 MB, 100 vcores, 10 GPUs (8400 units).
    QueueTree t = tree(
        "root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
        "root.a.queues", "a1,a2", "root.a.a1.capacity", "50", "root.a.a2.capacity", "50");
    ResourceVector cluster = new ResourceVector(1000, 100, 10 * G);
    Map<String, ResourceVector> demand = Map.of(
        "root.a.a1", new ResourceVector(100, 0, 10 * G),   // wants every GPU
        "root.a.a2", new ResourceVector(1000, 0, 0));      // wants all memory

    Map<String, QueueShare> s = FairShareCalculator.compute(t, cluster, demand);

    // Level 1: a gets its guarantee (500, 0, 4200) and then all of b's idle half: (1000, 0, 8400).
    assertThat(s.get("root.a").fairShare()).isEqualTo(new ResourceVector(1000, 0, 10 * G));
    assertThat(s.get("root.b").fairShare()).isEqualTo(ResourceVector.ZERO);
    // Level 2: guarantees (250, 25, 2100) each. Base a1 (100, 0, 2100), a2 (250, 0, 0); left (650, 0, 6300).
    // a1 fills GPUs, a2 fills memory, both at rate 1: memory runs out at t = 0.65 (a2 has 900), a1 then takes
    // the last 840 GPU units alone.
    assertThat(s.get("root.a.a1").fairShare()).isEqualTo(new ResourceVector(100, 0, 10 * G));
    assertThat(s.get("root.a.a2").fairShare()).isEqualTo(new ResourceVector(900, 0, 0));
  }

  @Test
  void maximumCapacityCapsTheShareAndTheRestGoesToSiblings() {
    QueueTree t = tree("root.queues", "a,b", "root.a.capacity", "50", "root.a.maximum-capacity", "60",
        "root.b.capacity", "50");
    ResourceVector cluster = new ResourceVector(1000, 100, 10 * G);
    Map<String, ResourceVector> demand = Map.of(
        "root.a", new ResourceVector(0, 0, 10 * G),
        "root.b", new ResourceVector(0, 0, 10 * G));

    Map<String, QueueShare> s = FairShareCalculator.compute(t, cluster, demand);

    // Equal weights would give 5 GPUs each; the cap does not bind below 6, so 5 / 5.
    assertThat(s.get("root.a").fairShare().gpuUnits()).isEqualTo(5 * G);
    assertThat(s.get("root.b").fairShare().gpuUnits()).isEqualTo(5 * G);

    Map<String, QueueShare> onlyA = FairShareCalculator.compute(t, cluster,
        Map.of("root.a", new ResourceVector(0, 0, 10 * G)));
    // Alone, a may borrow only up to its maximum of 60%.
    assertThat(onlyA.get("root.a").fairShare().gpuUnits()).isEqualTo(6 * G);
    assertThat(onlyA.get("root.a").maximum()).isEqualTo(new ResourceVector(600, 60, 6 * G));
  }

  @Test
  void absoluteGuaranteesResolveAndNoDemandMeansNoShare() {
    QueueTree t = tree("root.queues", "gpu,cpu",
        "root.gpu.capacity", "[memory=500,vcores=50,yarn.io/gpu=8]",
        "root.cpu.capacity", "[memory=500,vcores=50]");
    ResourceVector cluster = new ResourceVector(1000, 100, 10 * G);

    Map<String, QueueShare> s = FairShareCalculator.compute(t, cluster, Map.of());

    assertThat(s.get("root.gpu").guarantee()).isEqualTo(new ResourceVector(500, 50, 8 * G));
    assertThat(s.get("root.cpu").guarantee()).isEqualTo(new ResourceVector(500, 50, 0));
    assertThat(s.get("root.cpu").maximum()).isEqualTo(cluster);
    assertThat(s.get("root.gpu").fairShare()).isEqualTo(ResourceVector.ZERO);
  }
}
