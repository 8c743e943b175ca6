package io.spindle.nm.yarn;

import io.spindle.core.model.GpuHealth;
import io.spindle.nm.DiscoveredGpu;
import io.spindle.nm.GpuAllocator;
import io.spindle.nm.GpuInventory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.Device;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DeviceRegisterRequest;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DeviceRuntimeSpec;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.YarnRuntimeType;

/**
 * Whole GPUs (those without MIG mode) as the resource {@code nvidia.com/gpu}, chosen to keep NVLink islands whole.
 *
 * <p>Not {@code yarn.io/gpu}: Hadoop 3.5.0's {@code NodeResourceMonitorImpl.serviceInit} casts whatever plugin is
 * registered under {@code yarn.io/gpu} to its built-in {@code GpuResourcePlugin}, so a device plugin registered
 * under that name stops the NodeManager with a {@code ClassCastException}. {@code nvidia.com/gpu} is the name
 * Hadoop's own {@code NvidiaGPUPluginForRuntimeV2} uses for the same reason.
 */
public class NvidiaGpuPlugin extends SpindleDevicePlugin {

  public static final String RESOURCE_NAME = "nvidia.com/gpu";

  public NvidiaGpuPlugin() {}

  public NvidiaGpuPlugin(NodeGpus gpus, Configuration conf) {
    super(gpus, conf);
  }

  @Override
  protected String resourceName() {
    return RESOURCE_NAME;
  }

  @Override
  protected Set<Device> devices(GpuInventory inventory) {
    return inventory.wholeGpus().stream().map(Devices::wholeGpu).collect(Collectors.toCollection(TreeSet::new));
  }

  @Override
  protected Set<Device> choose(Set<Device> available, int count) {
    Map<Integer, Device> byIndex = available.stream().collect(Collectors.toMap(Device::getId, Function.identity()));
    List<DiscoveredGpu> free = gpus().inventory().wholeGpus().stream()
        .filter(g -> byIndex.containsKey(g.index())).toList();
    // The scheduler counts no failed GPU and gives gangs no degraded one; the node must not hand them out either.
    List<DiscoveredGpu> healthy = free.stream().filter(g -> gpus().health(g.index()).healthy()).toList();
    List<DiscoveredGpu> usable = healthy.size() >= count ? healthy : free.stream()
        .filter(g -> gpus().health(g.index()).state() != GpuHealth.State.FAILED).toList();
    return GpuAllocator.chooseWholeGpus(usable, count).stream().map(g -> byIndex.get(g.index()))
        .collect(Collectors.toCollection(TreeSet::new));
  }

  @Override
  protected List<String> uuids(Set<Device> allocated) {
    GpuInventory inventory = gpus().inventory();
    List<String> uuids = new ArrayList<>();
    for (Device d : allocated) {
      uuids.add(inventory.gpu(d.getId()).map(DiscoveredGpu::uuid).orElseThrow(() -> new IllegalStateException(
          "GPU " + d.getId() + " was allocated but is no longer discovered")));
    }
    return uuids;
  }

  @Override
  protected int gpuIndex(Device device) {
    return device.getId();
  }

  // Re-declared for the framework's declared-methods check; see SpindleDevicePlugin.

  @Override
  public DeviceRegisterRequest getRegisterRequestInfo() {
    return super.getRegisterRequestInfo();
  }

  @Override
  public Set<Device> getDevices() {
    return super.getDevices();
  }

  @Override
  public Set<Device> allocateDevices(Set<Device> available, int count, Map<String, String> env) {
    return super.allocateDevices(available, count, env);
  }

  @Override
  public DeviceRuntimeSpec onDevicesAllocated(Set<Device> allocated, YarnRuntimeType runtime) {
    return super.onDevicesAllocated(allocated, runtime);
  }

  @Override
  public void onDevicesReleased(Set<Device> released) {
    super.onDevicesReleased(released);
  }
}
