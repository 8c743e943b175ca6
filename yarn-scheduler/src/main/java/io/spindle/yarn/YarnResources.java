package io.spindle.yarn;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuResourceNames;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;

/** Translates YARN's resources and nodes into the core model. */
final class YarnResources {

  /** Far above any server built (8 or 16 GPUs); below what would cost the ResourceManager real memory to model. */
  static final int MAX_GPUS_PER_NODE = 1024;

  private final GpuModelCatalog catalog;
  private final GpuModel defaultModel;
  private final int islandSize;

  YarnResources(GpuModelCatalog catalog, GpuModel defaultModel, int islandSize) {
    this.catalog = catalog;
    this.defaultModel = defaultModel;
    this.islandSize = Math.max(1, islandSize);
  }

  /**
   * A container ask as a core shape: {@code yarn.io/gpu} or {@code nvidia.com/gpu} as whole GPUs,
   * {@code nvidia.com/mig-<profile>} as MIG instances. Anything Spindle cannot honour is an error naming the
   * resource: an unknown MIG profile, a negative amount, a count beyond what can be counted, and any other resource
   * type asked for (the container would be placed as if it did not need it, on a node that may not have it).
   */
  Resources shape(Resource r) {
    long gpus = 0;
    String profile = null;
    long instances = 0;
    for (ResourceInformation info : r.getResources()) {
      String name = info.getName();
      long value = info.getValue();
      if (name.equals(ResourceInformation.MEMORY_URI) || name.equals(ResourceInformation.VCORES_URI)) {
        continue; // read below, where Resources checks them
      }
      if (value < 0) {
        throw new IllegalArgumentException("resource " + name + "=" + value + " is negative");
      }
      if (value == 0) {
        continue;
      }
      if (GpuResourceNames.isWholeGpu(name)) {
        gpus = count(name, value, gpus);
      } else if (name.startsWith(GpuResourceNames.MIG_PREFIX)) {
        String p = GpuResourceNames.migProfile(name, catalog);
        if (profile != null && !profile.equals(p)) {
          throw new IllegalArgumentException("a container may ask for MIG instances of one profile, not "
              + profile + " and " + p);
        }
        profile = p;
        instances = count(name, value, instances);
      } else {
        throw new IllegalArgumentException("resource " + name + "=" + value + " is not one Spindle schedules (memory,"
            + " vcores, " + GpuResourceNames.WHOLE_GPU + ", " + GpuResourceNames.NVIDIA_GPU + ", "
            + GpuResourceNames.MIG_PREFIX + "<profile>); the container could be placed on a node without it");
      }
    }
    if (instances > 0 && gpus > 0) {
      throw new IllegalArgumentException("a container may ask for whole GPUs or for MIG instances (" + profile
          + "), not both: no GPU serves both at once");
    }
    Resources base = Resources.of(r.getMemorySize(), r.getVirtualCores());
    if (instances > 0) {
      return base.withMig(profile, (int) instances);
    }
    return gpus > 0 ? base.withGpus((int) gpus) : base;
  }

  /** Adds an amount of GPUs or MIG instances to those already counted, refusing totals beyond an int. */
  private static long count(String name, long value, long before) {
    if (value > Integer.MAX_VALUE - before) {
      throw new IllegalArgumentException("resource " + name + "=" + value + " asks for more GPUs than can be counted"
          + " (at most " + Integer.MAX_VALUE + " per container)");
    }
    return before + value;
  }

  GpuModel defaultModel() {
    return defaultModel;
  }

  /** The NVLink island of GPU {@code index} when the node does not say: consecutive blocks of the island size. */
  int defaultIsland(int index) {
    return index / islandSize;
  }

  /**
   * A registered NodeManager as a core node when its agent has not reported its GPUs to ZooKeeper: its whole GPUs
   * are of the configured model, in islands. Advertised MIG resources are left out: their counts do not say which
   * instances exist (Spindle's plugin advertises every place an instance could start), so MIG slices are scheduled
   * only on GPUs whose layout the node reported.
   */
  Node node(NodeId id, String location, Resource total) {
    long gpus = 0;
    for (ResourceInformation info : total.getResources()) {
      if (GpuResourceNames.isWholeGpu(info.getName()) && info.getValue() > 0) {
        gpus += info.getValue();
        if (gpus > MAX_GPUS_PER_NODE) {
          // Each GPU is modelled one by one: a misconfigured count must not make the RM build millions of them.
          throw new IllegalArgumentException("node " + id + " advertises " + info.getName() + "=" + info.getValue()
              + "; Spindle models at most " + MAX_GPUS_PER_NODE + " GPUs per node");
        }
      }
    }
    List<Gpu> list = new ArrayList<>();
    for (int i = 0; i < gpus; i++) {
      list.add(new Gpu(i, defaultModel, defaultIsland(i), false));
    }
    return new Node(id, location, total.getMemorySize(), (int) total.getVirtualCores(), list);
  }
}
