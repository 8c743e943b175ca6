package io.spindle.channel.mig;

/**
 * The znodes of MIG state: {@code <root>/nodes/<node>/gpus/<index>/desired} (written by the scheduler) and
 * {@code .../reported} (written by the node).
 */
public record MigStatePaths(String root) {

  public static final String DESIRED = "desired";
  public static final String REPORTED = "reported";

  public MigStatePaths {
    if (root == null || !root.startsWith("/")) {
      throw new IllegalArgumentException("root must be an absolute znode path, not '" + root + "'");
    }
  }

  /** Every node's GPUs below it: what the scheduler mirrors. */
  public String nodes() {
    return root + "/nodes";
  }

  public String gpus(String node) {
    if (node == null || node.isBlank() || node.contains("/")) {
      throw new IllegalArgumentException("node name must be non-blank and free of '/', not '" + node + "'");
    }
    return nodes() + "/" + node + "/gpus";
  }

  public String gpu(String node, int gpuIndex) {
    if (gpuIndex < 0) {
      throw new IllegalArgumentException("gpu index must be >= 0, not " + gpuIndex);
    }
    return gpus(node) + "/" + gpuIndex;
  }

  public String desired(String node, int gpuIndex) {
    return gpu(node, gpuIndex) + "/" + DESIRED;
  }

  public String reported(String node, int gpuIndex) {
    return gpu(node, gpuIndex) + "/" + REPORTED;
  }
}
