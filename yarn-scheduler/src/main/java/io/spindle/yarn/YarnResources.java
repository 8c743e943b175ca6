package io.spindle.yarn;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuResourceNames;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.Node;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;

/** Translates YARN's resources and nodes into the core model. */
final class YarnResources {

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
   * {@code nvidia.com/mig-<profile>} as MIG instances. An unknown MIG profile is an error naming the resource.
   */
  Resources shape(Resource r) {
    long gpus = 0;
    String profile = null;
    long instances = 0;
    for (ResourceInformation info : r.getResources()) {
      String name = info.getName();
      long value = info.getValue();
      if (value <= 0) {
        continue;
      }
      if (GpuResourceNames.isWholeGpu(name)) {
        gpus += value;
      } else if (name.startsWith(GpuResourceNames.MIG_PREFIX)) {
        String p = GpuResourceNames.migProfile(name, catalog);
        if (profile != null && !profile.equals(p)) {
          throw new IllegalArgumentException("a container may ask for MIG instances of one profile, not "
              + profile + " and " + p);
        }
        profile = p;
        instances += value;
      }
    }
    Resources base = Resources.of(r.getMemorySize(), (int) r.getVirtualCores());
    if (instances > 0) {
      return base.withMig(profile, Math.toIntExact(instances));
    }
    return gpus > 0 ? base.withGpus(Math.toIntExact(gpus)) : base;
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
  Node node(String id, String location, Resource total) {
    long gpus = 0;
    for (ResourceInformation info : total.getResources()) {
      if (GpuResourceNames.isWholeGpu(info.getName())) {
        gpus += info.getValue();
      }
    }
    List<Gpu> list = new ArrayList<>();
    for (int i = 0; i < gpus; i++) {
      list.add(new Gpu(i, defaultModel, defaultIsland(i), false));
    }
    return new Node(id, location, total.getMemorySize(), (int) total.getVirtualCores(), list);
  }
}
