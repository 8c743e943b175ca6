package io.spindle.sim;

import io.spindle.core.model.Resources;

/** How a job asks the engine for its GPUs: {@code count} containers of one {@code shape}. */
public record Members(int count, Resources shape) {

  public Members {
    if (count < 1) {
      throw new IllegalArgumentException("a job has at least one container; was " + count);
    }
  }

  /** GPUs of all members together (whole GPUs; a MIG instance counts as 0 here). */
  public int totalGpus() {
    return count * shape.gpus();
  }
}
