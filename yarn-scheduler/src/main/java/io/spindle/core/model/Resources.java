package io.spindle.core.model;

import static io.spindle.core.model.InvalidInputException.requireNonNegative;

/**
 * The shape of one container: memory, vcores, and at most one kind of GPU ask — whole GPUs, instances of one MIG
 * profile, or a share of one GPU — optionally restricted to a set of acceptable GPU models. A container never mixes
 * kinds: no GPU serves two of them at once, and no workload we know of wants two.
 *
 * <p>A <em>share</em> is a compute share in thousandths of a GPU ({@code gpuMilli}, 1..1000) and/or an amount of GPU
 * memory ({@code gpuMemoryMb}) on one GPU in a sharing mode ({@link GpuSharing}). It is charged
 * {@link #shareUnits(GpuModel)} GPU-equivalents on the GPU it gets.
 *
 * @param models the GPU models that serve it ({@link GpuModelSet#ANY} for any)
 * @param migProfile MIG profile name in NVIDIA's naming ({@code 3g.40gb}), or {@code null}
 * @param partition the partition (YARN node label expression) whose nodes may hold it; {@link Node#DEFAULT_PARTITION}
 *     for the nodes without a label
 * @param gpuMilli compute share of one GPU in thousandths, 0 when the container asks for no share
 * @param gpuMemoryMb GPU memory of the share, 0 when the share asks for no memory amount
 * @param isolation what kind of shared GPU the share needs
 */
public record Resources(long memoryMb, int vcores, int gpus, GpuModelSet models, String migProfile, int migInstances,
    String partition, int gpuMilli, long gpuMemoryMb, GpuIsolation isolation) {

  /** Thousandths in one whole GPU: the most one share may ask. */
  public static final int MILLI_PER_GPU = 1000;

  public static final Resources NONE = new Resources(0, 0, 0, (String) null, null, 0);

  /** A container of the default partition. */
  public Resources(long memoryMb, int vcores, int gpus, String gpuModel, String migProfile, int migInstances) {
    this(memoryMb, vcores, gpus, gpuModel, migProfile, migInstances, Node.DEFAULT_PARTITION);
  }

  /** A container without a share; {@code gpuModel} is one model or a {@code |}-separated set. */
  public Resources(long memoryMb, int vcores, int gpus, String gpuModel, String migProfile, int migInstances,
      String partition) {
    this(memoryMb, vcores, gpus, GpuModelSet.parse(gpuModel), migProfile, migInstances, partition, 0, 0,
        GpuIsolation.ANY);
  }

  public Resources {
    partition = partition == null ? Node.DEFAULT_PARTITION : partition.strip();
    models = models == null ? GpuModelSet.ANY : models;
    isolation = isolation == null ? GpuIsolation.ANY : isolation;
    requireNonNegative("memoryMb", memoryMb);
    requireNonNegative("vcores", vcores);
    requireNonNegative("gpus", gpus);
    requireNonNegative("migInstances", migInstances);
    requireNonNegative("gpuMilli", gpuMilli);
    requireNonNegative("gpuMemoryMb", gpuMemoryMb);
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
    if (gpuMilli > MILLI_PER_GPU) {
      throw new InvalidInputException("gpuMilli", gpuMilli, "a share is at most " + MILLI_PER_GPU
          + " thousandths of one GPU; ask for whole GPUs for more");
    }
    boolean share = gpuMilli > 0 || gpuMemoryMb > 0;
    if (share && (gpus > 0 || migInstances > 0)) {
      throw new InvalidInputException(gpus > 0 ? "gpus" : "migInstances", gpus > 0 ? gpus : migInstances,
          "a container asks for a share of one GPU (" + shareText(gpuMilli, gpuMemoryMb) + ") or for "
              + (gpus > 0 ? "whole GPUs" : "MIG instances") + ", not both");
    }
    if (!share && isolation != GpuIsolation.ANY) {
      throw new InvalidInputException("isolation", isolation, "isolation applies to a share of a GPU only");
    }
    if (!models.isAny() && gpus == 0 && migInstances == 0 && !share) {
      throw new InvalidInputException("gpuModel", models, "a GPU model is only meaningful with GPUs");
    }
  }

  public static Resources of(long memoryMb, int vcores) {
    return new Resources(memoryMb, vcores, 0, (String) null, null, 0);
  }

  public Resources withGpus(int count) {
    return new Resources(memoryMb, vcores, count, models, null, 0, partition, 0, 0, GpuIsolation.ANY);
  }

  /** The accepted GPU models: one name, a {@code |}-separated set, or {@code null} for any. */
  public Resources withGpuModel(String model) {
    return withModels(GpuModelSet.parse(model));
  }

  public Resources withModels(GpuModelSet set) {
    return new Resources(memoryMb, vcores, gpus, set, migProfile, migInstances, partition, gpuMilli, gpuMemoryMb,
        isolation);
  }

  public Resources withMig(String profile, int instances) {
    return new Resources(memoryMb, vcores, 0, models, profile, instances, partition, 0, 0, GpuIsolation.ANY);
  }

  /** A share of one GPU: {@code milli} thousandths of its compute and/or {@code memoryMb} of its memory. */
  public Resources withShare(int milli, long gpuMemMb, GpuIsolation iso) {
    return new Resources(memoryMb, vcores, 0, models, null, 0, partition, milli, gpuMemMb, iso);
  }

  /** This shape for the nodes of partition {@code p}. */
  public Resources withPartition(String p) {
    return new Resources(memoryMb, vcores, gpus, models, migProfile, migInstances, p, gpuMilli, gpuMemoryMb,
        isolation);
  }

  public boolean wantsMig() {
    return migInstances > 0;
  }

  /** Whether the container asks for a share of one GPU. */
  public boolean wantsShare() {
    return gpuMilli > 0 || gpuMemoryMb > 0;
  }

  /** Whether it asks for any GPU capacity at all. */
  public boolean wantsGpu() {
    return gpus > 0 || migInstances > 0 || wantsShare();
  }

  /**
   * GPU-equivalent units a share costs on a GPU of {@code model}: the larger of its compute fraction and its memory
   * fraction of that GPU, rounded up to a whole unit (1/840 of a GPU) — a share denies others both the compute and
   * the memory it holds, as a MIG slice does. 250 milli are exactly 210 units; 1 milli is 1 unit.
   */
  public long shareUnits(GpuModel model) {
    long byCompute = ceilDiv((long) gpuMilli * ResourceVector.GPU_UNITS, MILLI_PER_GPU);
    long gpuMemory = model == null ? 0 : model.memoryMb();
    long byMemory = gpuMemory <= 0 ? 0 : ceilDiv(gpuMemoryMb * ResourceVector.GPU_UNITS, gpuMemory);
    return Math.min(ResourceVector.GPU_UNITS, Math.max(byCompute, byMemory));
  }

  /**
   * The compute a share holds on a GPU of {@code model}, in thousandths: what it asked for or, when it asked for
   * memory only, the memory's fraction of that GPU (rounded up), so that memory-only shares cannot overfill a GPU.
   */
  public int shareMilli(GpuModel model) {
    if (gpuMilli > 0 || model == null || model.memoryMb() <= 0) {
      return gpuMilli;
    }
    return (int) Math.min(MILLI_PER_GPU, Math.max(1, ceilDiv(gpuMemoryMb * MILLI_PER_GPU, model.memoryMb())));
  }

  private static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }

  /** The whole-GPU part as an accounting vector (MIG and share charges depend on the GPU model, so placement adds them). */
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
    if (wantsShare()) {
      s.append(", ").append(shareText(gpuMilli, gpuMemoryMb));
      if (isolation != GpuIsolation.ANY) {
        s.append(", isolation=").append(isolation);
      }
    }
    if (!models.isAny()) {
      s.append(", model=").append(models);
    }
    if (!partition.isEmpty()) {
      s.append(", label=").append(partition);
    }
    return s.append('>').toString();
  }

  private static String shareText(int milli, long memMb) {
    StringBuilder s = new StringBuilder();
    if (milli > 0) {
      s.append(GpuResourceNames.GPU_MILLI).append('=').append(milli);
    }
    if (memMb > 0) {
      s.append(s.length() > 0 ? ", " : "").append(GpuResourceNames.GPU_MEMORY_MB).append('=').append(memMb);
    }
    return s.toString();
  }
}
