package io.spindle.core.model;

import static io.spindle.core.model.InvalidInputException.requireNonNegative;

/**
 * The shape of one container: memory, vcores, and either whole GPUs (optionally of one model) or instances of one
 * MIG profile. A container never mixes whole GPUs and MIG instances: no GPU can serve both at once, and no
 * workload we know of wants both.
 *
 * @param gpuModel required GPU model for whole GPUs, or {@code null} for any model
 * @param migProfile MIG profile name in NVIDIA's naming ({@code 3g.40gb}), or {@code null}
 * @param partition the partition (YARN node label expression) whose nodes may hold it; {@link Node#DEFAULT_PARTITION}
 *     for the nodes without a label
 */
public record Resources(
    long memoryMb, int vcores, int gpus, String gpuModel, String migProfile, int migInstances, String partition) {

  public static final Resources NONE = new Resources(0, 0, 0, null, null, 0);

  /** A container of the default partition. */
  public Resources(long memoryMb, int vcores, int gpus, String gpuModel, String migProfile, int migInstances) {
    this(memoryMb, vcores, gpus, gpuModel, migProfile, migInstances, Node.DEFAULT_PARTITION);
  }

  public Resources {
    partition = partition == null ? Node.DEFAULT_PARTITION : partition.strip();
    requireNonNegative("memoryMb", memoryMb);
    requireNonNegative("vcores", vcores);
    requireNonNegative("gpus", gpus);
    requireNonNegative("migInstances", migInstances);
    if (gpuModel != null && gpuModel.isBlank()) {
      gpuModel = null;
    }
    if (migProfile != null && migProfile.isBlank()) {
      migProfile = null;
    }
    if ((migProfile == null) != (migInstances == 0)) {
      throw new InvalidInputException("migInstances", migInstances,
          migProfile == null ? "MIG instances need a MIG profile" : "a MIG profile needs at least one instance");
    }
    if (gpus > 0 && migInstances > 0) {
      throw new InvalidInputException("gpus", gpus,
          "a container asks for whole GPUs or for MIG instances of " + migProfile + ", not both");
    }
    if (gpuModel != null && gpus == 0 && migInstances == 0) {
      throw new InvalidInputException("gpuModel", gpuModel, "a GPU model is only meaningful with GPUs");
    }
  }

  public static Resources of(long memoryMb, int vcores) {
    return new Resources(memoryMb, vcores, 0, null, null, 0);
  }

  public Resources withGpus(int count) {
    return new Resources(memoryMb, vcores, count, gpuModel, null, 0, partition);
  }

  public Resources withGpuModel(String model) {
    return new Resources(memoryMb, vcores, gpus, model, migProfile, migInstances, partition);
  }

  public Resources withMig(String profile, int instances) {
    return new Resources(memoryMb, vcores, 0, gpuModel, profile, instances, partition);
  }

  /** This shape for the nodes of partition {@code p}. */
  public Resources withPartition(String p) {
    return new Resources(memoryMb, vcores, gpus, gpuModel, migProfile, migInstances, p);
  }

  public boolean wantsMig() {
    return migInstances > 0;
  }

  /** The whole-GPU part as an accounting vector (MIG charges depend on the GPU model, so placement adds them). */
  public ResourceVector baseVector() {
    return ResourceVector.of(memoryMb, vcores, gpus);
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("<memory=").append(memoryMb).append("MB, vcores=").append(vcores);
    if (gpus > 0) {
      s.append(", gpu=").append(gpus);
    }
    if (migInstances > 0) {
      s.append(", ").append("nvidia.com/mig-").append(migProfile).append('=').append(migInstances);
    }
    if (gpuModel != null) {
      s.append(", model=").append(gpuModel);
    }
    if (!partition.isEmpty()) {
      s.append(", label=").append(partition);
    }
    return s.append('>').toString();
  }
}
