package io.spindle.nm;

import io.spindle.core.model.GpuSharing;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The environment a container with a share of a GPU runs with, beside {@code NVIDIA_VISIBLE_DEVICES}: what it got,
 * and under MPS the limits the MPS server enforces for it.
 */
public final class ShareEnvironment {

  /** {@code time-slice} or {@code mps}: how the GPU is shared, so a program can tell whether limits apply. */
  public static final String SHARING = "SPINDLE_GPU_SHARING";
  /** The compute share in thousandths of the GPU. */
  public static final String MILLI = "SPINDLE_GPU_MILLI";
  /** MPS only: the memory limit set for the container, MB. */
  public static final String MEMORY_MB = "SPINDLE_GPU_MEMORY_MB";
  public static final String MPS_THREAD_PERCENTAGE = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE";
  public static final String MPS_MEMORY_LIMIT = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT";
  public static final String MPS_PIPE_DIRECTORY = "CUDA_MPS_PIPE_DIRECTORY";
  public static final String MPS_LOG_DIRECTORY = "CUDA_MPS_LOG_DIRECTORY";

  private ShareEnvironment() {}

  /**
   * The variables for a share.
   *
   * @param memoryMb the share's memory: the amount the request named, or (0 here) not known
   * @param gpuMemoryMb the GPU's memory, to derive a limit from the compute fraction when the amount is not known
   * @param pipeDirectory the MPS control daemon's pipe directory, empty for MPS's default
   * @param logDirectory the MPS control daemon's log directory, empty for MPS's default
   */
  public static Map<String, String> of(GpuSharing sharing, int milli, long memoryMb, long gpuMemoryMb,
      String pipeDirectory, String logDirectory) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put(SHARING, sharing.text());
    env.put(MILLI, Integer.toString(milli));
    if (sharing != GpuSharing.MPS) {
      // Time-slicing has no limits to set: the container may use all of the GPU, and SHARING says so.
      return env;
    }
    env.put(MPS_THREAD_PERCENTAGE, Integer.toString(percentage(milli)));
    long limit = memoryMb > 0 ? memoryMb : memoryFraction(milli, gpuMemoryMb);
    if (limit > 0) {
      // The container sees its one GPU as device 0, whatever its index on the node.
      env.put(MPS_MEMORY_LIMIT, "0=" + limit + "M");
      env.put(MEMORY_MB, Long.toString(limit));
    }
    if (!pipeDirectory.isEmpty()) {
      env.put(MPS_PIPE_DIRECTORY, pipeDirectory);
    }
    if (!logDirectory.isEmpty()) {
      env.put(MPS_LOG_DIRECTORY, logDirectory);
    }
    return env;
  }

  /**
   * The compute share in whole percent, rounded up and never 0: a container gets at least what it was counted for
   * (MPS takes the value as a ceiling on the SMs a client may use, so the ceilings of a GPU's shares may add up to
   * a little over 100).
   */
  public static int percentage(int milli) {
    return Math.max(1, Math.min(100, (milli + 9) / 10));
  }

  /**
   * The compute fraction of the GPU's memory, rounded down (shares of one GPU then never add up to more than it
   * has); 0 when the GPU's memory is not known, and then no limit is set.
   */
  public static long memoryFraction(int milli, long gpuMemoryMb) {
    if (gpuMemoryMb <= 0 || milli <= 0) {
      return 0;
    }
    return Math.max(1, milli * gpuMemoryMb / 1000);
  }
}
