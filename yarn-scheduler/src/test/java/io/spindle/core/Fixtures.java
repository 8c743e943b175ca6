package io.spindle.core;

import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Small builders shared by core tests. */
public final class Fixtures {

  public static final GpuModelCatalog CATALOG = GpuModelCatalog.builtIn();
  public static final GpuModel H100 = CATALOG.require("model", "H100-80GB");
  public static final GpuModel A100_40 = CATALOG.require("model", "A100-40GB");

  private Fixtures() {}

  /** A node with {@code gpus} whole H100s on one NVLink island. */
  public static Node gpuNode(String id, String location, int gpus) {
    return node(id, location, 256_000, 64, H100, gpus, gpus, false);
  }

  /** A node whose GPUs are split into islands of {@code islandSize}; {@code mig} puts every GPU in MIG mode. */
  public static Node node(String id, String location, long memoryMb, int vcores, GpuModel model, int gpus,
      int islandSize, boolean mig) {
    List<Gpu> list = new ArrayList<>();
    for (int i = 0; i < gpus; i++) {
      list.add(new Gpu(i, model, i / Math.max(1, islandSize), mig));
    }
    return new Node(NodeId.of(id), location, memoryMb, vcores, list);
  }

  public static Node cpuNode(String id, String location, long memoryMb, int vcores) {
    return new Node(NodeId.of(id), location, memoryMb, vcores, List.of());
  }

  /** Parses capacity-scheduler keys given without their {@code yarn.scheduler.capacity.} prefix. */
  public static QueueTree queues(String... keyValues) {
    Map<String, String> conf = new HashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      conf.put(QueueConfigParser.PREFIX + keyValues[i], keyValues[i + 1]);
    }
    return new QueueConfigParser().parse(conf);
  }
}
