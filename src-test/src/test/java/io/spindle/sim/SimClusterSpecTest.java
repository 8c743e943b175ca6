package io.spindle.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SimClusterSpecTest {

  static final String FILE = """
      {"name": "two teams", "topology": ["rack"],
       "gpuModels": [{"name": "V100", "memoryGb": 32}],
       "nodeGroups": [
         {"name": "a", "count": 2, "gpus": 8, "model": "V100", "vcores": 64, "memoryMb": 262144,
          "location": "/r1", "partition": "a"},
         {"name": "m", "count": 1, "gpus": 2, "model": "H100-80GB", "location": "/r2",
          "mig": ["3g.40gb@0", "3g.40gb@4"], "partition": "b"}],
       "queues": {"root.queues": "a,b", "root.a.capacity": "80", "root.b.capacity": "20",
                  "root.a.user-limit-factor": "-1", "root.b.user-limit-factor": "-1"}}
      """;

  @Test
  void readsNodesModelsMigLayoutsPartitionsAndQueues() throws Exception {
    ClusterSpec c = ClusterSpecs.fromJson("f", new ObjectMapper().readTree(FILE));
    assertThat(c.name()).isEqualTo("two teams");
    assertThat(c.nodes()).extracting(n -> n.id()).containsExactly(NodeId.of("a-0"), NodeId.of("a-1"), NodeId.of("m"));
    assertThat(c.totalGpus()).isEqualTo(18);
    assertThat(c.nodes().get(2).gpus().get(1).migLayout().placements()).hasSize(2);
    assertThat(c.partitions()).containsEntry("a-1", "a").containsEntry("m", "b");
    assertThat(c.leafNames()).containsExactly("a", "b");
    assertThat(c.hasMig()).isTrue();
    assertThat(c.hasWholeGpus()).isTrue();
  }

  @Test
  void mistakesNameTheField(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("bad.json");
    Files.writeString(f, FILE.replace("\"count\": 2", "\"cuont\": 2"));
    assertThatThrownBy(() -> ClusterSpecs.fromFile(f)).hasMessageContaining("unknown field 'cuont'");
    Files.writeString(f, FILE.replace("\"3g.40gb@0\"", "\"5g.40gb@0\""));
    assertThatThrownBy(() -> ClusterSpecs.fromFile(f)).hasMessageContaining("no profile '5g.40gb'");
  }

  @Test
  void vcSizesGiveEachVcItsNodesAndExactlyItsGpusAsGuarantee(@TempDir Path dir) throws Exception {
    Path csv = dir.resolve("vc-sizes.csv");
    Files.writeString(csv, "vc,node num\nx,4\ny,2\n");
    ClusterSpec c = ClusterSpecs.fromVcSizes(csv, 8, 0.5);
    assertThat(c.nodes()).hasSize(3);
    assertThat(c.nodesPerPartition()).isEqualTo(Map.of("x", 2, "y", 1));
    var limits = io.spindle.core.queue.FairShareCalculator.resolveLimits(c.queueTree(), c.capacity());
    assertThat(limits.get("root.x").guarantee()).isEqualTo(ResourceVector.of(0, 0, 16));
    assertThat(limits.get("root.y").maximum()).isEqualTo(ResourceVector.of(0, 0, 24));
    // Without borrowing, a queue's maximum is its guarantee.
    ClusterSpec helios = new ClusterSpec(c.name(), c.catalog(), c.topology(), c.nodes(),
        Policies.withoutBorrowing(c), c.partitions());
    assertThat(io.spindle.core.queue.FairShareCalculator.resolveLimits(helios.queueTree(), helios.capacity())
        .get("root.y").maximum()).isEqualTo(ResourceVector.of(0, 0, 8));
  }

  @Test
  void policiesByName() {
    assertThat(Policies.parse("all")).extracting(SimPolicy::name)
        .containsExactly("fifo", "yarn", "spindle-helios", "spindle");
    assertThat(Policies.parse("all,ablation")).extracting(SimPolicy::name).hasSize(8);
    assertThat(Policies.parse("spindle-helios+pool+backfill").get(0).name())
        .isEqualTo("spindle-helios+backfill+pool");
    assertThat(Policies.parse("spindle-helios+shortest+runtimes,spindle+shortest")).extracting(SimPolicy::name)
        .containsExactly("spindle-helios+runtimes+shortest", "spindle+shortest");
    assertThat(Policies.parse("spindle+shortest").get(0).queueConf(ClusterSpecs.uniform(1, 8,
        ClusterSpecs.PLAIN_GPU, 0, 0, null))).containsEntry("yarn.scheduler.capacity.root.spindle.ordering",
        "shortest-first");
    assertThatThrownBy(() -> Policies.parse("spindle-helios+preempt")).hasMessageContaining("unknown feature");
    assertThat(List.of(Policies.parse("spindle-helios").get(0).isolatesPartitions(),
        Policies.parse("spindle").get(0).isolatesPartitions())).containsExactly(true, false);
  }

  @Test
  void theExampleClusterFileOfTheGuideLoadsAndRuns() {
    // Tests run in src-test/; the guide's example sits in conf/sim/ of the repository.
    Path example = Path.of("").toAbsolutePath().resolveSibling("conf").resolve("sim").resolve("example-cluster.json");
    ClusterSpec c = ClusterSpecs.fromFile(example);
    assertThat(c.nodes()).hasSize(16);
    assertThat(c.totalGpus()).isEqualTo(8 * 8 + 4 * 4 + 4 * 8);
    Trace t = new Trace("t", ColumnMapping.GENERIC, List.of(SimJob.gpuJob("r", 0, 1000, "research", 16),
        new SimJob("p", 0, 1000, "product", "u", 1, 400, 0, 0, null)), Map.of());
    for (SimPolicy p : Policies.parse("all")) {
      RunResult r = new Simulator(c, p, SimOptions.defaults()).run(t, null);
      assertThat(r.jobs().finished()).as(p.name()).isEqualTo(2);
    }
  }
}
