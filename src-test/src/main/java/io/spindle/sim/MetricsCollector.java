package io.spindle.sim;

import io.spindle.core.model.ResourceVector;
import io.spindle.core.queue.FairShareCalculator;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueShare;
import io.spindle.core.queue.QueueTree;
import io.spindle.sim.RunResult.Bounds;
import io.spindle.sim.RunResult.Fairness;
import io.spindle.sim.RunResult.Gangs;
import io.spindle.sim.RunResult.Jobs;
import io.spindle.sim.RunResult.Mig;
import io.spindle.sim.RunResult.QueueResult;
import io.spindle.sim.RunResult.TimeSeries;
import io.spindle.sim.RunResult.Utilisation;
import io.spindle.sim.Stats.Distribution;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns what the simulator saw into the metrics of a run. State is held as step functions of virtual time: every
 * change happens in a cycle, and {@link #advanceTo} integrates the state as the previous cycle left it.
 *
 * <p>Fairness is measured against one yardstick for every policy: the H-DRF fair share
 * ({@link FairShareCalculator}) of the cluster's own queue configuration, given each queue's demand (held plus
 * waiting) — also for FIFO, whose engine runs a single queue, and for the Helios rules, whose engine forbids
 * borrowing. Queues are those of the jobs as the trace names them.
 */
final class MetricsCollector {

  private final QueueTree tree;
  private final ResourceVector capacity;
  private final double capacityGpuUnits;
  private final List<String> queues;
  private final List<String> paths = new ArrayList<>();
  private final Map<String, Integer> index = new HashMap<>();
  private final ResourceVector[] held;
  private final ResourceVector[] pending;
  private final double[] guaranteeShare;
  private final MigMirror mig;
  private final long startMillis;
  private long lastMillis;
  private boolean dirty = true;

  private long busyUnits;
  private long heldUnits;
  private int waitingJobs;
  private int waitingMigJobs;
  private int repartitions;
  private long engineCycles;

  // Current fairness state (set after each cycle).
  private final double[] share;
  private final double[] fair;
  private final boolean[] demanding;

  // Integrals over virtual time (unit x milliseconds).
  private double busyUnitMs;
  private double heldUnitMs;
  private double partialUnitMs;
  private double strandedSliceMs;
  private double heldSliceMs;
  private double contendedMs;
  private double meanDevMs;
  private double jainMs;
  private double maxDeviation;
  private final double[] shareMs;
  private final double[] fairMs;
  private final double[] devMs;

  // Step-function samples for the time series.
  private int points;
  private long[] times = new long[1024];
  private double[] busySeries = new double[1024];
  private double[] heldSeries = new double[1024];
  private double[] waitingSeries = new double[1024];
  private double[][] queueSeries;
  private double[][] fairSeries;

  // Per-job outcomes.
  private final List<double[]> finished = new ArrayList<>(); // {queue index, queue delay s, jct s}
  private int rejected;
  private int jobsEverPartial;
  private double durationSum;
  private double gpuMs;
  private int submitted;
  private final int[] submittedPerQueue;
  private long lastSubmitMillis;

  MetricsCollector(ClusterSpec cluster, long startMillis) {
    this.tree = cluster.queueTree();
    this.capacity = cluster.capacity();
    this.capacityGpuUnits = capacity.gpuUnits();
    this.queues = cluster.leafNames();
    Map<String, FairShareCalculator.Limits> limits = FairShareCalculator.resolveLimits(tree, capacity);
    int n = queues.size();
    held = new ResourceVector[n];
    pending = new ResourceVector[n];
    guaranteeShare = new double[n];
    share = new double[n];
    fair = new double[n];
    demanding = new boolean[n];
    shareMs = new double[n];
    fairMs = new double[n];
    devMs = new double[n];
    submittedPerQueue = new int[n];
    queueSeries = new double[n][1024];
    fairSeries = new double[n][1024];
    for (int i = 0; i < n; i++) {
      QueueConfig q = tree.leaf(queues.get(i)).orElseThrow();
      paths.add(q.path());
      index.put(queues.get(i), i);
      held[i] = ResourceVector.ZERO;
      pending[i] = ResourceVector.ZERO;
      guaranteeShare[i] = limits.get(q.path()).guarantee().dominantShare(capacity);
    }
    this.mig = new MigMirror(cluster.nodes());
    this.startMillis = startMillis;
    this.lastMillis = startMillis;
  }

  MigMirror mig() {
    return mig;
  }

  private int q(JobRun r) {
    Integer i = index.get(r.job.queue());
    if (i == null) {
      throw new IllegalArgumentException("job " + r.job.id() + ": queue '" + r.job.queue() + "' is not a leaf of the "
          + "cluster's queues " + queues);
    }
    return i;
  }

  /** Integrates the state from the last cycle up to {@code t}. */
  void advanceTo(long t) {
    long dt = t - lastMillis;
    if (dt <= 0) {
      return;
    }
    busyUnitMs += (double) busyUnits * dt;
    heldUnitMs += (double) heldUnits * dt;
    partialUnitMs += (double) (heldUnits - busyUnits) * dt;
    if (mig.any()) {
      heldSliceMs += (double) mig.heldSlices() * dt;
      if (waitingMigJobs > 0) {
        strandedSliceMs += (double) mig.unheldOnBusyGpus() * dt;
      }
    }
    int n = 0;
    double devSum = 0;
    double[] ratios = new double[queues.size()];
    int rn = 0;
    for (int i = 0; i < queues.size(); i++) {
      shareMs[i] += share[i] * dt;
      fairMs[i] += fair[i] * dt;
      double dev = Math.abs(share[i] - fair[i]);
      devMs[i] += dev * dt;
      if (demanding[i]) {
        n++;
        devSum += dev;
        maxDeviation = Math.max(maxDeviation, dev);
        if (fair[i] > 0) {
          ratios[rn++] = share[i] / fair[i];
        }
      }
    }
    if (n > 0) {
      contendedMs += dt;
      meanDevMs += devSum / n * dt;
      jainMs += Stats.jain(Arrays.copyOf(ratios, rn)) * dt;
    }
    lastMillis = t;
  }

  void submitted(JobRun r) {
    int i = q(r);
    pending[i] = pending[i].plus(r.unitDemand.times(r.members.count()));
    waitingJobs++;
    if (r.mig) {
      waitingMigJobs++;
    }
    submitted++;
    submittedPerQueue[i]++;
    durationSum += r.job.durationMillis() / 1000.0;
    gpuMs += (double) r.job.gpuMilliTotal() / 1000.0 * r.job.durationMillis();
    lastSubmitMillis = Math.max(lastSubmitMillis, r.job.submitMillis());
    dirty = true;
  }

  void allocated(JobRun r, ResourceVector charge) {
    int i = q(r);
    held[i] = held[i].plus(charge);
    pending[i] = pending[i].minus(r.unitDemand);
    heldUnits += charge.gpuUnits();
    if (r.allocationIds.size() == 1 && r.members.count() > 1) {
      jobsEverPartial++; // Counted now; un-counted in started() if the whole gang came in the same cycle.
    }
    dirty = true;
  }

  void started(JobRun r, long t) {
    busyUnits += r.held().gpuUnits();
    waitingJobs--;
    if (r.mig) {
      waitingMigJobs--;
    }
    if (r.members.count() > 1 && r.allocatedAt.get(0) == t) {
      jobsEverPartial--;
    }
    dirty = true;
  }

  void ended(JobRun r, long t) {
    int i = q(r);
    ResourceVector h = r.held();
    held[i] = held[i].minus(h);
    busyUnits -= h.gpuUnits();
    heldUnits -= h.gpuUnits();
    // Queueing delay as the reference baselines count it: the first wait and every wait after a preemption.
    finished.add(new double[] {i, (r.startMillis - r.job.submitMillis() + r.preemptedWaitMillis) / 1000.0,
        (t - r.job.submitMillis()) / 1000.0});
    dirty = true;
  }

  /** A running elastic job grew by a container of {@code charge}: busy from now. */
  void grew(ResourceVector charge) {
    busyUnits += charge.gpuUnits();
    dirty = true;
  }

  /** A running elastic job gave back a container of {@code charge} (it asks for it again as growth). */
  void shrank(JobRun r, ResourceVector charge) {
    int i = q(r);
    held[i] = held[i].minus(charge);
    busyUnits -= charge.gpuUnits();
    heldUnits -= charge.gpuUnits();
    pending[i] = pending[i].plus(r.unitDemand);
    dirty = true;
  }

  /** The job was preempted: its containers are gone and it waits again for all of them. Before they are forgotten. */
  void preempted(JobRun r) {
    int i = q(r);
    ResourceVector h = r.held();
    held[i] = held[i].minus(h);
    busyUnits -= h.gpuUnits();
    heldUnits -= h.gpuUnits();
    pending[i] = pending[i].plus(r.unitDemand.times(r.members.count()));
    waitingJobs++;
    if (r.mig) {
      waitingMigJobs++;
    }
    dirty = true;
  }

  void rejected(JobRun r) {
    int i = q(r);
    ResourceVector h = r.held();
    held[i] = held[i].minus(h);
    heldUnits -= h.gpuUnits();
    pending[i] = pending[i].minus(r.unitDemand.times(r.members.count() - r.allocationIds.size()));
    waitingJobs--;
    if (r.mig) {
      waitingMigJobs--;
    }
    rejected++;
    dirty = true;
  }

  void repartitioned() {
    repartitions++;
  }

  /** After each engine cycle: fair shares for the new demand, and a time-series point. */
  void afterCycle() {
    engineCycles++;
    if (!dirty) {
      return;
    }
    dirty = false;
    Map<String, ResourceVector> demand = new LinkedHashMap<>();
    for (int i = 0; i < queues.size(); i++) {
      ResourceVector d = held[i].plus(pending[i]);
      demand.put(paths.get(i), d);
      demanding[i] = !d.isZero();
    }
    Map<String, QueueShare> shares = FairShareCalculator.compute(tree, capacity, demand);
    for (int i = 0; i < queues.size(); i++) {
      share[i] = held[i].dominantShare(capacity);
      fair[i] = shares.get(paths.get(i)).fairShare().dominantShare(capacity);
    }
    record();
  }

  private void record() {
    if (points > 0 && times[points - 1] == lastMillis) {
      points--;
    }
    if (points == times.length) {
      int cap = points * 2;
      times = Arrays.copyOf(times, cap);
      busySeries = Arrays.copyOf(busySeries, cap);
      heldSeries = Arrays.copyOf(heldSeries, cap);
      waitingSeries = Arrays.copyOf(waitingSeries, cap);
      for (int i = 0; i < queues.size(); i++) {
        queueSeries[i] = Arrays.copyOf(queueSeries[i], cap);
        fairSeries[i] = Arrays.copyOf(fairSeries[i], cap);
      }
    }
    double gpus = capacityGpuUnits / ResourceVector.GPU_UNITS;
    times[points] = lastMillis;
    busySeries[points] = busyUnits / (double) ResourceVector.GPU_UNITS;
    heldSeries[points] = heldUnits / (double) ResourceVector.GPU_UNITS;
    waitingSeries[points] = waitingJobs;
    for (int i = 0; i < queues.size(); i++) {
      queueSeries[i][points] = share[i] * gpus;
      fairSeries[i][points] = fair[i] * gpus;
    }
    points++;
  }

  RunResult finish(SimPolicy policy, long endMillis, int unfinished, int partialAtEnd, SimOptions options,
      RunResult.Preemption preemption, RunResult.StartAccuracy startAccuracy) {
    advanceTo(endMillis);
    double spanMs = Math.max(1, endMillis - startMillis);
    double capUnits = Math.max(1, capacityGpuUnits);
    double[] delays = new double[finished.size()];
    double[] jcts = new double[finished.size()];
    int waited = 0;
    List<List<double[]>> perQueue = new ArrayList<>();
    for (int i = 0; i < queues.size(); i++) {
      perQueue.add(new ArrayList<>());
    }
    for (int k = 0; k < finished.size(); k++) {
      double[] f = finished.get(k);
      delays[k] = f[1];
      jcts[k] = f[2];
      if (f[1] > 0) {
        waited++;
      }
      perQueue.get((int) f[0]).add(f);
    }
    List<QueueResult> qs = new ArrayList<>();
    for (int i = 0; i < queues.size(); i++) {
      List<double[]> fs = perQueue.get(i);
      double[] d = new double[fs.size()];
      double[] j = new double[fs.size()];
      for (int k = 0; k < fs.size(); k++) {
        d[k] = fs.get(k)[1];
        j[k] = fs.get(k)[2];
      }
      qs.add(new QueueResult(queues.get(i), submittedPerQueue[i], fs.size(), Distribution.of(j), Distribution.of(d),
          guaranteeShare[i], shareMs[i] / spanMs, fairMs[i] / spanMs, devMs[i] / spanMs));
    }
    double gpus = capacityGpuUnits / ResourceVector.GPU_UNITS;
    int buckets = options.timeSeriesPoints();
    Map<String, double[]> queueGpus = new LinkedHashMap<>();
    Map<String, double[]> queueFair = new LinkedHashMap<>();
    for (int i = 0; i < queues.size(); i++) {
      queueGpus.put(queues.get(i), Stats.downsample(times, queueSeries[i], points, startMillis, endMillis, buckets));
      queueFair.put(queues.get(i), Stats.downsample(times, fairSeries[i], points, startMillis, endMillis, buckets));
    }
    TimeSeries series = new TimeSeries(Math.floorDiv(startMillis, 1000), (endMillis - startMillis) / 1000.0 / buckets,
        Stats.downsample(times, busySeries, points, startMillis, endMillis, buckets),
        Stats.downsample(times, heldSeries, points, startMillis, endMillis, buckets),
        Stats.downsample(times, waitingSeries, points, startMillis, endMillis, buckets), queueGpus, queueFair);
    double contended = Math.max(1, contendedMs);
    double submitSpanMs = Math.max(1, lastSubmitMillis - startMillis);
    return new RunResult(policy.name(), policy.implementation(),
        new Jobs(submitted, finished.size(), rejected, unfinished, engineCycles),
        Distribution.of(jcts), Distribution.of(delays), finished.isEmpty() ? 0 : (double) waited / finished.size(),
        Stats.percentiles(delays), Stats.percentiles(jcts),
        new Utilisation(busyUnitMs / (capUnits * spanMs), heldUnitMs / (capUnits * spanMs), spanMs / 1000.0,
            busyUnitMs / ResourceVector.GPU_UNITS / 3_600_000.0),
        new Fairness(maxDeviation, meanDevMs / contended, contendedMs == 0 ? 1 : jainMs / contended,
            contendedMs / 1000.0),
        new Gangs(partialUnitMs / ResourceVector.GPU_UNITS / 3_600_000.0, jobsEverPartial, partialAtEnd),
        new Mig(mig.totalSlices(), strandedSliceMs / spanMs, heldSliceMs / spanMs, repartitions),
        new Bounds(submitted == 0 ? 0 : durationSum / submitted, gpuMs / 1000.0 / Math.max(1, gpus),
            gpuMs / (Math.max(1, gpus) * submitSpanMs)),
        preemption, qs, series, startAccuracy);
  }
}
