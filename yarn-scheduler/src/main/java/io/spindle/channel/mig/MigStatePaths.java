package io.spindle.channel.mig;

/**
 * The znodes of MIG state: {@code <root>/nodes/<node>/gpus/<index>/desired} (written by the scheduler) and
 * {@code .../reported} (written by the node); beside them {@code <root>/nodes/<node>/shares/<containerId>}, the GPU
 * the scheduler gave each share container on the node (written by the scheduler).
 */
public record MigStatePaths(String root) {

  public static final String DESIRED = "desired";
  public static final String REPORTED = "reported";
  public static final String SHARES = "shares";

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
    return node(node) + "/gpus";
  }

  /** A node's share assignments, one child per container. */
  public String shares(String node) {
    return node(node) + "/" + SHARES;
  }

  public String share(String node, String containerId) {
    if (containerId == null || containerId.isBlank() || containerId.contains("/")) {
      throw new IllegalArgumentException("container id must be non-blank and free of '/', not '" + containerId
          + "'");
    }
    return shares(node) + "/" + containerId;
  }

  private String node(String node) {
    if (node == null || node.isBlank() || node.contains("/")) {
      throw new IllegalArgumentException("node name must be non-blank and free of '/', not '" + node + "'");
    }
    return nodes() + "/" + node;
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
