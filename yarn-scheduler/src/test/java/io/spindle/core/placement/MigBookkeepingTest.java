package io.spindle.core.placement;

import static io.spindle.core.Fixtures.H100;
import static io.spindle.core.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Topology;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a cycle's MIG bookkeeping costs: only GPUs in flight are visited, and nothing is copied per call. */
class MigBookkeepingTest {

  private static final Topology TOPO = Topology.builder("rack").location("/r1").build();
  private static final MigLayout SEVEN = MigLayout.of(H100, List.of(new MigPlacement(H100.profile("7g.80gb")
      .orElseThrow(), 0)));

  @Test
  void aNodeHandsOutOneListOfItsMigGpus() {
    ClusterState cluster = new ClusterState(TOPO);
    cluster.addNode(node("m1", "/r1", 1024, 8, H100, 4, 4, true));
    NodeState n = cluster.node(NodeId.of("m1"));
    assertThat(n.migGpus()).hasSize(4).isSameAs(n.migGpus());
  }

  @Test
  void onlyGpusBeingRepartitionedAreTrackedAsInFlight() {
    ClusterState cluster = new ClusterState(TOPO);
    cluster.addNode(node("m1", "/r1", 1024, 8, H100, 4, 4, true));
    cluster.addNode(node("m2", "/r1", 1024, 8, H100, 4, 4, true));
    assertThat(cluster.gpusInFlight()).isEmpty();

    cluster.beginReconfigure(NodeId.of("m1"), 2, SEVEN, 5_000);
    cluster.beginReconfigure(NodeId.of("m2"), 0, SEVEN, 5_000);
    assertThat(cluster.gpusInFlight().keySet()).extracting(g -> g.gpu.index()).containsExactly(2, 0);
    assertThat(cluster.migInstancesInFlight("7g.80gb")).isEqualTo(2);

    cluster.reportMigLayout(NodeId.of("m1"), 2, SEVEN);
    cluster.activateReconfiguredGpus(4_999);
    assertThat(cluster.gpusInFlight()).hasSize(2);
    cluster.activateReconfiguredGpus(5_000);
    // Reported and due: back in service. Not reported yet: still in flight.
    assertThat(cluster.gpusInFlight().values()).extracting(NodeState::id).containsExactly(NodeId.of("m2"));
    assertThat(cluster.freeMigInstances("7g.80gb")).isEqualTo(1);

    cluster.removeNode(NodeId.of("m2"));
    assertThat(cluster.gpusInFlight()).isEmpty();
    assertThat(cluster.migInstancesInFlight("7g.80gb")).isZero();
  }

  @Test
  void gpuModelsAreToldApartByName() {
    GpuModel copy = new GpuModel(H100.name(), H100.memoryGb(), H100.memorySlices(), H100.computeSlices(),
        H100.profiles(), List.of("another alias"));
    assertThat(copy.sameModel(H100)).isTrue();
    assertThat(H100.sameModel(copy)).isTrue();
    assertThat(copy.equals(H100)).as("the record's own equality still compares everything").isFalse();
    assertThat(H100.sameModel(io.spindle.core.Fixtures.A100_40)).isFalse();
    assertThat(MigLayout.of(copy, SEVEN.placements())).isEqualTo(SEVEN).hasSameHashCodeAs(SEVEN);
  }
}
