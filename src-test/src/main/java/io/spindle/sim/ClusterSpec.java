package io.spindle.sim;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.Node;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Topology;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the simulated cluster is: GPU models, topology, nodes (with their GPUs and MIG layouts) and the queue
 * configuration as CapacityScheduler keys. Built by {@link ClusterSpecs} from a file or from flags.
 *
 * @param queueConf full {@code yarn.scheduler.capacity.*} keys, as the engine's {@link QueueConfigParser} reads them
 * @param partitions node id to the leaf queue whose node it is, for policies that isolate queues on their own
 *     nodes (the HeliosArtifact rules: each virtual cluster has its own machines); empty when nodes are shared
 */
public record ClusterSpec(String name, GpuModelCatalog catalog, Topology topology, List<Node> nodes,
    Map<String, String> queueConf, Map<String, String> partitions) {

  public ClusterSpec {
    nodes = List.copyOf(nodes);
    queueConf = Collections.unmodifiableMap(new LinkedHashMap<>(queueConf));
    partitions = Collections.unmodifiableMap(new LinkedHashMap<>(partitions));
    if (nodes.isEmpty()) {
      throw new IllegalArgumentException("cluster " + name + " has no nodes");
    }
    QueueTree tree = new QueueConfigParser().parse(queueConf);
    for (Map.Entry<String, String> p : partitions.entrySet()) {
      if (tree.leaf(p.getValue()).isEmpty()) {
        throw new IllegalArgumentException("node " + p.getKey() + ": partition '" + p.getValue()
            + "' is not a leaf queue");
      }
    }
  }

  public QueueTree queueTree() {
    return new QueueConfigParser().parse(queueConf);
  }

  /** Leaf queue names (what jobs name), in configuration order. */
  public List<String> leafNames() {
    List<String> out = new ArrayList<>();
    for (QueueConfig q : queueTree().leaves()) {
      out.add(q.name());
    }
    return out;
  }

  public int totalGpus() {
    return nodes.stream().mapToInt(n -> n.gpus().size()).sum();
  }

  public ResourceVector capacity() {
    ResourceVector c = ResourceVector.ZERO;
    for (Node n : nodes) {
      c = c.plus(n.capacity());
    }
    return c;
  }

  /** The most GPUs any node has: the size of a "whole node" for splitting large jobs into members. */
  public int maxGpusPerNode() {
    return nodes.stream().mapToInt(n -> n.gpus().size()).max().orElse(0);
  }

  /** True when some node has GPUs that serve whole-GPU requests (not in MIG mode). */
  public boolean hasWholeGpus() {
    return nodes.stream().anyMatch(n -> n.gpus().stream().anyMatch(g -> !g.migEnabled()));
  }

  /** True when some GPU is in MIG mode. */
  public boolean hasMig() {
    return nodes.stream().anyMatch(n -> n.gpus().stream().anyMatch(g -> g.migEnabled()));
  }

  /** The model of the first MIG-mode GPU, used to map fractional requests to a profile; {@code null} if none. */
  public GpuModel firstMigModel() {
    for (Node n : nodes) {
      for (var g : n.gpus()) {
        if (g.migEnabled()) {
          return g.model();
        }
      }
    }
    return null;
  }

  /** Nodes per partition (leaf queue), in node order. */
  public Map<String, Integer> nodesPerPartition() {
    Map<String, Integer> out = new LinkedHashMap<>();
    for (Node n : nodes) {
      String p = partitions.get(n.id().value());
      if (p != null) {
        out.merge(p, 1, Integer::sum);
      }
    }
    return out;
  }
}
