package io.spindle.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spindle.core.engine.EngineStatus;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuIsolation;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.GpuShareUse;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.placement.NodeView;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The nodes view and the summary of the status API, for GPUs in a sharing mode and the shares on them. */
class StatusJsonSharesTest {

  private static final GpuModel H100 = GpuModelCatalog.builtIn().require("model", "H100-80GB");
  private static final NodeId NODE = NodeId.of("gpu-a:8041");
  private static final AppId APP = AppId.of("application_1_0001");

  private static EngineStatus status() {
    Node node = new Node(NODE, "/rack1", 65_536, 32, List.of(Gpu.shared(0, H100, 0, GpuSharing.TIME_SLICE),
        Gpu.shared(1, H100, 0, GpuSharing.MPS), new Gpu(2, H100, 0, false)));
    Resources quarter = Resources.of(1024, 1).withShare(250, 4096, GpuIsolation.ANY);
    List<EngineStatus.Container> containers = List.of(
        new EngineStatus.Container(1, APP, "r1", NODE, quarter, List.of(GpuSlot.shareOf(0))),
        new EngineStatus.Container(2, APP, "r1", NODE, quarter, List.of(GpuSlot.shareOf(0))),
        new EngineStatus.Container(3, APP, "r2", NODE, Resources.of(1024, 1).withGpus(1),
            List.of(GpuSlot.whole(2))));
    NodeView view = new NodeView(node, null, Map.of(), Map.of(), Map.of(0, new GpuShareUse(500, 8192, 2, false),
        1, new GpuShareUse(0, 0, 0, false)));
    EngineStatus.App app = new EngineStatus.App(APP, "root.a", "alice", 0, 0, ResourceVector.ZERO, 3, List.of());
    return new EngineStatus(7, 0, List.of(), List.of(app), List.of(view), containers);
  }

  @Test
  void eachGpuSaysItsSharingModeAndASharedOneItsSharesAndTheirHolders() {
    JsonNode gpus = StatusJson.nodes(status(), id -> "container_" + id).get(0).get("gpus");
    JsonNode timeSliced = gpus.get(0);
    assertThat(timeSliced.get("sharing").asText()).isEqualTo("time-slice");
    assertThat(timeSliced.get("holder").isNull()).as("no container holds it whole").isTrue();
    assertThat(timeSliced.get("shareUse").get("usedMilli").asInt()).isEqualTo(500);
    assertThat(timeSliced.get("shareUse").get("usedMemoryMb").asLong()).isEqualTo(8192);
    assertThat(timeSliced.get("shareUse").get("shares").asInt()).isEqualTo(2);
    assertThat(timeSliced.get("shares")).hasSize(2);
    assertThat(timeSliced.get("shares").get(0).get("gpuMilli").asInt()).isEqualTo(250);
    assertThat(timeSliced.get("shares").get(0).get("holder").get("appId").asText()).isEqualTo(APP.value());
    assertThat(timeSliced.get("shares").get(1).get("holder").get("container").asText()).isEqualTo("container_2");
    JsonNode mps = gpus.get(1);
    assertThat(mps.get("sharing").asText()).isEqualTo("mps");
    assertThat(mps.get("shares")).isEmpty();
    JsonNode exclusive = gpus.get(2);
    assertThat(exclusive.get("sharing").asText()).isEqualTo("exclusive");
    assertThat(exclusive.has("shareUse")).isFalse();
    assertThat(exclusive.get("holder").get("allocationId").asLong()).isEqualTo(3);
  }

  @Test
  void theSummaryCountsSharesApartFromWholeGpus() {
    JsonNode cluster = StatusJson.summary(status(), new SchedulerView.SchedulerInfo("rm1", true, 1, 100, List.of()))
        .get("cluster");
    assertThat(cluster.get("wholeGpusHeld").asInt()).isEqualTo(1);
    assertThat(cluster.get("gpuShares").asInt()).isEqualTo(2);
    assertThat(cluster.get("sharedGpus").asInt()).isEqualTo(2);
  }
}
