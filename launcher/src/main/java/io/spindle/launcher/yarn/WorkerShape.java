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

  /** YARN's GPU resource type (whole GPUs). */
  static final String GPU = "yarn.io/gpu";
  /** Spindle's share of one GPU, in thousandths (docs/admin-guide.md, shared GPUs). */
  static final String GPU_MILLI = "nvidia.com/gpu-milli";

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

  static Resource of(RunSpec spec) {
    Resource r = Resource.newInstance(spec.memoryMb(), spec.vcores());
    if (spec.gpusPerWorker() > 0) {
      r.setResourceValue(GPU, spec.gpusPerWorker());
    }
    if (spec.gpuMilli() > 0) {
      r.setResourceValue(GPU_MILLI, spec.gpuMilli());
    }
    return r;
  }
}
