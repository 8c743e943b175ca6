package io.spindle.yarn;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuResourceNames;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuIsolation;
import io.spindle.core.model.GpuSharing;
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

  /**
   * How the GPUs a NodeManager advertises as {@code nvidia.com/gpu-milli} are shared when no agent reports them:
   * {@code time-slice} (the default: nothing is promised about isolation) or {@code mps}.
   */
  static final String NODE_GPU_SHARING = "yarn.scheduler.spindle.node.gpu-sharing";

  private final GpuModelCatalog catalog;
  private final GpuModel defaultModel;
  private final int islandSize;
  private final GpuSharing advertisedSharing;
  private final GpuAskShapes tagged;

  YarnResources(GpuModelCatalog catalog, GpuModel defaultModel, int islandSize) {
    this(catalog, defaultModel, islandSize, GpuSharing.TIME_SLICE);
  }

  YarnResources(GpuModelCatalog catalog, GpuModel defaultModel, int islandSize, GpuSharing advertisedSharing) {
    this.catalog = catalog;
    this.defaultModel = defaultModel;
    this.islandSize = Math.max(1, islandSize);
    if (!advertisedSharing.shares()) {
      throw new IllegalArgumentException(NODE_GPU_SHARING + "=" + advertisedSharing + ": a GPU advertised as "
          + GpuResourceNames.GPU_MILLI + " is shared; use time-slice or mps");
    }
    this.advertisedSharing = advertisedSharing;
    this.tagged = new GpuAskShapes(catalog);
  }

  /** The adapter the scheduler's settings describe. */
  static YarnResources from(GpuModelCatalog catalog, SchedulerSettings settings) {
    return new YarnResources(catalog, catalog.require(SchedulerSettings.NODE_GPU_MODEL, settings.nodeGpuModel()),
        settings.nvlinkIslandSize(), GpuSharing.parse(NODE_GPU_SHARING,
            settings.merged().get(NODE_GPU_SHARING, GpuSharing.TIME_SLICE.text())));
  }

  /** {@link #shape(Resource)} with the application's GPU tags applied ({@link GpuAskShapes}). */
  Resources shape(Resource r, SpindleTags tags) {
    return tagged.apply(shape(r), tags.gpu());
  }

  /**
   * A container ask as a core shape: {@code yarn.io/gpu} or {@code nvidia.com/gpu} as whole GPUs,
   * {@code nvidia.com/mig-<profile>} as MIG instances. Anything Spindle cannot honour is an error naming the
   * resource: an unknown MIG profile, a negative amount, a count beyond what can be counted, and any other resource
   * type asked for (the container would be placed as if it did not need it, on a node that may not have it).
   * {@code nvidia.com/gpu-milli} and {@code nvidia.com/gpu-mem-mb} are a share of one GPU, which no container
   * combines with whole GPUs or MIG instances.
   */
  Resources shape(Resource r) {
    long gpus = 0;
    String profile = null;
    long instances = 0;
    long milli = 0;
    long shareMemory = 0;
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
      } else if (name.equals(GpuResourceNames.GPU_MILLI)) {
        if (value > Resources.MILLI_PER_GPU) {
          throw new IllegalArgumentException("resource " + name + "=" + value + " is more than one GPU: a share is"
              + " 1 to " + Resources.MILLI_PER_GPU + " thousandths of one GPU; ask for whole GPUs ("
              + GpuResourceNames.NVIDIA_GPU + ") for more");
        }
        milli = value;
      } else if (name.equals(GpuResourceNames.GPU_MEMORY_MB)) {
        shareMemory = value;
      } else {
        throw new IllegalArgumentException("resource " + name + "=" + value + " is not one Spindle schedules (memory,"
            + " vcores, " + GpuResourceNames.WHOLE_GPU + ", " + GpuResourceNames.NVIDIA_GPU + ", "
            + GpuResourceNames.MIG_PREFIX + "<profile>, " + GpuResourceNames.GPU_MILLI + ", "
            + GpuResourceNames.GPU_MEMORY_MB + "); the container could be placed on a node without it");
      }
    }
    if ((milli > 0 || shareMemory > 0) && (gpus > 0 || instances > 0)) {
      throw new IllegalArgumentException("a container may ask for a share of one GPU ("
          + shareText(milli, shareMemory) + ") or for " + (gpus > 0 ? gpus + " whole GPU(s)"
          : instances + " MIG instance(s) of " + profile) + ", not both: a share is on one GPU in a sharing mode");
    }
    if (instances > 0 && gpus > 0) {
      throw new IllegalArgumentException("a container may ask for whole GPUs or for MIG instances (" + profile
          + "), not both: no GPU serves both at once");
    }
    Resources base = Resources.of(r.getMemorySize(), r.getVirtualCores());
    if (instances > 0) {
      return base.withMig(profile, (int) instances);
    }
    if (milli > 0 || shareMemory > 0) {
      return base.withShare((int) milli, shareMemory, GpuIsolation.ANY);
    }
    return gpus > 0 ? base.withGpus((int) gpus) : base;
  }

  private static String shareText(long milli, long memoryMb) {
    String m = milli > 0 ? GpuResourceNames.GPU_MILLI + "=" + milli : "";
    String mem = memoryMb > 0 ? GpuResourceNames.GPU_MEMORY_MB + "=" + memoryMb : "";
    return m.isEmpty() ? mem : mem.isEmpty() ? m : m + ", " + mem;
  }

  /** Adds an amount of GPUs or MIG instances to those already counted, refusing totals beyond an int. */
  private static long count(String name, long value, long before) {
    if (value > Integer.MAX_VALUE - before) {
      throw new IllegalArgumentException("resource " + name + "=" + value + " asks for more GPUs than can be counted"
          + " (at most " + Integer.MAX_VALUE + " per container)");
    }
    return before + value;
  }

  private static void requireModellable(NodeId id, ResourceInformation info, long gpus) {
    if (gpus > MAX_GPUS_PER_NODE) {
      // Each GPU is modelled one by one: a misconfigured count must not make the RM build millions of them.
      throw new IllegalArgumentException("node " + id + " advertises " + info.getName() + "=" + info.getValue()
          + "; Spindle models at most " + MAX_GPUS_PER_NODE + " GPUs per node");
    }
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
   *
   * <p>{@code nvidia.com/gpu-milli} = {@code N * 1000} says that N of its GPUs are shared, in the mode of
   * {@link #NODE_GPU_SHARING}: GPUs 0..N-1. Beside {@code G} whole GPUs ({@code yarn.io/gpu} or
   * {@code nvidia.com/gpu}) N may be at most G (the same GPUs, advertised twice, as a plugin that offers both whole
   * GPUs and shares of them does); alone, the node has N GPUs, all shared. A count of milli that is not whole GPUs
   * is an error: no GPU is part shared.
   */
  Node node(NodeId id, String location, Resource total) {
    long gpus = 0;
    long milli = 0;
    for (ResourceInformation info : total.getResources()) {
      if (GpuResourceNames.isWholeGpu(info.getName()) && info.getValue() > 0) {
        gpus += info.getValue();
        requireModellable(id, info, gpus);
      } else if (info.getName().equals(GpuResourceNames.GPU_MILLI) && info.getValue() > 0) {
        milli = info.getValue();
        if (milli % Resources.MILLI_PER_GPU != 0) {
          throw new IllegalArgumentException("node " + id + " advertises " + info.getName() + "=" + milli + "; it must"
              + " be " + Resources.MILLI_PER_GPU + " per shared GPU (4000 for 4 shared GPUs)");
        }
        requireModellable(id, info, milli / Resources.MILLI_PER_GPU);
      }
    }
    long shared = milli / Resources.MILLI_PER_GPU;
    if (gpus > 0 && shared > gpus) {
      throw new IllegalArgumentException("node " + id + " advertises " + GpuResourceNames.GPU_MILLI + "=" + milli
          + " (" + shared + " shared GPUs) but only " + gpus + " GPUs");
    }
    gpus = Math.max(gpus, shared);
    List<Gpu> list = new ArrayList<>();
    for (int i = 0; i < gpus; i++) {
      list.add(i < shared ? Gpu.shared(i, defaultModel, defaultIsland(i), advertisedSharing)
          : new Gpu(i, defaultModel, defaultIsland(i), false));
    }
    return new Node(id, location, total.getMemorySize(), (int) total.getVirtualCores(), list);
  }
}
