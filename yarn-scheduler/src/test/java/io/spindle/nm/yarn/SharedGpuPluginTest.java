package io.spindle.nm.yarn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuSharing;
import io.spindle.nm.FakeNvidiaSmi;
import io.spindle.nm.GpuDiscovery;
import io.spindle.nm.RecentAllocations;
import io.spindle.nm.ShareAssignment;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.Device;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DeviceRuntimeSpec;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.MountVolumeSpec;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.YarnRuntimeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Shares of time-sliced and MPS GPUs, on the fake nvidia-smi of an 8x H100 node. */
class SharedGpuPluginTest {

  private static final String GPU0 = "GPU-0b1c2d3e-1111-4a5b-8c9d-0e1f2a3b4c01";
  private static final String GPU1 = "GPU-0b1c2d3e-2222-4a5b-8c9d-0e1f2a3b4c02";

  @TempDir
  Path temp;

  /** What the scheduler published, by container id. */
  private final Map<String, ShareAssignment> published = new HashMap<>();

  @Test
  void everySharedGpuIsAThousandDevicesAndStaysAWholeGpuToo() {
    Configuration conf = conf("exclusive", "0:mps,1:time-slice");
    NodeGpus gpus = gpus(conf);
    SharedGpuPlugin plugin = new SharedGpuPlugin(gpus, conf);

    assertThat(plugin.getRegisterRequestInfo().getResourceName()).isEqualTo("nvidia.com/gpu-milli");
    Set<Device> devices = plugin.getDevices();
    assertThat(devices).hasSize(2000);
    assertThat(ids(devices).get(0)).isZero();
    assertThat(ids(devices).get(1999)).isEqualTo(1999);
    Device first = devices.iterator().next();
    assertThat(first.getBusID()).isEqualTo("00000000:18:00.0");
    // No device node: the framework would deny the container's own GPU through the other 999 thousandths.
    assertThat(first.getDevPath()).isEmpty();
    assertThat(first.getMajorNumber()).isEqualTo(-1);
    assertThat(first.getMinorNumber()).isEqualTo(-1);
    // A shared GPU with nothing on it still serves a whole-GPU container.
    assertThat(new NvidiaGpuPlugin(gpus, conf).getDevices()).hasSize(8);
    assertThat(new SharedGpuPlugin(gpus(conf("exclusive", "")), conf("exclusive", "")).getDevices()).isEmpty();
  }

  @Test
  void theContainerGetsTheGpuTheSchedulerChose() {
    Configuration conf = conf("mps", "");
    SharedGpuPlugin plugin = new SharedGpuPlugin(gpus(conf), conf);
    published.put("container_1_0001_01_000002",
        new ShareAssignment("container_1_0001_01_000002", 5, 250, 20_480, GpuSharing.MPS));

    Set<Device> chosen = plugin.allocateDevices(plugin.getDevices(), 250, env("container_1_0001_01_000002"));

    assertThat(chosen).hasSize(250).allSatisfy(d -> assertThat(Devices.gpuIndexOfShare(d)).isEqualTo(5));
    DeviceRuntimeSpec spec = plugin.onDevicesAllocated(chosen, YarnRuntimeType.RUNTIME_DOCKER);
    assertThat(spec.getContainerRuntime()).isEqualTo("nvidia");
    assertThat(spec.getEnvs()).containsEntry("NVIDIA_VISIBLE_DEVICES", "GPU-0b1c2d3e-6666-4a5b-8c9d-0e1f2a3b4c06")
        .containsEntry("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=20480M");
  }

  @Test
  void withoutAnAssignmentTheSchedulersRuleChooses() {
    Configuration conf = conf("exclusive", "0:time-slice,1:time-slice,2:time-slice");
    SharedGpuPlugin plugin = new SharedGpuPlugin(gpus(conf), conf);
    Set<Device> all = plugin.getDevices();

    // All idle: the lowest index.
    Set<Device> first = plugin.allocateDevices(all, 400, Map.of());
    assertThat(gpusOf(first)).containsExactly(0);
    Set<Device> free = without(all, first);
    // GPU 0 has 600 left: a 300 fits it most tightly; a 700 only fits an idle GPU, the lowest.
    assertThat(gpusOf(plugin.allocateDevices(free, 300, Map.of()))).containsExactly(0);
    assertThat(gpusOf(plugin.allocateDevices(free, 700, Map.of()))).containsExactly(1);
    // A container whose id has no assignment (the scheduler could not publish one) is chosen for the same way.
    assertThat(gpusOf(plugin.allocateDevices(free, 600, env("container_1_0001_01_000009")))).containsExactly(0);
  }

  @Test
  void anAssignmentThatDoesNotFitHereFallsBackToTheRule() {
    Configuration conf = conf("time-slice", "");
    SharedGpuPlugin plugin = new SharedGpuPlugin(gpus(conf), conf);
    Set<Device> all = plugin.getDevices();
    Set<Device> gpu0Full = plugin.allocateDevices(all, 1000, Map.of());
    assertThat(gpusOf(gpu0Full)).containsExactly(0);
    published.put("c2", new ShareAssignment("c2", 0, 500, 0, GpuSharing.TIME_SLICE));

    assertThat(gpusOf(plugin.allocateDevices(without(all, gpu0Full), 500, env("c2")))).containsExactly(1);
  }

  @Test
  void aShareThatFitsNoGpuIsRefused() {
    Configuration conf = conf("exclusive", "0:mps,1:mps");
    SharedGpuPlugin plugin = new SharedGpuPlugin(gpus(conf), conf);
    Set<Device> all = plugin.getDevices();
    Set<Device> half0 = plugin.allocateDevices(all, 500, Map.of());
    Set<Device> free = without(all, half0);
    Set<Device> most1 = plugin.allocateDevices(free, 600, Map.of());
    free = without(free, most1);

    // 500 free on GPU 0, 400 on GPU 1: 600 would need both, and a share is never split.
    assertThat(plugin.allocateDevices(free, 600, Map.of())).isEmpty();
    assertThat(plugin.allocateDevices(free, 1001, Map.of())).isEmpty();
    // Memory counts too: GPU 0 and 1 have 80 GB each in the catalog.
    published.put("big", new ShareAssignment("big", 0, 100, 90_000, GpuSharing.MPS));
    assertThat(plugin.allocateDevices(free, 100, env("big"))).isEmpty();
    published.put("a", new ShareAssignment("a", 0, 100, 50_000, GpuSharing.MPS));
    published.put("b", new ShareAssignment("b", 0, 100, 50_000, GpuSharing.MPS));
    Set<Device> a = plugin.allocateDevices(free, 100, env("a"));
    assertThat(gpusOf(a)).containsExactly(0);
    free = without(free, a);
    // GPU 0 has the compute but only 30 GB left; GPU 1 has both.
    Set<Device> b = plugin.allocateDevices(free, 100, env("b"));
    assertThat(gpusOf(b)).containsExactly(1);
    free = without(free, b);
    published.put("c", new ShareAssignment("c", 1, 100, 50_000, GpuSharing.MPS));
    assertThat(plugin.allocateDevices(free, 100, env("c"))).isEmpty();

    // Once "a" ended (its devices are free again), its memory is free too.
    Set<Device> afterA = new TreeSet<>(free);
    afterA.addAll(a);
    assertThat(gpusOf(plugin.allocateDevices(afterA, 100, env("c")))).containsExactly(0);
  }

  @Test
  void mpsEnvironmentWithTheMemoryAmountAndTheDaemonsDirectories() {
    Configuration conf = conf("mps", "");
    conf.set(NmSettings.MPS_PIPE_DIRECTORY, "/run/nvidia-mps");
    conf.set(NmSettings.MPS_LOG_DIRECTORY, "/var/log/nvidia-mps");
    SharedGpuPlugin plugin = new SharedGpuPlugin(gpus(conf), conf);
    published.put("c1", new ShareAssignment("c1", 1, 125, 10_240, GpuSharing.MPS));
    Set<Device> chosen = plugin.allocateDevices(plugin.getDevices(), 125, env("c1"));

    DeviceRuntimeSpec spec = plugin.onDevicesAllocated(chosen, YarnRuntimeType.RUNTIME_DOCKER);

    assertThat(spec.getEnvs()).containsExactlyInAnyOrderEntriesOf(Map.of(
        "NVIDIA_VISIBLE_DEVICES", GPU1,
        "SPINDLE_GPU_SHARING", "mps",
        "SPINDLE_GPU_MILLI", "125",
        "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "13",
        "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=10240M",
        "SPINDLE_GPU_MEMORY_MB", "10240",
        "CUDA_MPS_PIPE_DIRECTORY", "/run/nvidia-mps",
        "CUDA_MPS_LOG_DIRECTORY", "/var/log/nvidia-mps"));
    assertThat(spec.getVolumeMounts()).singleElement().satisfies(m -> {
      assertThat(m.getHostPath()).isEqualTo("/run/nvidia-mps");
      assertThat(m.getMountPath()).isEqualTo("/run/nvidia-mps");
      assertThat(m.getReadOnly()).isFalse();
    });
  }

  @Test
  void mpsEnvironmentWithoutAMemoryAmountLimitsToTheComputeFractionOfTheGpusMemory() {
    Configuration conf = conf("mps", "");
    SharedGpuPlugin plugin = new SharedGpuPlugin(gpus(conf), conf);
    Set<Device> chosen = plugin.allocateDevices(plugin.getDevices(), 250, Map.of());

    DeviceRuntimeSpec spec = plugin.onDevicesAllocated(chosen, YarnRuntimeType.RUNTIME_DOCKER);

    // A quarter of the 81559 MiB nvidia-smi reports, rounded down.
    assertThat(spec.getEnvs()).containsEntry("NVIDIA_VISIBLE_DEVICES", GPU0)
        .containsEntry("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "25")
        .containsEntry("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=20389M")
        .doesNotContainKey("CUDA_MPS_PIPE_DIRECTORY");
    assertThat(spec.getVolumeMounts()).isEmpty();
  }

  @Test
  void timeSliceEnvironmentSaysSoAndSetsNoLimits() {
    Configuration conf = conf("time-slice", "");
    conf.set(NmSettings.MPS_PIPE_DIRECTORY, "/run/nvidia-mps");
    SharedGpuPlugin plugin = new SharedGpuPlugin(gpus(conf), conf);
    published.put("c1", new ShareAssignment("c1", 1, 300, 8_192, GpuSharing.TIME_SLICE));
    Set<Device> chosen = plugin.allocateDevices(plugin.getDevices(), 300, env("c1"));

    DeviceRuntimeSpec spec = plugin.onDevicesAllocated(chosen, YarnRuntimeType.RUNTIME_DOCKER);

    assertThat(spec.getContainerRuntime()).isEqualTo("nvidia");
    assertThat(spec.getEnvs()).containsExactlyInAnyOrderEntriesOf(Map.of("NVIDIA_VISIBLE_DEVICES", GPU1,
        "SPINDLE_GPU_SHARING", "time-slice", "SPINDLE_GPU_MILLI", "300"));
    assertThat(spec.getVolumeMounts()).isEmpty();
  }

  @Test
  void exclusiveGpusKeepTheirWholeGpuEnvironment() {
    Configuration conf = conf("exclusive", "");
    NvidiaGpuPlugin plugin = new NvidiaGpuPlugin(gpus(conf), conf);
    Set<Device> chosen = plugin.allocateDevices(plugin.getDevices(), 1, Map.of());

    assertThat(plugin.onDevicesAllocated(chosen, YarnRuntimeType.RUNTIME_DOCKER).getEnvs())
        .containsExactly(Map.entry("NVIDIA_VISIBLE_DEVICES", GPU0));
  }

  @Test
  void defaultRuntimeContainersGetNoSpecAsHadoopDropsIt() {
    Configuration conf = conf("mps", "");
    SharedGpuPlugin plugin = new SharedGpuPlugin(gpus(conf), conf);
    Set<Device> chosen = plugin.allocateDevices(plugin.getDevices(), 100, Map.of());

    assertThat(plugin.onDevicesAllocated(chosen, YarnRuntimeType.RUNTIME_DEFAULT)).isNull();
    plugin.onDevicesReleased(chosen);
  }

  @Test
  void badSharingSettingsStopTheNodeManagerAtRegistration() {
    NodeGpus gpus = gpus(conf("exclusive", ""));

    assertThatThrownBy(() -> new SharedGpuPlugin(gpus, conf("fractional", "")).getRegisterRequestInfo())
        .hasMessageContaining("yarn.nodemanager.spindle.gpu.sharing=fractional");
    assertThatThrownBy(() -> new NvidiaGpuPlugin(gpus, conf("exclusive", "0:mps,one:mps")).getRegisterRequestInfo())
        .hasMessageContaining("yarn.nodemanager.spindle.gpu.sharing.per-gpu=0:mps,one:mps");
    Configuration relative = conf("mps", "");
    relative.set(NmSettings.MPS_PIPE_DIRECTORY, "nvidia-mps");
    assertThatThrownBy(() -> new SharedGpuPlugin(gpus, relative).getRegisterRequestInfo())
        .hasMessageContaining("yarn.nodemanager.spindle.mps.pipe-directory must be an absolute path");
  }

  private NodeGpus gpus(Configuration conf) {
    GpuDiscovery discovery = new GpuDiscovery(FakeNvidiaSmi.of("h100-8x", temp).smi(), GpuModelCatalog.builtIn(),
        NmSettings.sharing(conf));
    return new NodeGpus(discovery, new RecentAllocations(60_000), () -> 1_000_000L,
        id -> Optional.ofNullable(published.get(id)));
  }

  private static Configuration conf(String node, String perGpu) {
    Configuration conf = new Configuration(false);
    conf.set(NmSettings.GPU_SHARING, node);
    conf.set(NmSettings.GPU_SHARING_PER_GPU, perGpu);
    return conf;
  }

  private static Map<String, String> env(String containerId) {
    return Map.of("CONTAINER_ID", containerId, "HOME", "/home/alice");
  }

  private static List<Integer> ids(Set<Device> devices) {
    return devices.stream().map(Device::getId).sorted().toList();
  }

  private static Set<Integer> gpusOf(Set<Device> devices) {
    return devices.stream().map(Devices::gpuIndexOfShare).collect(Collectors.toCollection(TreeSet::new));
  }

  private static Set<Device> without(Set<Device> devices, Set<Device> taken) {
    Set<Device> rest = new TreeSet<>(devices);
    rest.removeAll(taken);
    return rest;
  }
}
