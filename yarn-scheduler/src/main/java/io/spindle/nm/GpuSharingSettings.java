package io.spindle.nm;

import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.InvalidInputException;
import java.util.Map;
import java.util.TreeMap;

/**
 * How the admin wants this node's GPUs shared: one mode for the node and, optionally, a mode per GPU index. It only
 * applies to GPUs outside MIG mode; discovery reports a MIG-mode GPU as exclusive whatever is configured, because
 * MIG mode is hardware state found at run time and its instances are already how such a GPU is shared.
 *
 * @param nodeMode the mode of every GPU not named in {@code perGpu}
 * @param perGpu GPU index to mode
 */
public record GpuSharingSettings(GpuSharing nodeMode, Map<Integer, GpuSharing> perGpu) {

  private static final GpuSharingSettings EXCLUSIVE = new GpuSharingSettings(GpuSharing.EXCLUSIVE, Map.of());

  public GpuSharingSettings {
    nodeMode = nodeMode == null ? GpuSharing.EXCLUSIVE : nodeMode;
    perGpu = Map.copyOf(perGpu);
  }

  /** Whole GPUs only, as before sharing existed. */
  public static GpuSharingSettings exclusive() {
    return EXCLUSIVE;
  }

  /**
   * Parses the two configuration values. Every error names the key and the value, because it stops the NodeManager
   * and the admin has to find the line to fix.
   *
   * @param nodeKey the key of the node's mode, for messages
   * @param nodeText {@code exclusive}, {@code time-slice} or {@code mps}
   * @param perGpuKey the key of the per-GPU modes, for messages
   * @param perGpuText comma-separated {@code <index>:<mode>} entries; blank for none
   */
  public static GpuSharingSettings parse(String nodeKey, String nodeText, String perGpuKey, String perGpuText) {
    GpuSharing node = mode(nodeKey, nodeText == null || nodeText.isBlank() ? "exclusive" : nodeText);
    Map<Integer, GpuSharing> perGpu = new TreeMap<>();
    if (perGpuText != null && !perGpuText.isBlank()) {
      for (String entry : perGpuText.split(",")) {
        String e = entry.strip();
        int colon = e.indexOf(':');
        if (colon <= 0 || colon == e.length() - 1) {
          throw new IllegalArgumentException(perGpuKey + "=" + perGpuText + ": entry '" + e
              + "' is not <gpu index>:<mode>, e.g. 0:mps,1:time-slice");
        }
        int index;
        try {
          index = Integer.parseInt(e.substring(0, colon).strip());
        } catch (NumberFormatException x) {
          index = -1;
        }
        if (index < 0) {
          throw new IllegalArgumentException(perGpuKey + "=" + perGpuText + ": '" + e.substring(0, colon).strip()
              + "' is not a GPU index (0, 1, ... as nvidia-smi -L numbers them)");
        }
        GpuSharing mode = mode(perGpuKey + " (GPU " + index + ")", e.substring(colon + 1));
        if (perGpu.put(index, mode) != null) {
          throw new IllegalArgumentException(perGpuKey + "=" + perGpuText + ": GPU " + index + " is named twice");
        }
      }
    }
    return new GpuSharingSettings(node, perGpu);
  }

  private static GpuSharing mode(String key, String text) {
    try {
      return GpuSharing.parse(key, text);
    } catch (InvalidInputException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  /** The configured mode of a GPU outside MIG mode. */
  public GpuSharing modeOf(int gpuIndex) {
    return perGpu.getOrDefault(gpuIndex, nodeMode);
  }
}
