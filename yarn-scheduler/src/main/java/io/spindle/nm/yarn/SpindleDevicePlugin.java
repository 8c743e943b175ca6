package io.spindle.nm.yarn;

import io.spindle.nm.GpuInventory;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.Device;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DevicePlugin;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DevicePluginScheduler;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DeviceRegisterRequest;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DeviceRuntimeSpec;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.YarnRuntimeType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What Spindle's device plugins have in common: they register one resource name, advertise devices from the
 * shared discovery, choose devices themselves (YARN's default takes the first free ones) and hand Docker
 * containers the exact GPU or MIG UUIDs.
 *
 * <p>None of the framework callbacks throws. The framework turns an exception in {@code getDevices} into a failed
 * NodeManager start; here a broken nvidia-smi means zero devices and an error in the log.
 *
 * <p>Hadoop 3.5.0's {@code ResourcePluginManager.checkInterfaceCompatibility} looks for every interface method
 * among the plugin class's <em>declared</em> methods, so each concrete plugin re-declares the five callbacks and
 * delegates here; inherited implementations alone are rejected at NodeManager start.
 */
public abstract class SpindleDevicePlugin implements DevicePlugin, DevicePluginScheduler, Configurable {

  private static final Logger LOG = LoggerFactory.getLogger(SpindleDevicePlugin.class);
  private static final String VERSION = Optional.ofNullable(
      SpindleDevicePlugin.class.getPackage().getImplementationVersion()).orElse("dev");

  /** The environment variable the NVIDIA container runtime reads to expose devices to a Docker container. */
  static final String NVIDIA_VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES";
  static final String NVIDIA_RUNTIME = "nvidia";

  private Configuration conf;
  private NodeGpus gpus;

  /** For the NodeManager, which creates plugins by reflection and then calls {@link #setConf}. */
  protected SpindleDevicePlugin() {}

  /** For tests and embedders: an explicit shared state and configuration. */
  protected SpindleDevicePlugin(NodeGpus gpus, Configuration conf) {
    this.gpus = gpus;
    this.conf = conf;
  }

  @Override
  public void setConf(Configuration configuration) {
    this.conf = configuration;
  }

  @Override
  public Configuration getConf() {
    return conf;
  }

  protected final Configuration conf() {
    if (conf == null) {
      conf = new Configuration();
    }
    return conf;
  }

  protected final synchronized NodeGpus gpus() {
    if (gpus == null) {
      gpus = NodeGpus.shared(conf());
    }
    return gpus;
  }

  /** The YARN resource type this plugin serves. */
  protected abstract String resourceName();

  /** The devices to advertise, from an inventory. */
  protected abstract Set<Device> devices(GpuInventory inventory);

  /** Chooses {@code count} of {@code available}; fewer when impossible. */
  protected abstract Set<Device> choose(Set<Device> available, int count);

  /**
   * As {@link #choose(Set, int)}, knowing the container's environment ({@code CONTAINER_ID} is in it under the
   * LinuxContainerExecutor: {@code ContainerLaunch.sanitizeEnv} adds it to the launch context's map before the
   * executor runs the device framework).
   */
  protected Set<Device> choose(Set<Device> available, int count, Map<String, String> env) {
    return choose(available, count);
  }

  /** The free devices, for the log line of an allocation that fell short. */
  protected String describe(Set<Device> available) {
    return available.toString();
  }

  /** Adds what a Docker container needs beyond its device UUIDs (nothing, unless a plugin says otherwise). */
  protected void addToSpec(Set<Device> allocated, DeviceRuntimeSpec.Builder spec) {}

  /** The device UUIDs behind allocated devices, in the order a container should see them. */
  protected abstract List<String> uuids(Set<Device> allocated);

  /** The GPU index a device belongs to. */
  protected abstract int gpuIndex(Device device);

  @Override
  public DeviceRegisterRequest getRegisterRequestInfo() {
    // The framework registers plugins at NodeManager start and stops it when this throws: the place to refuse a
    // misconfiguration, which getDevices() would only turn into zero devices.
    NmSettings.sharing(conf());
    NmSettings.directory(conf(), NmSettings.MPS_PIPE_DIRECTORY);
    NmSettings.directory(conf(), NmSettings.MPS_LOG_DIRECTORY);
    return DeviceRegisterRequest.Builder.newInstance()
        .setResourceName(resourceName())
        .setPluginVersion(VERSION)
        .build();
  }

  @Override
  public Set<Device> getDevices() {
    try {
      Set<Device> devices = new TreeSet<>(devices(gpus().inventory()));
      LOG.info("{}: advertising {} device(s)", resourceName(), devices.size());
      return devices;
    } catch (RuntimeException e) {
      LOG.error("{}: cannot list devices, advertising none", resourceName(), e);
      return new TreeSet<>();
    }
  }

  @Override
  public Set<Device> allocateDevices(Set<Device> available, int count, Map<String, String> env) {
    try {
      Set<Device> chosen = new TreeSet<>(choose(available, count, env == null ? Map.of() : env));
      if (chosen.size() != count) {
        LOG.error("{}: {} device(s) asked for, only {} can be given from {}", resourceName(), count, chosen.size(),
            describe(available));
        return chosen;
      }
      chosen.forEach(d -> gpus().allocated(gpuIndex(d)));
      return chosen;
    } catch (RuntimeException e) {
      LOG.error("{}: choosing {} device(s) failed", resourceName(), count, e);
      return new TreeSet<>();
    }
  }

  @Override
  public DeviceRuntimeSpec onDevicesAllocated(Set<Device> allocated, YarnRuntimeType runtime) {
    // Hadoop 3.5.0 applies a runtime spec to Docker containers only (DeviceResourceHandlerImpl warns and drops it
    // otherwise), so there is nothing to hand a default-runtime container.
    if (runtime != YarnRuntimeType.RUNTIME_DOCKER) {
      return null;
    }
    List<String> uuids = uuids(allocated);
    LOG.info("{}: container gets {}", resourceName(), uuids);
    DeviceRuntimeSpec.Builder spec = DeviceRuntimeSpec.Builder.newInstance()
        .setContainerRuntime(NVIDIA_RUNTIME)
        .addEnv(NVIDIA_VISIBLE_DEVICES, String.join(",", uuids));
    addToSpec(allocated, spec);
    return spec.build();
  }

  @Override
  public void onDevicesReleased(Set<Device> released) {
    released.forEach(d -> gpus().released(gpuIndex(d)));
  }
}
