package io.spindle.sim;

/**
 * One job of a trace, as the simulator replays it: when it arrives, how long it runs once all its GPUs are held,
 * and what it asks for.
 *
 * @param queue the leaf queue it is submitted to (Philly: its virtual cluster)
 * @param gpus GPUs it needs at once (a gang when more than one); 0 for a CPU-only job
 * @param gpuMilli thousandths of each GPU it uses (1000 for whole GPUs; below 1000 with one GPU: a fractional
 *     request, served by a MIG instance where the cluster has MIG)
 * @param vcores virtual cores for the whole job (0 where the trace has none)
 * @param memoryMb memory for the whole job (0 where the trace has none)
 * @param gpuModel the GPU model it must run on, or {@code null} for any
 */
public record SimJob(String id, long submitMillis, long durationMillis, String queue, String user, int gpus,
    int gpuMilli, long vcores, long memoryMb, String gpuModel) {

  public SimJob {
    if (durationMillis < 0) {
      throw new IllegalArgumentException("job " + id + ": negative duration " + durationMillis + " ms");
    }
    if (gpus < 0 || gpuMilli < 0 || gpuMilli > 1000) {
      throw new IllegalArgumentException("job " + id + ": gpus " + gpus + ", gpu milli " + gpuMilli + " out of range");
    }
    if (gpus == 0 || gpuMilli == 0) {
      gpus = 0;
      gpuMilli = 0;
    }
    if (gpuModel != null && gpuModel.isBlank()) {
      gpuModel = null;
    }
  }

  /** A whole-GPU job with no CPU or memory figures, as the Philly table has them. */
  public static SimJob gpuJob(String id, long submitMillis, long durationMillis, String queue, int gpus) {
    return new SimJob(id, submitMillis, durationMillis, queue, "u-" + queue, gpus, 1000, 0, 0, null);
  }

  public boolean fractional() {
    return gpus == 1 && gpuMilli < 1000;
  }

  /** GPU demand in thousandths of a GPU. */
  public long gpuMilliTotal() {
    return (long) gpus * gpuMilli;
  }

  public SimJob withQueue(String newQueue) {
    return new SimJob(id, submitMillis, durationMillis, newQueue, user, gpus, gpuMilli, vcores, memoryMb, gpuModel);
  }
}
