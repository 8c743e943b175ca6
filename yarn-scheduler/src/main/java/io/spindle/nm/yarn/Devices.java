package io.spindle.nm.yarn;

import io.spindle.nm.DiscoveredGpu;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.Device;

/**
 * How Spindle's GPUs and MIG slots look to YARN's device framework. The framework keeps devices by value (id,
 * device path, major:minor, bus id) and persists assignments across NodeManager restarts, so every field here is
 * stable while the hardware is: ids come from GPU indices and memory-slice starts, never from UUIDs that change
 * when an instance is re-created.
 */
final class Devices {

  /** The character-device major of {@code /dev/nvidia<minor>}, fixed by NVIDIA's driver. */
  static final int NVIDIA_MAJOR = 195;
  /** A MIG slot's id is {@code gpuIndex * SLOT_STRIDE + start}: GPU 3's instance at memory slice 4 is 304. */
  static final int SLOT_STRIDE = 100;
  /** A share device's id is {@code gpuIndex * SHARE_STRIDE + slot}, slot 0..999: GPU 2's slot 17 is 2017. */
  static final int SHARE_STRIDE = 1000;

  private Devices() {}

  /** A whole GPU: id = index; the device node lets the framework's cgroup isolation deny it to other containers. */
  static Device wholeGpu(DiscoveredGpu gpu) {
    Device.Builder b = Device.Builder.newInstance()
        .setId(gpu.index())
        .setBusID(gpu.busId())
        .setHealthy(true)
        .setStatus(gpu.uuid() + " " + gpu.model().name() + " island " + gpu.nvlinkIsland());
    if (gpu.minorNumber() >= 0) {
      b.setDevPath("/dev/nvidia" + gpu.minorNumber()).setMajorNumber(NVIDIA_MAJOR).setMinorNumber(gpu.minorNumber());
    }
    return b.build();
  }

  /**
   * A place a MIG instance of one profile can occupy: a GPU and a legal first memory slice. It has no device node
   * of its own here (MIG access goes through {@code /dev/nvidia-caps}), so the framework does not isolate it.
   */
  static Device migSlot(DiscoveredGpu gpu, String profileName, int start) {
    return Device.Builder.newInstance()
        .setId(gpu.index() * SLOT_STRIDE + start)
        .setBusID(gpu.busId())
        .setHealthy(true)
        .setStatus("GPU " + gpu.index() + " " + profileName + "@" + start)
        .build();
  }

  /**
   * One thousandth of a shared GPU. Like a MIG slot it carries no device node: the framework's cgroup isolation
   * denies every device node of a plugin that a container was not given, and the other 999 thousandths of the
   * container's own GPU would name that GPU's {@code /dev/nvidia<minor>}. For the same reason the GPU and slot are
   * encoded in the id only, not in major:minor numbers, which the framework would take for a device to deny.
   */
  static Device shareSlot(DiscoveredGpu gpu, int slot) {
    return Device.Builder.newInstance()
        .setId(gpu.index() * SHARE_STRIDE + slot)
        .setBusID(gpu.busId())
        .setHealthy(true)
        .setStatus("GPU " + gpu.index() + " " + gpu.sharing() + " share " + slot)
        .build();
  }

  static int gpuIndexOfShare(Device share) {
    return share.getId() / SHARE_STRIDE;
  }

  static int gpuIndexOfSlot(Device slot) {
    return slot.getId() / SLOT_STRIDE;
  }

  static int startOfSlot(Device slot) {
    return slot.getId() % SLOT_STRIDE;
  }
}
