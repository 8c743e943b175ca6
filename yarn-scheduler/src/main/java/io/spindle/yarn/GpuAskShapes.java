package io.spindle.yarn;

import io.spindle.core.model.GpuIsolation;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuModelSet;
import io.spindle.core.model.GpuResourceNames;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Resources;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.exceptions.ResourceNotFoundException;

/**
 * Applies an application's GPU tags ({@link GpuTags}) to the shape of one of its GPU asks: the accepted models to
 * whole GPUs, MIG instances and shares alike, the isolation to shares. Asks without GPUs (the AM's) are left as they
 * are: a model or an isolation means nothing to them.
 */
final class GpuAskShapes {

  private final GpuModelCatalog catalog;

  GpuAskShapes(GpuModelCatalog catalog) {
    this.catalog = catalog;
  }

  Resources apply(Resources shape, GpuTags tags) {
    if (!shape.wantsGpu()) {
      return shape;
    }
    Resources s = tags.models() == null ? shape : shape.withModels(models(tags.models()));
    if (!s.wantsShare()) {
      return s;
    }
    if (tags.mig()) {
      return asMig(s);
    }
    return tags.isolation().equals(GpuTags.MPS) ? s.withShare(s.gpuMilli(), s.gpuMemoryMb(), GpuIsolation.MPS) : s;
  }

  /**
   * The set as the catalog names its models (YARN lower-cases tags; nvidia-smi's names are accepted too). A name the
   * catalog does not know is kept as written, for the engine to refuse with the list of known models.
   */
  GpuModelSet models(String text) {
    List<String> names = new ArrayList<>();
    for (String n : text.split("\\|", -1)) {
      names.add(catalog.find(n.strip()).map(GpuModel::name).orElse(n.strip()));
    }
    return new GpuModelSet(names);
  }

  /**
   * The share as one instance of the smallest MIG profile that covers both its compute and its memory on the
   * accepted models. Profiles are named by memory, so models of different sizes name that instance differently:
   * then the application must name its model, since one request asks for one profile.
   */
  Resources asMig(Resources share) {
    Map<String, List<String>> modelsByProfile = new LinkedHashMap<>();
    for (GpuModel m : catalog.models()) {
      if (m.migCapable() && share.models().accepts(m.name())) {
        smallestCovering(m, share).ifPresent(p -> modelsByProfile.computeIfAbsent(p.name(), k -> new ArrayList<>())
            .add(m.name()));
      }
    }
    String wanted = describe(share);
    if (modelsByProfile.isEmpty()) {
      throw new IllegalArgumentException(GpuTags.ISOLATION + "=" + GpuTags.MIG + ": no MIG profile of "
          + (share.models().isAny() ? "any GPU model" : share.models()) + " covers " + wanted);
    }
    if (modelsByProfile.size() > 1) {
      StringBuilder each = new StringBuilder();
      modelsByProfile.forEach((p, ms) -> each.append(each.length() == 0 ? "" : ", ").append(p).append(" on ")
          .append(String.join("|", ms)));
      throw new IllegalArgumentException(GpuTags.ISOLATION + "=" + GpuTags.MIG + ": the smallest MIG profile that"
          + " covers " + wanted + " differs by GPU model (" + each + "); name one model with " + GpuTags.MODELS
          + "=<model>");
    }
    return share.withMig(modelsByProfile.keySet().iterator().next(), 1);
  }

  /** The profile of fewest GPU units (then fewest slices) with at least the share's compute and memory. */
  static Optional<MigProfile> smallestCovering(GpuModel model, Resources share) {
    return model.profiles().stream()
        .filter(p -> !p.mediaExtension())
        .filter(p -> (long) p.computeSlices() * Resources.MILLI_PER_GPU
            >= (long) share.gpuMilli() * model.computeSlices())
        .filter(p -> p.memorySlices() * model.memoryMb() / model.memorySlices() >= share.gpuMemoryMb())
        .min(Comparator.comparingLong(MigProfile::gpuUnits).thenComparingInt(MigProfile::memorySlices)
            .thenComparingInt(MigProfile::computeSlices));
  }

  private static String describe(Resources share) {
    String m = share.gpuMilli() > 0 ? GpuResourceNames.GPU_MILLI + "=" + share.gpuMilli() : "";
    String mem = share.gpuMemoryMb() > 0 ? GpuResourceNames.GPU_MEMORY_MB + "=" + share.gpuMemoryMb() : "";
    return m.isEmpty() ? mem : mem.isEmpty() ? m : m + " and " + mem;
  }

  /**
   * What a container placed for {@code shape} carries to its NodeManager: the ask itself, except for
   * <ul>
   *   <li>a share turned into a MIG instance ({@code isolation=mig}), which carries the instance's resource instead of
   *       the share's. The NodeManager's MIG plugin then hands it the instance, and YARN's node accounting takes the
   *       instance off the node that advertised it;
   *   <li>a share of GPU memory alone ({@code nvidia.com/gpu-mem-mb} without {@code nvidia.com/gpu-milli}), which also
   *       carries the compute it holds on {@code shareGpu}'s model ({@code Resources.shareMilli}): the NodeManager's
   *       shared-GPU plugin is asked only for {@code nvidia.com/gpu-milli}, so without it the container would get no
   *       GPU, and YARN's accounting takes that compute off the node as Spindle does.
   * </ul>
   * Where the cluster does not declare the resource type, the ask is kept.
   *
   * @param shareGpu the model of the GPU a share was placed on; {@code null} for other containers
   */
  static Resource containerResource(Resource asked, Resources shape, GpuModel shareGpu) {
    try {
      if (shape.wantsShare() && shape.gpuMilli() == 0 && shareGpu != null
          && asked.getResourceValue(GpuResourceNames.GPU_MILLI) == 0) {
        Resource r = Resource.newInstance(asked);
        r.setResourceValue(GpuResourceNames.GPU_MILLI, shape.shareMilli(shareGpu));
        return r;
      }
      if (!shape.wantsMig()) {
        return asked;
      }
      Resource r = Resource.newInstance(asked);
      boolean share = false;
      for (ResourceInformation info : asked.getResources()) {
        if (GpuResourceNames.isShare(info.getName()) && info.getValue() > 0) {
          r.setResourceValue(info.getName(), 0);
          share = true;
        }
      }
      if (!share) {
        return asked;
      }
      r.setResourceValue(GpuResourceNames.mig(shape.migProfile()), shape.migInstances());
      return r;
    } catch (ResourceNotFoundException e) {
      return asked;
    }
  }
}
