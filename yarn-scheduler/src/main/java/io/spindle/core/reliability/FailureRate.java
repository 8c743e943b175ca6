package io.spindle.core.reliability;

/**
 * The rate of hardware failures per GPU-hour, estimated from what a cluster has seen, starting from a published
 * prior so that a young cluster (or a GPU model it has run for a few hours) gets sensible advice rather than none.
 *
 * <p>Failures of many independent GPUs are modelled as a Poisson process with an unknown rate; with a Gamma prior
 * worth {@code priorGpuHours} of exposure at {@code priorPerGpuHour}, the posterior mean after {@code failures} in
 * {@code exposureGpuHours} is {@code (priorPerGpuHour * priorGpuHours + failures) / (priorGpuHours +
 * exposureGpuHours)}: the prior dominates until the cluster has run about as many GPU-hours itself.
 *
 * <p>The default prior is Meta's report on Llama 3 pre-training ("The Llama 3 Herd of Models", 2024): 419
 * unexpected interruptions in 54 days on 16,384 H100 GPUs, 1.97e-5 per GPU-hour (one every 3.1 hours for the whole
 * job; 58% of them GPU or HBM faults, the rest other hardware and software, all of which cost a restart).
 *
 * @param priorPerGpuHour the failure rate assumed before anything is observed
 * @param priorGpuHours how much observed exposure the prior is worth
 */
public record FailureRate(double priorPerGpuHour, double priorGpuHours) {

  /** 419 / (54 days x 24 h x 16,384 GPUs). */
  public static final double LLAMA3_PER_GPU_HOUR = 419.0 / (54 * 24 * 16_384.0);
  /** About a week of a 1,000-GPU cluster: by then what it saw itself counts as much as the prior. */
  public static final double DEFAULT_PRIOR_GPU_HOURS = 168_000;

  public FailureRate {
    if (!(priorPerGpuHour > 0) || Double.isInfinite(priorPerGpuHour)) {
      throw new IllegalArgumentException("prior failure rate must be positive and finite: " + priorPerGpuHour);
    }
    if (!(priorGpuHours > 0) || Double.isInfinite(priorGpuHours)) {
      throw new IllegalArgumentException("prior weight must be positive and finite: " + priorGpuHours);
    }
  }

  public static FailureRate defaults() {
    return new FailureRate(LLAMA3_PER_GPU_HOUR, DEFAULT_PRIOR_GPU_HOURS);
  }

  /** Failures per GPU-hour after {@code failures} were seen over {@code exposureGpuHours}. */
  public double perGpuHour(long failures, double exposureGpuHours) {
    if (failures < 0 || exposureGpuHours < 0 || Double.isNaN(exposureGpuHours)) {
      throw new IllegalArgumentException("failures and exposure must not be negative: " + failures + ", "
          + exposureGpuHours);
    }
    return (priorPerGpuHour * priorGpuHours + failures) / (priorGpuHours + exposureGpuHours);
  }

  /** Mean time between failures of a job on {@code gpus} GPUs at {@code perGpuHour}, in milliseconds. */
  public static double mtbfMillis(double perGpuHour, int gpus) {
    if (gpus <= 0) {
      throw new IllegalArgumentException("a job runs on at least one GPU: " + gpus);
    }
    return 3_600_000.0 / (perGpuHour * gpus);
  }
}
