package io.spindle.launcher.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import io.spindle.launcher.WorkerSlot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.yarn.api.records.Container;

/**
 * Where each of a gang's containers is: its node and rack, and — from Spindle's status API, which knows what the
 * engine chose — the GPUs it holds and their NVLink islands. {@link io.spindle.launcher.RankPlan} numbers the ranks
 * from this.
 */
final class GangTopology {

  private GangTopology() {}

  /**
   * @param racks each node's rack as YARN resolves it (host:port to rack path)
   * @param nodes Spindle's {@code /api/v1/nodes}, if available: GPUs by holder container and their islands
   */
  static List<WorkerSlot> slots(List<Container> containers, Map<String, String> racks, Optional<JsonNode> nodes) {
    Map<String, List<int[]>> gpusByContainer = new HashMap<>(); // container id -> [gpu index, island]
    Map<String, String> locationByNode = new HashMap<>();
    nodes.ifPresent(all -> {
      for (JsonNode n : all) {
        locationByNode.put(n.path("id").asText(), n.path("location").asText(null));
        for (JsonNode g : n.path("gpus")) {
          String holder = g.path("holder").path("container").asText(null);
          if (holder != null) {
            gpusByContainer.computeIfAbsent(holder, k -> new ArrayList<>())
                .add(new int[] {g.path("index").asInt(), g.path("nvlinkIsland").asInt(0)});
          }
        }
      }
    });
    List<WorkerSlot> out = new ArrayList<>();
    for (Container c : containers) {
      String id = c.getId().toString();
      String nodeId = c.getNodeId().toString();
      String rack = locationByNode.getOrDefault(nodeId, racks.getOrDefault(nodeId, "/default-rack"));
      List<Integer> gpus = new ArrayList<>();
      List<Integer> islands = new ArrayList<>();
      for (int[] g : gpusByContainer.getOrDefault(id, List.of())) {
        gpus.add(g[0]);
        islands.add(g[1]);
      }
      out.add(new WorkerSlot(id, nodeId, c.getNodeId().getHost(), rack == null ? "/default-rack" : rack, gpus, islands));
    }
    return out;
  }
}
