package io.spindle.bench;

import io.spindle.sim.CsvTable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.spindle.bench.OpenbPackingBenchmark.Mode;
import io.spindle.bench.OpenbPackingBenchmark.OpenbNode;
import io.spindle.bench.OpenbPackingBenchmark.RunResult;
import io.spindle.bench.OpenbPackingBenchmark.Task;
import io.spindle.bench.OpenbPackingBenchmark.Variant;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.FragmentationAwareSlots;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OpenbPackingBenchmarkTest {

  private static final GpuModel T4 = OpenbPackingBenchmark.catalog(Set.of("T4"), true).require("model", "T4");

  @Test
  void readsNodesAndTasksByHeaderNameWithOrWithoutGpuSpec() throws Exception {
    List<OpenbNode> nodes = OpenbPackingBenchmark.readNodes(CsvTable.read("nodes",
        new StringReader("model,gpu,memory_mib,sn,cpu_milli\nT4,2,65536,n1,16000\n,0,262144,n0,32000\n")));
    assertThat(nodes).containsExactly(new OpenbNode("n1", 16000, 65536, 2, "T4"),
        new OpenbNode("n0", 32000, 262144, 0, null));

    List<Task> withSpec = OpenbPackingBenchmark.readTasks(CsvTable.read("pods", new StringReader(
        "name,gpu_spec,num_gpu,gpu_milli,cpu_milli,memory_mib,qos\np1,V100M32,1,460,6000,12288,LS\n")));
    assertThat(withSpec).containsExactly(new Task("p1", 6000, 12288, 1, 460, "V100M32"));
    // multigpu20 has only the first five columns.
    List<Task> without = OpenbPackingBenchmark.readTasks(CsvTable.read("pods", new StringReader(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np2,12000,16384,8,1000\n")));
    assertThat(without).containsExactly(new Task("p2", 12000, 16384, 8, 1000, ""));
    assertThat(without.get(0).gpuMilliTotal()).isEqualTo(8000);
  }

  @Test
  void readsThePublishedTableByColumnName() throws Exception {
    Map<String, Map<String, double[]>> p = OpenbPackingBenchmark.readPublished(CsvTable.read("pub", new StringReader(
        "policy,alloc_pct_at_130,alloc_pct_at_110,alloc_pct_at_100,alloc_pct_at_90,alloc_pct_at_80,workload\n"
            + "06-FGD,95.39,95.30,95.23,89.98,80.02,openb_pod_list_default\n")));
    assertThat(p.get("openb_pod_list_default").get("06-FGD")).containsExactly(80.02, 89.98, 95.23, 95.30, 95.39);
  }

  @Test
  void fractionsMapToTheSmallestProfileWhoseChargeCoversThem() {
    // Charges on the 8-slice geometry: 1g.1s 120/840, 1g.2s 210, 2g.2s 240, 3g.4s 420, 4g.4s 480, 7g.8s 840.
    int[][] cases = {{50, 0}, {142, 0}, {143, 1}, {250, 1}, {251, 2}, {285, 2}, {286, 3}, {470, 3}, {500, 3},
        {501, 4}, {550, 4}, {571, 4}, {572, 5}, {810, 5}, {999, 5}};
    String[] names = {"1g.1s", "1g.2s", "2g.2s", "3g.4s", "4g.4s", "7g.8s"};
    for (int[] c : cases) {
      MigProfile p = OpenbPackingBenchmark.profileFor(c[0], T4);
      assertThat(p.name()).as("gpu_milli %d", c[0]).isEqualTo(names[c[1]]);
      assertThat(p.gpuUnits() * 1000).isGreaterThanOrEqualTo(c[0] * 840L);
    }
  }

  @Test
  void tasksBecomeShapes() {
    Task whole = new Task("w", 12000, 16384, 8, 1000, "");
    Task frac = new Task("f", 6000, 12288, 1, 460, "T4");
    Task anyOfTwo = new Task("g", 6000, 12288, 1, 230, "T4|P100");
    Task cpu = new Task("c", 88000, 1000, 0, 0, "");
    assertThat(OpenbPackingBenchmark.shape(whole, Mode.MIG, T4)).isEqualTo(Resources.of(16384, 12000).withMig("7g.8s", 8));
    assertThat(OpenbPackingBenchmark.shape(whole, Mode.WHOLE, T4)).isEqualTo(Resources.of(16384, 12000).withGpus(8));
    assertThat(OpenbPackingBenchmark.shape(frac, Mode.MIG, T4))
        .isEqualTo(Resources.of(12288, 6000).withMig("3g.4s", 1).withGpuModel("T4"));
    assertThat(OpenbPackingBenchmark.shape(frac, Mode.WHOLE, T4))
        .isEqualTo(Resources.of(12288, 6000).withGpus(1).withGpuModel("T4"));
    assertThat(OpenbPackingBenchmark.shape(anyOfTwo, Mode.MIG, T4).models().text()).isNull();
    assertThat(OpenbPackingBenchmark.shape(cpu, Mode.MIG, T4)).isEqualTo(Resources.of(1000, 88000));
  }

  /**
   * One node with two GPUs (capacity 2,000 milli-GPU), every task half a GPU. Arrived demand reaches 80, 90 and 100%
   * with the 4th task, 110% with the 5th, 130% with the 6th. With MIG, each GPU becomes two 3g.4s instances and the
   * first four tasks fit: 100% allocated at every checkpoint, two dropped. With whole GPUs only, two tasks fit: 50%.
   */
  @Test
  void allocationRatioAtEachCheckpointOnAHandMadeCluster() {
    List<OpenbNode> nodes = List.of(new OpenbNode("n", 8000, 16000, 2, "T4"));
    List<Task> tasks = List.of(new Task("half", 1000, 1000, 1, 500, ""));
    RunResult mig = OpenbPackingBenchmark.run(nodes, tasks,
        new Variant("mig", Mode.MIG, FragmentationAwareSlots::new), 7);
    assertThat(mig.allocPct()).containsExactly(100, 100, 100, 100, 100);
    assertThat(mig.chargedPct()).containsExactly(100, 100, 100, 100, 100);
    assertThat(mig.tasks()).isEqualTo(6);
    assertThat(mig.placed()).isEqualTo(4);
    assertThat(mig.dropped()).isEqualTo(2);
    assertThat(mig.droppedFeasible()).isZero();
    assertThat(mig.repartitions()).isEqualTo(2);

    RunResult whole = OpenbPackingBenchmark.run(nodes, tasks,
        new Variant("whole", Mode.WHOLE, FragmentationAwareSlots::new), 7);
    assertThat(whole.allocPct()).containsExactly(50, 50, 50, 50, 50);
    assertThat(whole.chargedPct()[4]).isCloseTo(100, within(1e-9));
    assertThat(whole.placed()).isEqualTo(2);
    assertThat(whole.dropped()).isEqualTo(4);
  }

  @Test
  void findsSharedBesideTheRepositoryRoot(@TempDir Path dir) throws Exception {
    Path repo = Files.createDirectories(dir.resolve("main"));
    Files.writeString(repo.resolve("pom.xml"), "<project/>");
    Files.createDirectories(dir.resolve("shared/traces/openb"));
    Path deep = Files.createDirectories(repo.resolve("src-test/target"));
    assertThat(OpenbPackingBenchmark.findShared(deep)).isEqualTo(dir.resolve("shared"));
  }
}
