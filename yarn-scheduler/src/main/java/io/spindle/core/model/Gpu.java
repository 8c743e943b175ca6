package io.spindle.core.model;

/**
 * One GPU of a node.
 *
 * @param index the device index on its node (what {@code nvidia-smi -L} calls GPU n)
 * @param nvlinkIsland GPUs with the same island id are joined by NVLink (an NVSwitch board is one island of 8;
 *     a PCIe server with bridged pairs has one island per pair)
 * @param migEnabled MIG mode: such a GPU serves only MIG instances, never whole-GPU requests
 */
public record Gpu(int index, GpuModel model, int nvlinkIsland, boolean migEnabled) {

  public Gpu {
    InvalidInputException.requireNonNegative("gpu.index", index);
    InvalidInputException.requireNonNegative("gpu.nvlinkIsland", nvlinkIsland);
    if (model == null) {
      throw new InvalidInputException("gpu.model", null, "every GPU needs a model");
    }
    if (migEnabled && !model.migCapable()) {
      throw new InvalidInputException("gpu.migEnabled", model.name(), "GPU model does not support MIG");
    }
  }
}
