package io.spindle.core.engine;

import static io.spindle.core.Fixtures.CATALOG;
import static io.spindle.core.Fixtures.queues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuIsolation;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Shares of one GPU: placed on a shared GPU with room, the tightest fit first, charged by their size. */
class SharedGpuPlacementTest {

  private static final QueueTree ONE = queues("root.queues", "a", "root.a.capacity", "100",
      "root.a.user-limit-factor", "-1");
  private static final GpuModel L40S = CATALOG.require("model", "L40S-48GB");
  private static final GpuModel T4 = CATALOG.require("model", "T4-16GB");

  private final Engine engine = new Engine(CATALOG, ONE, Topology.singleRack(), new ManualClock(0),
      EngineSettings.defaults().withRegistrationSettleMillis(0));

  private static Node node(String id, GpuModel model, GpuSharing... modes) {
    List<Gpu> gpus = new ArrayList<>();
    for (int i = 0; i < modes.length; i++) {
      gpus.add(Gpu.shared(i, model, 0, modes[i]));
    }
    return new Node(NodeId.of(id), Topology.DEFAULT_RACK, 256_000, 64, gpus);
  }

  private static Resources share(int milli) {
    return Resources.of(1024, 1).withShare(milli, 0, GpuIsolation.ANY);
  }

  private CycleResult ask(String app, Resources shape, int count) {
    return engine.cycle(List.of(new AppSubmitted(AppId.of(app), "a", "u", 0), new Demand(AppId.of(app), "r", shape,
        count)));
  }

  private static Map<String, Integer> perGpu(CycleResult r) {
    Map<String, Integer> out = new TreeMap<>();
    r.allocations().forEach(a -> out.merge(a.nodeId().value() + "/" + a.gpus(), 1, Integer::sum));
    return out;
  }

  @Test
  void fourQuarterSharesFillOneGpuAndTheFifthGoesToAnother() {
    engine.cycle(List.of(new NodeAdded(node("n1", L40S, GpuSharing.TIME_SLICE, GpuSharing.TIME_SLICE))));
    CycleResult r = ask("app", share(250), 5);
    assertThat(perGpu(r)).isEqualTo(Map.of("n1/[gpu0:share]", 4, "n1/[gpu1:share]", 1));
    // 250 milli is exactly a quarter of 840 units, so usage returns to zero when the shares end.
    assertThat(r.allocations()).allSatisfy(a -> assertThat(a.charge()).isEqualTo(new ResourceVector(1024, 1, 210)));
    assertThat(engine.appUsage(AppId.of("app")).orElseThrow().gpuUnits()).isEqualTo(5 * 210);
    List<EngineEvent> done = new ArrayList<>();
    r.allocations().forEach(a -> done.add(new ContainerFinished(a.allocationId())));
    engine.cycle(done);
    assertThat(engine.appUsage(AppId.of("app")).orElseThrow()).isEqualTo(ResourceVector.ZERO);
  }

  @Test
  void aWholeGpuTakesAnIdleSharedGpuButNeverOneWithShares() {
    engine.cycle(List.of(new NodeAdded(node("n1", L40S, GpuSharing.TIME_SLICE, GpuSharing.TIME_SLICE))));
    ask("small", share(100), 1);
    CycleResult r = ask("big", Resources.of(1024, 1).withGpus(1), 2);
    assertThat(r.allocations()).hasSize(1);
    assertThat(r.allocations().get(0).gpus()).hasToString("[gpu1]");
  }

  @Test
  void aShareGoesToThePartlyUsedGpuItFitsMostTightly() {
    engine.cycle(List.of(new NodeAdded(node("n1", L40S, GpuSharing.MPS, GpuSharing.MPS, GpuSharing.MPS))));
    ask("a", share(600), 1); // gpu0: 400 left
    ask("b", share(300), 1); // fits gpu0 (100 left) better than an idle GPU
    ask("c", share(500), 1); // gpu0 has 100 left: gpu1
    CycleResult r = ask("d", share(450), 1); // gpu1 has 500 left: tighter than idle gpu2
    assertThat(r.allocations().get(0).gpus()).hasToString("[gpu1:share]");
  }

  @Test
  void mpsIsolationLandsOnlyOnMpsGpusAndIsRejectedWhereNoneExists() {
    engine.cycle(List.of(new NodeAdded(node("ts", L40S, GpuSharing.TIME_SLICE))));
    CycleResult r = ask("iso", Resources.of(1024, 1).withShare(250, 0, GpuIsolation.MPS), 1);
    assertThat(r.allocations()).isEmpty();
    assertThat(r.decisions()).filteredOn(d -> d instanceof Decision.Reject).singleElement()
        .satisfies(d -> assertThat(((Decision.Reject) d).reason()).contains("MPS mode"));
    engine.cycle(List.of(new NodeAdded(node("mps", L40S, GpuSharing.MPS))));
    r = ask("iso2", Resources.of(1024, 1).withShare(250, 0, GpuIsolation.MPS), 1);
    assertThat(r.allocations()).singleElement().satisfies(a -> assertThat(a.nodeId()).isEqualTo(NodeId.of("mps")));
  }

  @Test
  void aShareOnExclusiveGpusOnlyIsRejectedAtOnce() {
    engine.cycle(List.of(new NodeAdded(node("ex", L40S, GpuSharing.EXCLUSIVE, GpuSharing.EXCLUSIVE))));
    CycleResult r = ask("s", share(250), 1);
    assertThat(r.decisions()).filteredOn(d -> d instanceof Decision.Reject).singleElement()
        .satisfies(d -> assertThat(((Decision.Reject) d).reason()).contains("sharing mode"));
  }

  @Test
  void memoryIsPartOfTheShareAndOfItsCharge() {
    engine.cycle(List.of(new NodeAdded(node("t4", T4, GpuSharing.TIME_SLICE))));
    // 8 GB of a 16 GB T4 with a tenth of its compute: charged by the memory, half a GPU.
    CycleResult r = ask("m", Resources.of(1024, 1).withShare(100, 8_192, GpuIsolation.ANY), 3);
    assertThat(r.allocations()).hasSize(2);
    assertThat(r.allocations().get(0).charge().gpuUnits()).isEqualTo(420);
    CycleResult tooBig = ask("huge", Resources.of(1024, 1).withShare(100, 300_000, GpuIsolation.ANY), 1);
    assertThat(tooBig.decisions()).filteredOn(d -> d instanceof Decision.Reject).singleElement()
        .satisfies(d -> assertThat(((Decision.Reject) d).reason()).contains("nvidia.com/gpu-mem-mb=300000"));
  }

  @Test
  void aModelSetTakesAnyOfItsModelsAndAnUnknownModelIsRejected() {
    engine.cycle(List.of(new NodeAdded(node("t4", T4, GpuSharing.TIME_SLICE)),
        new NodeAdded(node("l40s", L40S, GpuSharing.TIME_SLICE))));
    CycleResult r = ask("set", share(600).withGpuModel("T4-16GB|L40S-48GB"), 2);
    assertThat(perGpu(r)).isEqualTo(Map.of("l40s/[gpu0:share]", 1, "t4/[gpu0:share]", 1));
    CycleResult bad = ask("bad", share(100).withGpuModel("T4-16GB|H9000"), 1);
    assertThat(bad.decisions()).filteredOn(d -> d instanceof Decision.Reject).singleElement()
        .satisfies(d -> assertThat(((Decision.Reject) d).reason()).contains("unknown GPU model 'H9000'"));
  }

  /** Indexes per model exist only once a second model registers; what ran before must be found in them. */
  @Test
  void aSecondModelRegisteringLaterKeepsEveryModelsWorkWhereItIs() {
    engine.cycle(List.of(new NodeAdded(node("l40s", L40S, GpuSharing.TIME_SLICE, GpuSharing.TIME_SLICE))));
    ask("first", share(600), 1); // l40s gpu0: 400 left
    ask("whole", Resources.of(1024, 1).withGpus(1).withGpuModel("L40S-48GB"), 1); // l40s gpu1
    engine.cycle(List.of(new NodeAdded(node("t4", T4, GpuSharing.TIME_SLICE, GpuSharing.TIME_SLICE))));
    assertThat(perGpu(ask("l40s-share", share(400).withGpuModel("L40S-48GB"), 1)))
        .isEqualTo(Map.of("l40s/[gpu0:share]", 1));
    assertThat(ask("l40s-more", share(100).withGpuModel("L40S-48GB"), 1).allocations()).isEmpty();
    assertThat(perGpu(ask("t4-whole", Resources.of(1024, 1).withGpus(1).withGpuModel("T4-16GB"), 1)))
        .isEqualTo(Map.of("t4/[gpu0]", 1));
    assertThat(perGpu(ask("any", share(300), 1))).isEqualTo(Map.of("t4/[gpu1:share]", 1));
  }

  @Test
  void badSharesAreRefusedWithTheFieldAndTheValue() {
    assertThatThrownBy(() -> share(1001)).isInstanceOf(InvalidInputException.class).hasMessageContaining("gpuMilli=1001");
    assertThatThrownBy(() -> new Resources(1024, 1, 1, io.spindle.core.model.GpuModelSet.ANY, null, 0, "", 250, 0,
        GpuIsolation.ANY)).isInstanceOf(InvalidInputException.class).hasMessageContaining("gpus=1")
        .hasMessageContaining("not both");
    assertThatThrownBy(() -> new Resources(1024, 1, 0, io.spindle.core.model.GpuModelSet.ANY, "1g.10gb", 1, "", 250,
        0, GpuIsolation.ANY)).isInstanceOf(InvalidInputException.class).hasMessageContaining("migInstances=1");
  }

  @Test
  void gangsOfSharesPackOntoOneNode() {
    engine.cycle(List.of(new NodeAdded(node("n1", L40S, GpuSharing.TIME_SLICE, GpuSharing.TIME_SLICE)),
        new NodeAdded(node("n2", L40S, GpuSharing.TIME_SLICE, GpuSharing.TIME_SLICE))));
    CycleResult r = engine.cycle(List.of(new AppSubmitted(AppId.of("g"), "a", "u", 0),
        new Demand(AppId.of("g"), "r", share(500), 4, PlacementSpec.gang("node", true))));
    assertThat(r.allocations()).hasSize(4).extracting(Decision.Allocate::nodeId).containsOnly(r.allocations().get(0)
        .nodeId());
  }
}
