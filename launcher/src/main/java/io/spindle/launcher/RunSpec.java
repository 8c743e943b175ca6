package io.spindle.launcher;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One {@code spindle-run} job as the user asked for it: where it queues, its workers' shape, how it is kept together
 * and restarted, and the command every worker runs. Immutable; {@link RunSpecParser} makes one from a command line.
 *
 * @param workers worker containers, one gang (at least 1); an elastic job's most
 * @param minWorkers an elastic job's fewest workers ({@code --min-workers}); equal to {@code workers} when rigid
 * @param workerStep an elastic job grows and shrinks by this many workers at a time (divides
 *     {@code workers - minWorkers}; 1 when rigid)
 * @param gpusPerWorker whole GPUs per worker (0 with a share, or for CPU-only work)
 * @param gpuMilli a share of one GPU per worker in thousandths (0: none)
 * @param migProfile one MIG instance of this profile per worker (e.g. {@code 3g.40gb}); null: none
 * @param topologyLevel the topology level the gang must ({@code topologyRequired}) or should stay within; null: any
 * @param maxRuntime each worker's declared run time, {@link Duration#ZERO} for none
 * @param checkpointDir where the job's checkpoints are (the newest is what a restart resumes from); null: none
 * @param restartBackoff the wait before the first restart, doubled for each further one ({@link RestartBudget})
 * @param hangTimeout a worker that reports no progress for this long counts as failed; {@link Duration#ZERO}: never
 * @param command what each worker runs, as given after {@code --}
 */
public record RunSpec(String queue, String name, int workers, int minWorkers, int workerStep, int gpusPerWorker,
    int gpuMilli, String migProfile, int memoryMb, int vcores, String topologyLevel, boolean topologyRequired,
    int priority, Duration maxRuntime, Map<String, String> env, List<String> files, List<String> archives,
    String checkpointDir, int maxRestarts, Duration restartBackoff, Duration hangTimeout, List<String> command) {

  // The tags Spindle's scheduler reads (admin-guide.md, "Application tags").
  static final String TAG_GANG_SIZE = "spindle.gang.size";
  static final String TAG_GANG_MIN = "spindle.gang.min";
  static final String TAG_GANG_STEP = "spindle.gang.step";
  static final String TAG_TOPOLOGY_REQUIRED = "spindle.topology.required";
  static final String TAG_TOPOLOGY_PREFERRED = "spindle.topology.preferred";
  static final String TAG_MAX_RUNTIME = "spindle.max-runtime";

  public RunSpec {
    if (minWorkers < 1 || minWorkers > workers || workerStep < 1 || (workers - minWorkers) % workerStep != 0) {
      throw new IllegalArgumentException("workers " + minWorkers + ".." + workers + " in steps of " + workerStep);
    }
    env = Map.copyOf(env);
    files = List.copyOf(files);
    archives = List.copyOf(archives);
    command = List.copyOf(command);
  }

  /** The application tags that make the workers one Spindle gang with the asked topology and run time. */
  public List<String> applicationTags() {
    List<String> tags = new ArrayList<>();
    tags.add(TAG_GANG_SIZE + "=" + workers);
    if (elastic()) {
      tags.add(TAG_GANG_MIN + "=" + minWorkers);
      if (workerStep > 1) {
        tags.add(TAG_GANG_STEP + "=" + workerStep);
      }
    }
    if (topologyLevel != null) {
      tags.add((topologyRequired ? TAG_TOPOLOGY_REQUIRED : TAG_TOPOLOGY_PREFERRED) + "=" + topologyLevel);
    }
    if (!maxRuntime.isZero()) {
      // Whole seconds: the scheduler's grammar (90s, 30m, 2h, 1d) and YARN's lower-casing both accept it.
      tags.add(TAG_MAX_RUNTIME + "=" + Math.max(1, maxRuntime.toSeconds()) + "s");
    }
    return List.copyOf(tags);
  }

  /** Whether the job may run with fewer workers than {@link #workers()} ({@code --min-workers}). */
  public boolean elastic() {
    return minWorkers < workers;
  }

  @Override
  public String toString() {
    String gpus = migProfile != null ? "MIG " + migProfile : gpuMilli > 0 ? gpuMilli + " milli-GPU"
        : gpusPerWorker + " GPU" + (gpusPerWorker == 1 ? "" : "s");
    String count = !elastic() ? workers + " worker" + (workers == 1 ? "" : "s")
        : minWorkers + " to " + workers + " workers" + (workerStep > 1 ? " in steps of " + workerStep : "");
    return String.format(Locale.ROOT, "%s x (%s, %d MB, %d vcores) in queue %s: %s", count, gpus, memoryMb, vcores,
        queue, String.join(" ", command));
  }
}
