package io.spindle.core.placement;

import static io.spindle.core.Fixtures.H100;
import static io.spindle.core.Fixtures.cpuNode;
import static io.spindle.core.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Where containers without GPUs go: away from GPUs that still have room, so GPU work keeps the CPU it needs. */
class CpuOnlyPlacementTest {

  private static final Topology TOPO = Topology.builder("rack").location("/r1").build();
  private static final Resources CPU = Resources.of(8_192, 4);

  @Test
  void cpuContainersPreferNodesWithoutGpusOnAnAllMigCluster() {
    ClusterState cluster = new ClusterState(TOPO);
    // The MIG node is the tighter fit by memory, which alone used to decide: every all-MIG node has 0 whole GPUs.
    cluster.addNode(node("mig", "/r1", 256_000, 64, H100, 8, 8, true));
    cluster.addNode(cpuNode("cpu", "/r1", 512_000, 64));
    assertThat(cluster.find(CPU).nodeId()).isEqualTo(NodeId.of("cpu"));
  }

  @Test
  void amongMigNodesCpuContainersGoWhereLeastGpuCapacityIsFree() {
    ClusterState cluster = new ClusterState(TOPO);
    cluster.addNode(node("roomy", "/r1", 256_000, 64, H100, 8, 8, true));
    cluster.addNode(node("full", "/r1", 512_000, 64, H100, 1, 1, true));
    // Fill "full"'s only GPU: it has no GPU capacity left, so its CPU is what it can still offer.
    MigPlacement seven = new MigPlacement(H100.profile("7g.80gb").orElseThrow(), 0);
    cluster.reportMigLayout(NodeId.of("full"), 0, MigLayout.of(H100, List.of(seven)));
    cluster.commit(Resources.of(1024, 1).withMig("7g.80gb", 1), new Placement(NodeId.of("full"), List.of(new GpuSlot(0, seven)),
        io.spindle.core.model.ResourceVector.ZERO));
    assertThat(cluster.find(CPU).nodeId()).isEqualTo(NodeId.of("full"));
  }

  @Test
  void wholeGpuAndCpuContainersStillFindTheBestFitByMemory() {
    ClusterState cluster = new ClusterState(TOPO);
    GpuModel model = H100;
    cluster.addNode(node("big", "/r1", 512_000, 64, model, 2, 2, false));
    cluster.addNode(node("small", "/r1", 64_000, 64, model, 2, 2, false));
    cluster.addNode(cpuNode("c1", "/r1", 512_000, 64));
    cluster.addNode(cpuNode("c2", "/r1", 16_000, 64));
    assertThat(cluster.find(Resources.of(32_000, 1).withGpus(1)).nodeId()).isEqualTo(NodeId.of("small"));
    assertThat(cluster.find(Resources.of(100_000, 1).withGpus(1)).nodeId()).isEqualTo(NodeId.of("big"));
    assertThat(cluster.find(Resources.of(8_000, 1)).nodeId()).isEqualTo(NodeId.of("c2"));
    assertThat(cluster.find(Resources.of(32_000, 1)).nodeId()).isEqualTo(NodeId.of("c1"));
    assertThat(cluster.find(Resources.of(32_000, 100))).isNull();
  }
}
