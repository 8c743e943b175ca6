package io.spindle.launcher.yarn;

import io.spindle.launcher.RunSpec;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.api.records.ResourceTypeInfo;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

/** A worker container's YARN resource: memory, vcores, and whole GPUs or a share of one GPU. */
final class WorkerShape {

  /** YARN's GPU resource type (whole GPUs) of Hadoop's own GPU plugin. */
  static final String GPU = "yarn.io/gpu";
  /** Whole GPUs as Spindle's NodeManager plugin advertises them (Hadoop reserves yarn.io/gpu for its own plugin). */
  static final String NVIDIA_GPU = "nvidia.com/gpu";
  /** Spindle's share of one GPU, in thousandths (docs/admin-guide.md, shared GPUs). */
  static final String GPU_MILLI = "nvidia.com/gpu-milli";
  /** One MIG instance of a profile: {@code nvidia.com/mig-<profile>}. */
  static final String MIG_PREFIX = "nvidia.com/mig-";

  private WorkerShape() {}

  /**
   * Makes this JVM know the cluster's resource types, as the RM lists them, when it does not already: a client or AM
   * without the cluster's {@code resource-types.xml} could not name a GPU in a request otherwise. Types already known
   * are left alone (a test's ResourceManager may share this JVM).
   */
  static void learnResourceTypes(List<ResourceTypeInfo> clusterTypes) {
    boolean allKnown = clusterTypes.stream().allMatch(t -> ResourceUtils.getResourceTypes().containsKey(t.getName()));
    if (!allKnown) {
      ResourceUtils.reinitializeResources(clusterTypes);
    }
  }

  /**
   * Writes the cluster's resource types into {@code conf} as {@code yarn.resource-types} and their units, so the
   * ApplicationMaster, reading the configuration the client ships, knows them before it makes any request.
   */
  static void writeResourceTypes(List<ResourceTypeInfo> clusterTypes, org.apache.hadoop.conf.Configuration conf) {
    List<String> names = new java.util.ArrayList<>();
    for (ResourceTypeInfo t : clusterTypes) {
      if (!t.getName().equals(ResourceInformation.MEMORY_URI) && !t.getName().equals(ResourceInformation.VCORES_URI)) {
        names.add(t.getName());
        conf.set(YarnConfiguration.RESOURCE_TYPES + "." + t.getName() + ".units", t.getDefaultUnit());
      }
    }
    conf.set(YarnConfiguration.RESOURCE_TYPES, String.join(",", names));
  }

  /**
   * The resource type a worker of {@code spec} asks its GPU in, given the cluster's types: whole GPUs in
   * {@code yarn.io/gpu}, or {@code nvidia.com/gpu} on a cluster that has only that; empty for CPU-only work.
   */
  static java.util.Optional<String> gpuType(RunSpec spec, java.util.Set<String> clusterTypes) {
    if (spec.migProfile() != null) {
      return java.util.Optional.of(MIG_PREFIX + spec.migProfile());
    }
    if (spec.gpuMilli() > 0) {
      return java.util.Optional.of(GPU_MILLI);
    }
    if (spec.gpusPerWorker() > 0) {
      return java.util.Optional.of(!clusterTypes.contains(GPU) && clusterTypes.contains(NVIDIA_GPU) ? NVIDIA_GPU : GPU);
    }
    return java.util.Optional.empty();
  }

  /** A worker's resource, in the types this JVM knows (the cluster's, see {@link #learnResourceTypes}). */
  static Resource of(RunSpec spec) {
    Resource r = Resource.newInstance(spec.memoryMb(), spec.vcores());
    gpuType(spec, ResourceUtils.getResourceTypes().keySet()).ifPresent(type -> r.setResourceValue(type,
        spec.migProfile() != null ? 1 : spec.gpuMilli() > 0 ? spec.gpuMilli() : spec.gpusPerWorker()));
    return r;
  }
}
