package io.spindle.sim.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The other work on the cluster: jobs drawn with replacement from a trace's mix of (GPUs, run time) — the Philly
 * trace by default — arriving as a Poisson process at the rate that offers the load asked for, after an initial set
 * that fills it at once (so the cluster is busy from the first hour rather than after days of warm-up). A job of at
 * most one node's GPUs is one container; a larger one a gang of whole nodes (its GPUs rounded up to a whole number of
 * nodes). {@code gpuScale} multiplies each job's GPUs, to keep the number of jobs (and the run time) moderate on a
 * cluster many times Philly's size while keeping its mix of run times.
 */
final class BackgroundWork {

  /** One row of the mix. */
  record Sample(int gpus, long durationMillis) {}

  /** One job as it will be asked for. */
  record Job(int members, int gpusPerMember, long durationMillis) {
    long gpuMillis() {
      return (long) members * gpusPerMember * durationMillis;
    }
  }

  private final List<Sample> mix;
  private final SplittableRandom random;
  private final int gpusPerNode;
  private final int gpuScale;
  private final double meanGpuMillis;
  /** Running sums of the mix's run times: what length-biased draws search. */
  private final double[] cumulativeMillis;

  BackgroundWork(List<Sample> mix, SplittableRandom random, int gpusPerNode, int gpuScale) {
    this.mix = List.copyOf(mix);
    this.random = random;
    this.gpusPerNode = gpusPerNode;
    this.gpuScale = gpuScale;
    double sum = 0;
    for (Sample s : mix) {
      sum += (double) shape(s).gpuMillis();
    }
    this.meanGpuMillis = mix.isEmpty() ? 0 : sum / mix.size();
    this.cumulativeMillis = new double[mix.size()];
    double c = 0;
    for (int i = 0; i < mix.size(); i++) {
      c += mix.get(i).durationMillis();
      cumulativeMillis[i] = c;
    }
  }

  /** Reads a Philly-style trace: columns {@code duration} (seconds) and {@code num_gpus}; jobs without GPUs dropped. */
  static List<Sample> philly(Path csv) {
    List<String> lines;
    try {
      lines = Files.readAllLines(csv);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<String> header = List.of(lines.get(0).split(","));
    int dur = header.indexOf("duration");
    int gpus = header.indexOf("num_gpus");
    if (dur < 0 || gpus < 0) {
      throw new IllegalArgumentException(csv + ": needs columns duration and num_gpus");
    }
    List<Sample> out = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      String[] f = line.split(",");
      int g = (int) Math.round(Double.parseDouble(f[gpus]));
      long d = Math.round(Double.parseDouble(f[dur]) * 1000);
      if (g > 0 && d > 0) {
        out.add(new Sample(g, d));
      }
    }
    return out;
  }

  Job next() {
    return shape(mix.get(random.nextInt(mix.size())));
  }

  /**
   * Jobs that together take about {@code gpus} GPUs, all submitted at the start: the work a stationary cluster would be
   * running at a random instant. Such a job is drawn in proportion to its run time (a long job is more likely to be
   * caught running) and has a uniform share of its run time left.
   */
  List<Job> initial(double gpus) {
    List<Job> out = new ArrayList<>();
    double taken = 0;
    while (!mix.isEmpty() && taken < gpus) {
      double u = random.nextDouble() * cumulativeMillis[cumulativeMillis.length - 1];
      int i = java.util.Arrays.binarySearch(cumulativeMillis, u);
      Job full = shape(mix.get(i >= 0 ? i : Math.min(mix.size() - 1, -i - 1)));
      Job j = new Job(full.members(), full.gpusPerMember(),
          Math.max(1_000, Math.round(full.durationMillis() * random.nextDouble())));
      out.add(j);
      taken += j.members() * j.gpusPerMember();
    }
    return out;
  }

  /** Arrivals per millisecond that offer {@code gpus} GPUs busy on average. */
  double arrivalsPerMillis(double gpus) {
    return meanGpuMillis == 0 ? 0 : gpus / meanGpuMillis;
  }

  private Job shape(Sample s) {
    int g = s.gpus() * gpuScale;
    if (g <= gpusPerNode) {
      return new Job(1, g, s.durationMillis());
    }
    return new Job((g + gpusPerNode - 1) / gpusPerNode, gpusPerNode, s.durationMillis());
  }
}
