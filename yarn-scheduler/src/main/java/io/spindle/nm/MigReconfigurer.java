package io.spindle.nm;

import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Re-partitions one MIG GPU to a desired layout with {@code nvidia-smi mig}, and never touches an instance with
 * running work.
 *
 * <p>MIG creates and destroys instances beside running ones, so a GPU with work on it is changed too, as long as no
 * instance to destroy runs a process. Destroying also waits while a container was just given an instance of the GPU
 * (its process may not have started, and which instance it got is the device plugin's, not known here); creating
 * instances in free slices never waits.
 *
 * <p>Only the difference is applied: instances that are in both layouts stay (their UUIDs too); the others are
 * destroyed, compute instances first, then GPU instances, and the missing ones are created at their exact memory
 * slice with {@code -cgi <profile id>:<start> -C}, a profile tuple with a placement specifier (nvidia-smi's help:
 * "A profile tuple consists of a profile name or ID and an optional placement specifier, which consists of a colon
 * and a placement start index"). They are created largest first, the order in which placements never block each
 * other, so the result matches even on a driver that would ignore the placement. The GPU is then discovered again
 * and the layout nvidia-smi reports is the answer, not the layout that was asked for.
 */
public final class MigReconfigurer {

  private static final Logger LOG = LoggerFactory.getLogger(MigReconfigurer.class);

  /** What became of a request. */
  public enum Status {
    /** The GPU already had the layout; nothing was run. */
    UNCHANGED,
    /** The layout was applied and nvidia-smi reports it. */
    APPLIED,
    /**
     * Work runs on an instance the layout drops (or a container was just given an instance of the GPU and the layout
     * drops one); nothing was run. Try again later.
     */
    BUSY,
    /** The layout cannot be applied or applying it failed; {@code detail} says why. */
    FAILED
  }

  /**
   * @param layout the layout the GPU has now, as discovered after the attempt ({@code null} when the GPU could
   *     not be read at all)
   */
  public record Outcome(Status status, MigLayout layout, String detail) {}

  private final NvidiaSmi smi;
  private final GpuDiscovery discovery;

  public MigReconfigurer(NvidiaSmi smi, GpuDiscovery discovery) {
    this.smi = smi;
    this.discovery = discovery;
  }

  /**
   * Brings GPU {@code gpuIndex} to {@code desired}.
   *
   * @param reserved a container holds or was just given one of the GPU's instances (the caller's bookkeeping; a
   *     process on the GPU is seen by discovery)
   */
  public Outcome apply(int gpuIndex, MigLayout desired, boolean reserved) {
    Optional<DiscoveredGpu> found = discovery.discover().gpu(gpuIndex);
    if (found.isEmpty()) {
      return new Outcome(Status.FAILED, null, "GPU " + gpuIndex + " is not among the GPUs discovery advertises");
    }
    DiscoveredGpu gpu = found.get();
    MigLayout current = gpu.layout();
    if (!gpu.migEnabled()) {
      return new Outcome(Status.FAILED, current, "GPU " + gpuIndex + " has MIG mode disabled; enabling it needs a "
          + "GPU reset, which Spindle leaves to the administrator");
    }
    if (!desired.model().equals(gpu.model())) {
      return new Outcome(Status.FAILED, current, "desired layout is for " + desired.model().name() + " but GPU "
          + gpuIndex + " is " + gpu.model().name());
    }
    List<DiscoveredMigInstance> remove = gpu.migInstances().stream()
        .filter(i -> !i.usable() || !desired.placements().contains(i.placement())).toList();
    List<MigPlacement> keep = gpu.migInstances().stream().filter(i -> !remove.contains(i))
        .map(DiscoveredMigInstance::placement).toList();
    if (remove.isEmpty() && keep.size() == desired.placements().size()) {
      return new Outcome(Status.UNCHANGED, current, "GPU " + gpuIndex + " already has " + desired.placements());
    }
    List<MigPlacement> running = remove.stream().filter(DiscoveredMigInstance::busy)
        .map(DiscoveredMigInstance::placement).toList();
    if (!running.isEmpty() || (reserved && !remove.isEmpty())) {
      return new Outcome(Status.BUSY, current, "GPU " + gpuIndex + (running.isEmpty()
          ? " is held by a container that may not have started" : " runs work on " + running)
          + "; its layout " + current.placements() + " stays until the instances to destroy are idle");
    }
    LOG.info("GPU {}: re-partitioning {} -> {}", gpuIndex, current.placements(), desired.placements());
    String failure = destroy(gpuIndex, remove);
    if (failure == null) {
      failure = create(gpuIndex, desired.placements().stream().filter(p -> !keep.contains(p)).toList());
    }
    Optional<DiscoveredGpu> after = discovery.discover().gpu(gpuIndex);
    MigLayout result = after.map(DiscoveredGpu::layout).orElse(null);
    if (failure != null) {
      LOG.error("GPU {}: re-partitioning stopped: {}; nvidia-smi now reports {}", gpuIndex, failure,
          result == null ? "no usable layout" : result.placements());
      return new Outcome(Status.FAILED, result, failure);
    }
    if (!desired.equals(result)) {
      String why = "nvidia-smi reports " + (result == null ? "no usable layout" : result.placements())
          + " after applying " + desired.placements();
      LOG.error("GPU {}: {}", gpuIndex, why);
      return new Outcome(Status.FAILED, result, why);
    }
    LOG.info("GPU {}: now {}", gpuIndex, result.placements());
    return new Outcome(Status.APPLIED, result, "GPU " + gpuIndex + " re-partitioned to " + result.placements());
  }

  private String destroy(int gpuIndex, List<DiscoveredMigInstance> remove) {
    if (remove.isEmpty()) {
      return null;
    }
    String withCompute = remove.stream().filter(i -> i.computeInstanceId() >= 0)
        .map(i -> Integer.toString(i.gpuInstanceId())).collect(Collectors.joining(","));
    if (!withCompute.isEmpty()) {
      String failure = mig(List.of("mig", "-i", Integer.toString(gpuIndex), "-gi", withCompute, "-dci"));
      if (failure != null) {
        return failure;
      }
    }
    String all = remove.stream().map(i -> Integer.toString(i.gpuInstanceId())).collect(Collectors.joining(","));
    return mig(List.of("mig", "-i", Integer.toString(gpuIndex), "-gi", all, "-dgi"));
  }

  private String create(int gpuIndex, List<MigPlacement> add) {
    List<MigPlacement> order = new ArrayList<>(add);
    order.sort(Comparator.comparingInt((MigPlacement p) -> -p.profile().memorySlices())
        .thenComparingInt(MigPlacement::start));
    for (MigPlacement p : order) {
      String failure = mig(List.of("mig", "-i", Integer.toString(gpuIndex), "-cgi",
          p.profile().nvmlProfileId() + ":" + p.start(), "-C"));
      if (failure != null) {
        return failure;
      }
    }
    return null;
  }

  /** Runs one command; the failure as text, or {@code null} when it succeeded. */
  private String mig(List<String> args) {
    NvidiaSmi.Result result = smi.run(args);
    return result.ok() ? null : NvidiaSmi.describe(args) + " failed (" + result.failure() + ")";
  }
}
