package io.spindle.core.model;

/**
 * YARN resource-type names for GPUs: {@code yarn.io/gpu} for whole GPUs, and one type per MIG profile in NVIDIA's
 * naming, {@code nvidia.com/mig-<profile>} (the Kubernetes device plugin's "mixed" strategy names, which operators
 * already know). The YARN adapter turns a request's resource map into {@link Resources} with these.
 */
public final class GpuResourceNames {

  public static final String WHOLE_GPU = "yarn.io/gpu";
  public static final String MIG_PREFIX = "nvidia.com/mig-";

  private GpuResourceNames() {}

  public static String mig(String profileName) {
    return MIG_PREFIX + profileName;
  }

  public static boolean isGpuResource(String resourceName) {
    return WHOLE_GPU.equals(resourceName) || resourceName.startsWith(MIG_PREFIX);
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
