package io.spindle.core.reliability;

/**
 * What the cluster itself has seen of hardware failures: the GPU-hours its GPUs were in service and the GPU failures
 * among them, the evidence {@link FailureRate} weighs against its prior.
 *
 * <p>Exposure is the integral of the cluster's GPU count over the engine clock. The count only changes when nodes
 * come and go, so the integral is settled then (and when a failure is counted), and read in between by multiplying
 * the current count by the time since: no periodic tick, and the same value whenever it is read at the same instant.
 * A GPU counts while its node is registered, busy or idle, MIG-partitioned or whole: it fails either way.
 *
 * <p>What a failover carries is {@link #saved()}, which moves only when the count or the failures change, so a
 * driver saves it with the rest of the durable state and an idle cluster is no change to save. A new leader
 * {@link #restore restores} it and counts the time since the save at the GPU count the old leader last saw: the nodes
 * ran on while the leaders changed.
 */
public final class FailureObservations {

  /**
   * The observations as of {@code asOfMillis}: {@code gpuMillis} of exposure up to then, {@code gpus} in service
   * from then on, {@code failures} in all.
   */
  public record Saved(long gpuMillis, long asOfMillis, int gpus, long failures) {

    public static final Saved NONE = new Saved(0, 0, 0, 0);

    public Saved {
      if (gpuMillis < 0 || gpus < 0 || failures < 0) {
        throw new IllegalArgumentException("exposure, GPUs and failures must not be negative: " + gpuMillis + ", "
            + gpus + ", " + failures);
      }
    }
  }

  private long gpuMillis;
  private long asOfMillis;
  private int gpus;
  private long failures;
  private long changes;

  /** The cluster holds {@code gpusInService} GPUs from {@code nowMillis} on. */
  public void capacity(long nowMillis, int gpusInService) {
    if (gpusInService < 0) {
      throw new IllegalArgumentException("GPUs in service must not be negative: " + gpusInService);
    }
    if (gpusInService == gpus) {
      return;
    }
    settle(nowMillis);
    gpus = gpusInService;
    changes++;
  }

  /**
   * A GPU failed at {@code nowMillis}: a hardware fault that ended or would have ended the work on it. Not a node that
   * stopped talking to the ResourceManager, which is mostly software and networks and says nothing of the GPUs.
   */
  public void gpuFailed(long nowMillis) {
    settle(nowMillis);
    failures++;
    changes++;
  }

  public long failures() {
    return failures;
  }

  /** GPU-hours in service up to {@code nowMillis}. */
  public double exposureGpuHours(long nowMillis) {
    return (gpuMillis + (double) gpus * Math.max(0, nowMillis - asOfMillis)) / 3_600_000.0;
  }

  public Saved saved() {
    return new Saved(gpuMillis, asOfMillis, gpus, failures);
  }

  /**
   * Takes over what an earlier leader saw: its exposure, counted on from its save at the GPUs it had then, up to
   * {@code nowMillis}, and from then on at the GPUs this engine holds. Failures this engine counted itself before the
   * take-over are kept beside the saved ones.
   */
  public void restore(Saved saved, long nowMillis) {
    int current = gpus;
    gpuMillis = saved.gpuMillis();
    asOfMillis = saved.asOfMillis();
    gpus = saved.gpus();
    failures += saved.failures();
    changes++;
    capacity(nowMillis, current);
  }

  /** Moves whenever {@link #saved} changes. */
  public long changes() {
    return changes;
  }

  private void settle(long nowMillis) {
    if (nowMillis > asOfMillis) {
      gpuMillis = Math.addExact(gpuMillis, Math.multiplyExact((long) gpus, nowMillis - asOfMillis));
      asOfMillis = nowMillis;
    }
  }
}
