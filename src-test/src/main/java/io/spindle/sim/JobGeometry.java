package io.spindle.sim;

import io.spindle.bench.OpenbPackingBenchmark;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Resources;
import java.util.Comparator;

/**
 * Splits a job into containers the way a GPU job asks YARN for them: a job that fits on one node is one container
 * with all its GPUs (one executor on one machine, as the HeliosArtifact rules put any job of up to 8 GPUs on one
 * node); a larger job is {@code n / m} containers of {@code m} GPUs, {@code m} the largest divisor of {@code n}
 * that a node holds (Philly's 16..128-GPU jobs: whole 8-GPU nodes). With {@code memberGpus > 0} every container
 * has that many GPUs instead (one worker per GPU, as distributed-training launchers often ask).
 *
 * <p>On a cluster with MIG, a fractional request ({@code gpuMilli < 1000}) asks for the smallest profile whose
 * charge covers it (the OpenB benchmark's mapping); where no GPU serves whole GPUs (every GPU in MIG mode), a
 * whole-GPU request asks for that many instances of the full-GPU profile in one container. Without MIG a
 * fractional request takes a whole GPU.
 */
public final class JobGeometry {

  private final int gpusPerNode;
  private final int memberGpus;
  private final GpuModel migModel;
  private final boolean wholeGpus;

  public JobGeometry(ClusterSpec cluster, int memberGpus) {
    this.gpusPerNode = Math.max(1, cluster.maxGpusPerNode());
    this.memberGpus = memberGpus;
    this.migModel = cluster.firstMigModel();
    this.wholeGpus = cluster.hasWholeGpus();
  }

  public int gpusPerNode() {
    return gpusPerNode;
  }

  public Members of(SimJob job) {
    if (job.gpus() == 0) {
      return new Members(1, Resources.of(job.memoryMb(), Math.toIntExact(job.vcores())));
    }
    if (migModel != null && (job.fractional() || !wholeGpus)) {
      Resources base = Resources.of(job.memoryMb(), Math.toIntExact(job.vcores()));
      MigProfile p = job.fractional() ? OpenbPackingBenchmark.profileFor(job.gpuMilli(), migModel) : fullProfile();
      return new Members(1, withModel(base.withMig(p.name(), job.gpus()), job));
    }
    int per = memberGpus > 0 ? Math.min(memberGpus, job.gpus()) : largestDivisorAtMost(job.gpus(), gpusPerNode);
    int count = job.gpus() / per;
    if (count * per != job.gpus()) {
      per = 1;
      count = job.gpus();
    }
    Resources shape = Resources.of(ceilDiv(job.memoryMb(), count), Math.toIntExact(ceilDiv(job.vcores(), count)))
        .withGpus(per);
    return new Members(count, withModel(shape, job));
  }

  private MigProfile fullProfile() {
    return migModel.profiles().stream().filter(p -> !p.mediaExtension())
        .max(Comparator.comparingLong(MigProfile::gpuUnits)).orElseThrow();
  }

  private static Resources withModel(Resources r, SimJob job) {
    return job.gpuModel() == null ? r : r.withGpuModel(job.gpuModel());
  }

  static int largestDivisorAtMost(int n, int max) {
    for (int d = Math.min(n, max); d > 1; d--) {
      if (n % d == 0) {
        return d;
      }
    }
    return 1;
  }

  private static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }
}
