package io.spindle.nm.yarn;

import io.spindle.core.model.GpuResourceNames;
import io.spindle.core.model.GpuSharing;
import io.spindle.nm.DiscoveredGpu;
import io.spindle.nm.GpuAllocator;
import io.spindle.nm.GpuAllocator.ShareRoom;
import io.spindle.nm.GpuInventory;
import io.spindle.nm.ShareAssignment;
import io.spindle.nm.ShareEnvironment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.Device;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DeviceRegisterRequest;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DeviceRuntimeSpec;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.MountVolumeSpec;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.YarnRuntimeType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shares of GPUs in a sharing mode (time-slice or MPS) as the resource {@code nvidia.com/gpu-milli}: every such GPU
 * is 1,000 devices, one per thousandth, and a container asking for {@code n} gets {@code n} of them, all of one GPU.
 *
 * <p>Which GPU: the one the scheduler chose, which it publishes per container in ZooKeeper and this plugin finds by
 * the container's {@code CONTAINER_ID}; when there is none (no ZooKeeper, a node modelled before its reports
 * arrived, a write that failed), the GPU the scheduler's own rule picks (tightest fit, then lowest index). That
 * mirror agrees with the scheduler as long as both see the same shares on the node; it does not know a request's
 * isolation, so an MPS-only share may then land on a time-sliced GPU.
 *
 * <p>The runtime environment says what the container got: {@code NVIDIA_VISIBLE_DEVICES} with the GPU's UUID, and
 * for MPS the compute percentage and memory limit the MPS server enforces. A time-sliced share has no limit at all;
 * {@code SPINDLE_GPU_SHARING=time-slice} tells the program so.
 */
public class SharedGpuPlugin extends SpindleDevicePlugin {

  private static final Logger LOG = LoggerFactory.getLogger(SharedGpuPlugin.class);

  public static final String RESOURCE_NAME = GpuResourceNames.GPU_MILLI;
  /** The YARN container id, in the launch environment the framework passes to {@code allocateDevices}. */
  static final String CONTAINER_ID = "CONTAINER_ID";

  /**
   * What a container was given, by its lowest device id (ids are exclusive while held), from the allocation until
   * its devices are free again. {@code memoryMb} is 0 when the amount is not known.
   */
  record Grant(String containerId, int gpuIndex, Set<Integer> deviceIds, long memoryMb, GpuSharing sharing) {}

  private final Map<Integer, Grant> grants = new ConcurrentHashMap<>();

  public SharedGpuPlugin() {}

  public SharedGpuPlugin(NodeGpus gpus, Configuration conf) {
    super(gpus, conf);
  }

  @Override
  protected String resourceName() {
    return RESOURCE_NAME;
  }

  @Override
  protected Set<Device> devices(GpuInventory inventory) {
    Set<Device> devices = new TreeSet<>();
    for (DiscoveredGpu gpu : inventory.wholeGpus()) {
      if (gpu.shared()) {
        for (int slot = 0; slot < Devices.SHARE_STRIDE; slot++) {
          devices.add(Devices.shareSlot(gpu, slot));
        }
      }
    }
    return devices;
  }

  @Override
  protected Set<Device> choose(Set<Device> available, int count) {
    return choose(available, count, Map.of());
  }

  @Override
  protected Set<Device> choose(Set<Device> available, int count, Map<String, String> env) {
    GpuInventory inventory = gpus().inventory();
    forgetReleased(available);
    String containerId = env.get(CONTAINER_ID);
    Optional<ShareAssignment> assigned = gpus().shareAssignment(containerId);
    long memoryMb = assigned.map(ShareAssignment::memoryMb).orElse(0L);
    Map<Integer, List<Device>> free = freeByGpu(available, inventory);
    List<ShareRoom> rooms = rooms(free, inventory);
    Optional<ShareRoom> chosen = Optional.empty();
    if (assigned.isPresent()) {
      int wanted = assigned.get().gpuIndex();
      chosen = rooms.stream().filter(r -> r.gpuIndex() == wanted && r.fits(count, memoryMb)).findFirst();
      if (chosen.isEmpty()) {
        LOG.warn("{}: the scheduler put container {}'s share ({} milli, {} MB) on GPU {}, where it does not fit "
            + "here ({}); choosing by the scheduler's rule instead", resourceName(), containerId, count, memoryMb,
            wanted, rooms);
      }
    }
    boolean schedulersChoice = chosen.isPresent();
    if (chosen.isEmpty()) {
      chosen = GpuAllocator.chooseShareGpu(rooms, count, memoryMb);
    }
    if (chosen.isEmpty()) {
      LOG.error("{}: refusing container {}: its share of {} milli{} fits no single shared GPU of this node ({}). "
          + "A share is never split across GPUs. Check that the scheduler sees this node's GPUs as they are here "
          + "(its GPU map, {} and {}) and that nothing else holds {} devices", resourceName(),
          containerId == null ? "(id unknown)" : containerId, count, memoryMb > 0 ? " and " + memoryMb + " MB" : "",
          rooms.isEmpty() ? "none is in a sharing mode" : rooms, NmSettings.GPU_SHARING, NmSettings.GPU_SHARING_PER_GPU,
          resourceName());
      return Set.of();
    }
    int gpuIndex = chosen.get().gpuIndex();
    Set<Device> picked = free.get(gpuIndex).stream().limit(count).collect(Collectors.toCollection(TreeSet::new));
    Set<Integer> ids = picked.stream().map(Device::getId).collect(Collectors.toCollection(TreeSet::new));
    GpuSharing sharing = inventory.gpu(gpuIndex).map(DiscoveredGpu::sharing).orElse(GpuSharing.TIME_SLICE);
    grants.put(picked.iterator().next().getId(), new Grant(containerId, gpuIndex, ids, memoryMb, sharing));
    LOG.info("{}: container {} gets {} milli{} of GPU {} ({}; {})", resourceName(), containerId, count,
        memoryMb > 0 ? " and " + memoryMb + " MB" : "", gpuIndex, sharing,
        schedulersChoice ? "the scheduler's choice" : "by the scheduler's rule");
    return picked;
  }

  /** A grant whose devices the framework lists as free again belongs to a container that ended. */
  private void forgetReleased(Set<Device> available) {
    Set<Integer> free = available.stream().map(Device::getId).collect(Collectors.toSet());
    grants.values().removeIf(g -> g.deviceIds().stream().anyMatch(free::contains));
  }

  /** Free share devices of each GPU in a sharing mode, lowest id first. */
  private static Map<Integer, List<Device>> freeByGpu(Set<Device> available, GpuInventory inventory) {
    Map<Integer, List<Device>> free = new TreeMap<>();
    for (DiscoveredGpu gpu : inventory.wholeGpus()) {
      if (gpu.shared()) {
        free.put(gpu.index(), new ArrayList<>());
      }
    }
    for (Device d : new TreeSet<>(available)) {
      List<Device> of = free.get(Devices.gpuIndexOfShare(d));
      if (of != null) {
        of.add(d);
      }
    }
    return free;
  }

  private List<ShareRoom> rooms(Map<Integer, List<Device>> free, GpuInventory inventory) {
    List<ShareRoom> rooms = new ArrayList<>();
    free.forEach((index, devices) -> {
      long held = grants.values().stream().filter(g -> g.gpuIndex() == index).mapToLong(Grant::memoryMb).sum();
      long memory = inventory.gpu(index).map(DiscoveredGpu::shareableMemoryMb).orElse(0L);
      rooms.add(new ShareRoom(index, devices.size(), Math.max(0, memory - held)));
    });
    return rooms;
  }

  @Override
  protected String describe(Set<Device> available) {
    Map<Integer, Integer> free = new TreeMap<>();
    available.forEach(d -> free.merge(Devices.gpuIndexOfShare(d), 1, Integer::sum));
    return "free milli by GPU " + free;
  }

  @Override
  protected List<String> uuids(Set<Device> allocated) {
    int gpuIndex = gpuOf(allocated);
    return List.of(gpus().inventory().gpu(gpuIndex).map(DiscoveredGpu::uuid).orElseThrow(
        () -> new IllegalStateException("GPU " + gpuIndex + " was allocated but is no longer discovered")));
  }

  @Override
  protected void addToSpec(Set<Device> allocated, DeviceRuntimeSpec.Builder spec) {
    Optional<DiscoveredGpu> gpu = gpus().inventory().gpu(gpuOf(allocated));
    Grant grant = grants.get(allocated.stream().mapToInt(Device::getId).min().orElseThrow());
    GpuSharing sharing = grant != null ? grant.sharing()
        : gpu.map(DiscoveredGpu::sharing).orElse(GpuSharing.TIME_SLICE);
    // The limit derived from the compute fraction is of the memory the GPU really has, when nvidia-smi says.
    long gpuMemoryMb = gpu.map(g -> g.memoryMb() > 0 ? g.memoryMb() : g.shareableMemoryMb()).orElse(0L);
    String pipe = NmSettings.directory(conf(), NmSettings.MPS_PIPE_DIRECTORY);
    Map<String, String> env = ShareEnvironment.of(sharing, allocated.size(), grant == null ? 0 : grant.memoryMb(),
        gpuMemoryMb, pipe, NmSettings.directory(conf(), NmSettings.MPS_LOG_DIRECTORY));
    env.forEach(spec::addEnv);
    if (sharing == GpuSharing.MPS && !pipe.isEmpty()) {
      // MPS clients in the container reach the control daemon through its pipes.
      spec.addMountVolumeSpec(MountVolumeSpec.Builder.newInstance().setHostPath(pipe).setMountPath(pipe)
          .setReadOnly(false).build());
    }
  }

  private static int gpuOf(Set<Device> allocated) {
    Set<Integer> gpuIndices = allocated.stream().map(Devices::gpuIndexOfShare).collect(Collectors.toSet());
    if (gpuIndices.size() != 1) {
      throw new IllegalStateException("a share is on one GPU, but these devices are on GPUs " + gpuIndices);
    }
    return gpuIndices.iterator().next();
  }

  @Override
  protected int gpuIndex(Device device) {
    return Devices.gpuIndexOfShare(device);
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
    released.stream().mapToInt(Device::getId).min().ifPresent(grants::remove);
    super.onDevicesReleased(released);
  }
}
