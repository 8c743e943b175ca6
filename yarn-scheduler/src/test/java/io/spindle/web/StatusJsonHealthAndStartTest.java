package io.spindle.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spindle.core.engine.EngineStatus;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.GpuService;
import io.spindle.core.placement.NodeView;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The status API's words for GPU health (per GPU, per node) and for expected start times, as admins script them. */
class StatusJsonHealthAndStartTest {

  private static final GpuModel H100 = GpuModelCatalog.builtIn().require("model", "H100-80GB");
  private static final NodeId NODE = NodeId.of("gpu-a:8041");
  private static final AppId APP = AppId.of("application_1_0001");

  private static EngineStatus status() {
    Node node = new Node(NODE, "/rack1", 65_536, 32, List.of(new Gpu(0, H100, 0, false), new Gpu(1, H100, 0, false),
        new Gpu(2, H100, 0, false)));
    NodeView view = new NodeView(node, null, Map.of(), Map.of(), Map.of(), "drained by Spindle: 2 GPUs out of service",
        Map.of(0, new GpuService(GpuService.Level.OUT, "failed: Xid 79: GPU has fallen off the bus"),
            1, new GpuService(GpuService.Level.DEGRADED, "degraded: 2 of 18 NVLink links inactive")));
    Resources eight = Resources.of(1024, 1).withGpus(8);
    EngineStatus.Request exact = new EngineStatus.Request("train", eight, 2, PlacementSpec.gang(null, false),
        "no room", null, new EngineStatus.ExpectedStart(9_000_000, EngineStatus.StartConfidence.EXACT));
    EngineStatus.Request unknown = new EngineStatus.Request("eval", eight, 2, PlacementSpec.gang(null, false),
        "no room", null);
    EngineStatus.App app = new EngineStatus.App(APP, "root.a", "alice", 0, 0, ResourceVector.ZERO, 0,
        List.of(exact, unknown));
    return new EngineStatus(7, 60_000, List.of(), List.of(app), List.of(view), List.of());
  }

  @Test
  void eachGpuSaysWhetherItIsInServiceAndWhyNot() {
    JsonNode node = StatusJson.nodes(status(), id -> "container_" + id).get(0);
    assertThat(node.get("cordoned").asText()).startsWith("drained by Spindle");
    JsonNode gpus = node.get("gpus");
    assertThat(gpus.get(0).get("service").asText()).isEqualTo("out");
    assertThat(gpus.get(0).get("serviceReason").asText()).contains("Xid 79");
    assertThat(gpus.get(1).get("service").asText()).isEqualTo("degraded");
    assertThat(gpus.get(2).get("service").asText()).isEqualTo("in-service");
    assertThat(gpus.get(2).get("serviceReason").isNull()).isTrue();
  }

  @Test
  void aWaitingGangSaysWhenItShouldStartAndHowSureThatIsOrThatNothingIsKnown() {
    JsonNode gangs = StatusJson.gangs(status());
    assertThat(gangs.get(0).get("expectedStartMillis").asLong()).isEqualTo(9_000_000);
    assertThat(gangs.get(0).get("startConfidence").asText()).isEqualTo("exact");
    assertThat(gangs.get(1).get("expectedStartMillis").isNull()).isTrue();
    assertThat(gangs.get(1).get("startConfidence").asText()).isEqualTo("unknown");
  }
}
