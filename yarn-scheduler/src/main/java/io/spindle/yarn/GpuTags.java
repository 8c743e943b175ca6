package io.spindle.yarn;

import java.util.Locale;

/**
 * The GPU wishes of an application's tags, applied to each of its GPU asks ({@link GpuAskShapes}).
 *
 * <ul>
 *   <li>{@code spindle.gpu.models=A100-80GB|H100-80GB}: GPU models that serve its containers, one of them each: whole
 *       GPUs, MIG instances and shares alike. Names as the catalog has them or as nvidia-smi prints them, in any case
 *       (YARN lower-cases tags)
 *   <li>{@code spindle.gpu.isolation=any|mps|mig}: what a share of a GPU ({@code nvidia.com/gpu-milli},
 *       {@code nvidia.com/gpu-mem-mb}) runs on: a time-sliced or MPS GPU ({@code any}, the default), an MPS GPU only
 *       ({@code mps}), or its own MIG instance, the smallest that covers it ({@code mig})
 * </ul>
 *
 * @param models the accepted models as written ({@code |}-separated), or {@code null} for any
 * @param isolation {@code any}, {@code mps} or {@code mig}
 */
public record GpuTags(String models, String isolation) {

  public static final String MODELS = "spindle.gpu.models";
  public static final String ISOLATION = "spindle.gpu.isolation";
  public static final String ANY = "any";
  public static final String MPS = "mps";
  public static final String MIG = "mig";

  public static final GpuTags NONE = new GpuTags(null, ANY);

  public GpuTags {
    isolation = isolation == null ? ANY : isolation;
  }

  /** Whether shares are to become MIG instances. */
  public boolean mig() {
    return MIG.equals(isolation);
  }

  GpuTags withModels(String raw, String value) {
    if (value.isEmpty()) {
      throw new IllegalArgumentException("application tag '" + raw + "' names no GPU model");
    }
    for (String name : value.split("\\|", -1)) {
      if (name.isBlank()) {
        throw new IllegalArgumentException("application tag '" + raw + "' has an empty model name; write models as"
            + " A100-80GB|H100-80GB");
      }
    }
    return new GpuTags(value, isolation);
  }

  GpuTags withIsolation(String raw, String value) {
    String v = value.toLowerCase(Locale.ROOT);
    if (!v.equals(ANY) && !v.equals(MPS) && !v.equals(MIG)) {
      throw new IllegalArgumentException("application tag '" + raw + "' is " + ISOLATION + "=any (a time-sliced or"
          + " MPS GPU), =mps (an MPS GPU only) or =mig (the smallest MIG instance that covers the share)");
    }
    return new GpuTags(models, v);
  }
}
