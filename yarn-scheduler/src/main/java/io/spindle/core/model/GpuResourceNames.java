package io.spindle.core.model;

/**
 * YARN resource-type names for GPUs. Whole GPUs: {@code nvidia.com/gpu} when NodeManagers run Spindle's device
 * plugin, {@code yarn.io/gpu} when they run YARN's built-in GPU plugin (Hadoop reserves that name for it, so a
 * device plugin cannot use it); both mean the same to the scheduler. MIG: one type per profile in NVIDIA's naming,
 * {@code nvidia.com/mig-<profile>} (the Kubernetes device plugin's "mixed" strategy names, which operators already
 * know). The YARN adapter turns a request's resource map into {@link Resources} with these.
 */
public final class GpuResourceNames {

  public static final String WHOLE_GPU = "yarn.io/gpu";
  public static final String NVIDIA_GPU = "nvidia.com/gpu";
  public static final String MIG_PREFIX = "nvidia.com/mig-";
  /**
   * A compute share of one GPU in thousandths (250 = a quarter GPU). Named like Kubernetes' and KAI's "milli" units
   * and OpenB's {@code gpu_milli}; YARN resource values are integers, so thousandths keep fractions exact.
   */
  public static final String GPU_MILLI = "nvidia.com/gpu-milli";
  /** GPU memory of a share, in MB (YARN's unit for memory). */
  public static final String GPU_MEMORY_MB = "nvidia.com/gpu-mem-mb";

  private GpuResourceNames() {}

  public static String mig(String profileName) {
    return MIG_PREFIX + profileName;
  }

  public static boolean isWholeGpu(String resourceName) {
    return WHOLE_GPU.equals(resourceName) || NVIDIA_GPU.equals(resourceName);
  }

  public static boolean isShare(String resourceName) {
    return GPU_MILLI.equals(resourceName) || GPU_MEMORY_MB.equals(resourceName);
  }

  public static boolean isGpuResource(String resourceName) {
    return isWholeGpu(resourceName) || resourceName.startsWith(MIG_PREFIX) || isShare(resourceName);
  }

  /**
   * The MIG profile a resource name asks for; an error naming the resource if no model in the catalog offers it,
   * so a typo is refused at once instead of waiting forever.
   */
  public static String migProfile(String resourceName, GpuModelCatalog catalog) {
    if (!resourceName.startsWith(MIG_PREFIX) || resourceName.length() == MIG_PREFIX.length()) {
      throw new InvalidInputException("resource", resourceName, "not a MIG resource (" + MIG_PREFIX + "<profile>)");
    }
    String profile = resourceName.substring(MIG_PREFIX.length());
    catalog.requireProfile("resource " + resourceName, profile);
    return profile;
  }
}
