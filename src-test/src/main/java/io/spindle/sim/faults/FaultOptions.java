package io.spindle.sim.faults;

import io.spindle.core.reliability.FailureRate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One failure-injection run (docs/simulator.md, "Hardware faults"): the cluster, the training jobs, the background
 * work, the failure and repair model and the scheduler's answer to failures.
 *
 * @param nodesPerRack nodes per rack (the bottom topology level)
 * @param trainingGpus GPUs of each large training job (gangs of 8-GPU members), submitted first
 * @param perGpuHour interruptions per GPU-hour (all causes); {@code hardwareShare} of them are GPU faults that take the
 *     GPU out until repaired, the rest restart the job where it is
 * @param repair how long a failed GPU stays out
 * @param restartInDomain hot swap ({@code yarn.scheduler.spindle.health.restart-in-domain}); off: restart anywhere
 * @param sparesPerRack the training queue's {@code spindle.hot-spares-per-rack}
 * @param checkpointMillis the training jobs' fixed checkpoint interval, or 0 for the advice (Daly, per job size)
 * @param writeMillis one checkpoint write
 * @param startupMillis from all members placed to training again (launch, NCCL set-up, checkpoint load)
 * @param stopMillis from a stop decision to the container having ended
 * @param backgroundLoad offered load of the background work, a share of the GPUs not in training jobs
 * @param backgroundGpuScale each background job's GPUs times this (the Philly mix on a larger cluster)
 * @param days simulated time
 */
public record FaultOptions(int nodes, int gpusPerNode, int nodesPerRack, List<Integer> trainingGpus,
    double perGpuHour, double hardwareShare, RepairTimes repair, boolean restartInDomain, int sparesPerRack,
    long checkpointMillis, long writeMillis, long startupMillis, long stopMillis, double backgroundLoad,
    int backgroundGpuScale, double days, long seed) {

  /** Meta, "The Llama 3 Herd of Models" (2024), table 5: GPU and HBM3 faults are 58.7% of the 419 interruptions. */
  public static final double LLAMA3_HARDWARE_SHARE = 0.587;

  public FaultOptions {
    trainingGpus = List.copyOf(trainingGpus);
    if (nodes <= 0 || gpusPerNode <= 0 || nodesPerRack <= 0) {
      throw new IllegalArgumentException("--nodes, --gpus-per-node and --nodes-per-rack must be positive");
    }
    for (int g : trainingGpus) {
      if (g <= 0 || g % gpusPerNode != 0) {
        throw new IllegalArgumentException("training job sizes are whole nodes of " + gpusPerNode + " GPUs: " + g);
      }
    }
    if (perGpuHour < 0 || hardwareShare < 0 || hardwareShare > 1 || backgroundLoad < 0 || days <= 0
        || backgroundGpuScale < 1) {
      throw new IllegalArgumentException("rates, shares, load and days must be in range");
    }
  }

  /** The variant with this restart rule, spares and checkpoint interval (0: advised). */
  public FaultOptions with(boolean inDomain, int spares, long checkpoint) {
    return new FaultOptions(nodes, gpusPerNode, nodesPerRack, trainingGpus, perGpuHour, hardwareShare, repair,
        inDomain, spares, checkpoint, writeMillis, startupMillis, stopMillis, backgroundLoad, backgroundGpuScale,
        days, seed);
  }

  public FaultOptions withDays(double d) {
    return new FaultOptions(nodes, gpusPerNode, nodesPerRack, trainingGpus, perGpuHour, hardwareShare, repair,
        restartInDomain, sparesPerRack, checkpointMillis, writeMillis, startupMillis, stopMillis, backgroundLoad,
        backgroundGpuScale, d, seed);
  }

  /** What the variant is called in tables: restart rule, spares, checkpoints. */
  public String name() {
    String rule = !restartInDomain ? "restart anywhere" : sparesPerRack > 0 ? "hot swap + " + sparesPerRack
        + " spare/rack" : "hot swap in domain";
    return rule + ", " + (checkpointMillis == 0 ? "advised" : "fixed " + checkpointMillis / 60_000 + " min");
  }

  /** The checkpoint interval a job of {@code gpus} uses: the fixed one, or Daly's at the injected rate. */
  public long intervalFor(int gpus) {
    if (checkpointMillis > 0) {
      return checkpointMillis;
    }
    return io.spindle.core.reliability.CheckpointInterval.dalyMillis(writeMillis,
        FailureRate.mtbfMillis(perGpuHour, gpus));
  }

  public int totalGpus() {
    return nodes * gpusPerNode;
  }

  /** Reads the flags (docs/simulator.md); absent ones take the defaults of the 16,384-GPU study. */
  public static FaultOptions parse(Map<String, String> a) {
    String failures = a.getOrDefault("failures", "llama3");
    double rate;
    if (failures.equals("llama3")) {
      rate = FailureRate.LLAMA3_PER_GPU_HOUR;
    } else if (failures.equals("none")) {
      rate = 0;
    } else {
      rate = Double.parseDouble(failures); // Interruptions per GPU-hour.
    }
    List<Integer> sizes = new ArrayList<>();
    for (String s : a.getOrDefault("training-gpus", "8192").split(",")) {
      if (!s.isBlank()) {
        sizes.add(Integer.parseInt(s.strip()));
      }
    }
    String ckpt = a.getOrDefault("checkpoint", "advised");
    long checkpoint;
    if (ckpt.equals("advised")) {
      checkpoint = 0;
    } else if (ckpt.startsWith("fixed:")) {
      checkpoint = Math.round(Double.parseDouble(ckpt.substring(6)) * 1000);
      if (checkpoint <= 0) {
        throw new IllegalArgumentException("--checkpoint fixed:SECONDS needs a positive interval");
      }
    } else {
      throw new IllegalArgumentException("--checkpoint is advised or fixed:SECONDS; was " + ckpt);
    }
    String restart = a.getOrDefault("restart", "in-domain");
    if (!restart.equals("in-domain") && !restart.equals("anywhere")) {
      throw new IllegalArgumentException("--restart is in-domain or anywhere; was " + restart);
    }
    return new FaultOptions(Integer.parseInt(a.getOrDefault("nodes", "2048")),
        Integer.parseInt(a.getOrDefault("gpus-per-node", "8")), Integer.parseInt(a.getOrDefault("nodes-per-rack", "32")),
        sizes, rate, Double.parseDouble(a.getOrDefault("hardware-share", String.valueOf(LLAMA3_HARDWARE_SHARE))),
        RepairTimes.parse(a.getOrDefault("repair-hours", "lognormal:8,1")), restart.equals("in-domain"),
        Integer.parseInt(a.getOrDefault("spares", "0")), checkpoint,
        Math.round(Double.parseDouble(a.getOrDefault("checkpoint-write-seconds", "60")) * 1000),
        Math.round(Double.parseDouble(a.getOrDefault("restart-minutes", "10")) * 60_000),
        Math.round(Double.parseDouble(a.getOrDefault("stop-seconds", "30")) * 1000),
        Double.parseDouble(a.getOrDefault("background-load", "0.9")),
        Integer.parseInt(a.getOrDefault("background-gpu-scale", "1")),
        Double.parseDouble(a.getOrDefault("days", "30")), Long.parseLong(a.getOrDefault("seed", "1")));
  }
}
