package io.spindle.nm.yarn;

import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.Device;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DeviceRegisterRequest;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DeviceRuntimeSpec;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.YarnRuntimeType;

/** MIG instances of entry 3 of {@value NmSettings#MIG_PROFILES}; see {@link MigDevicePlugin}. */
public class MigProfilePlugin3 extends MigDevicePlugin {

  public MigProfilePlugin3() {
    super(3);
  }

  public MigProfilePlugin3(NodeGpus gpus, Configuration conf) {
    super(3, gpus, conf);
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
