package io.spindle.core.model;

/**
 * One GPU of a node.
 *
 * @param index the device index on its node (what {@code nvidia-smi -L} calls GPU n)
 * @param nvlinkIsland GPUs with the same island id are joined by NVLink (an NVSwitch board is one island of 8;
 *     a PCIe server with bridged pairs has one island per pair)
 * @param migEnabled MIG mode: such a GPU serves only MIG instances, never whole-GPU requests
 * @param migLayout the MIG instances that exist on the GPU, as its NodeManager reported them; {@code null} unless
 *     {@code migEnabled}. Only instances that exist can be handed to containers; the scheduler changes a layout
 *     by asking the node to re-partition an idle GPU.
 * @param sharing how the GPU may be shared below a whole GPU when it is not in MIG mode ({@link GpuSharing#EXCLUSIVE}
 *     for MIG-mode GPUs, whose instances are their sharing)
 */
public record Gpu(int index, GpuModel model, int nvlinkIsland, boolean migEnabled, MigLayout migLayout,
    GpuSharing sharing) {

  public Gpu {
    sharing = sharing == null ? GpuSharing.EXCLUSIVE : sharing;
    InvalidInputException.requireNonNegative("gpu.index", index);
    InvalidInputException.requireNonNegative("gpu.nvlinkIsland", nvlinkIsland);
    if (model == null) {
      throw new InvalidInputException("gpu.model", null, "every GPU needs a model");
    }
    if (migEnabled && !model.migCapable()) {
      throw new InvalidInputException("gpu.migEnabled", model.name(), "GPU model does not support MIG");
    }
    if (migEnabled && migLayout == null) {
      migLayout = MigLayout.empty(model);
    }
    if (!migEnabled && migLayout != null) {
      throw new InvalidInputException("gpu.migLayout", migLayout, "a GPU without MIG mode has no MIG layout");
    }
    if (migEnabled && sharing.shares()) {
      throw new InvalidInputException("gpu.sharing", sharing,
          "a MIG-mode GPU is shared by its MIG instances; its sharing mode must be exclusive");
    }
    if (migLayout != null && !migLayout.model().equals(model)) {
      throw new InvalidInputException("gpu.migLayout", migLayout, "layout is for another model than " + model.name());
    }
  }

  /** A GPU without MIG instances: whole, or in MIG mode with nothing created yet. */
  public Gpu(int index, GpuModel model, int nvlinkIsland, boolean migEnabled) {
    this(index, model, nvlinkIsland, migEnabled, null, GpuSharing.EXCLUSIVE);
  }

  public Gpu(int index, GpuModel model, int nvlinkIsland, boolean migEnabled, MigLayout migLayout) {
    this(index, model, nvlinkIsland, migEnabled, migLayout, GpuSharing.EXCLUSIVE);
  }

  /** A MIG-mode GPU with these instances. */
  public static Gpu mig(int index, GpuModel model, int nvlinkIsland, MigLayout layout) {
    return new Gpu(index, model, nvlinkIsland, true, layout, GpuSharing.EXCLUSIVE);
  }

  /** A GPU outside MIG mode, shared as {@code sharing} says. */
  public static Gpu shared(int index, GpuModel model, int nvlinkIsland, GpuSharing sharing) {
    return new Gpu(index, model, nvlinkIsland, false, null, sharing);
  }

  /** Whether containers may take shares of this GPU. */
  public boolean sharesBelowWhole() {
    return !migEnabled && sharing.shares();
  }
}
