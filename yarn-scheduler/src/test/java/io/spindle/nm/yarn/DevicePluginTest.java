package io.spindle.nm.yarn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.model.GpuModelCatalog;
import io.spindle.nm.FakeNvidiaSmi;
import io.spindle.nm.GpuDiscovery;
import io.spindle.nm.NvidiaSmi;
import io.spindle.nm.RecentAllocations;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.Device;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DevicePlugin;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DevicePluginScheduler;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.DeviceRuntimeSpec;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.YarnRuntimeType;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.resourceplugin.ResourcePluginManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DevicePluginTest {

  private static final List<Class<? extends SpindleDevicePlugin>> PLUGINS = List.of(NvidiaGpuPlugin.class,
      SharedGpuPlugin.class, MigProfilePlugin1.class, MigProfilePlugin2.class, MigProfilePlugin3.class,
      MigProfilePlugin4.class, MigProfilePlugin5.class, MigProfilePlugin6.class);

  @TempDir
  Path temp;

  private final AtomicLong clock = new AtomicLong(1_000_000);

  /** Hadoop's own check, run by the NodeManager before it registers a plugin. */
  @Test
  void everyPluginPassesTheFrameworksInterfaceCheck() throws Exception {
    ResourcePluginManager manager = new ResourcePluginManager();
    for (Class<? extends SpindleDevicePlugin> plugin : PLUGINS) {
      manager.checkInterfaceCompatibility(DevicePlugin.class, plugin);
      manager.checkInterfaceCompatibility(DevicePluginScheduler.class, plugin);
      assertThat(plugin.getConstructor().newInstance()).isInstanceOf(DevicePluginScheduler.class);
    }
    assertThat(PLUGINS).hasSize(2 + MigDevicePlugin.MAX_PROFILES);
  }

  @Test
  void wholeGpusOfAnNvSwitchNode() {
    NvidiaGpuPlugin plugin = new NvidiaGpuPlugin(gpus(FakeNvidiaSmi.of("h100-8x", temp).smi()), conf(""));

    assertThat(plugin.getRegisterRequestInfo().getResourceName()).isEqualTo("nvidia.com/gpu");
    Set<Device> devices = plugin.getDevices();
    assertThat(devices).hasSize(8);
    Device first = devices.iterator().next();
    assertThat(first.getId()).isZero();
    assertThat(first.getDevPath()).isEqualTo("/dev/nvidia0");
    assertThat(first.getMajorNumber()).isEqualTo(195);
    assertThat(first.getMinorNumber()).isZero();
    assertThat(first.getBusID()).isEqualTo("00000000:18:00.0");
  }

  @Test
  void wholeGpusKeepIslandsWhole() {
    NvidiaGpuPlugin plugin = new NvidiaGpuPlugin(gpus(FakeNvidiaSmi.of("h100-2x4-islands", temp).smi()), conf(""));
    Set<Device> all = plugin.getDevices();

    Set<Device> four = plugin.allocateDevices(all, 4, Map.of());
    assertThat(ids(four)).containsExactly(0, 1, 2, 3);
    // GPU 5 is taken: island 1 has 3 free, island 0 has 4; two GPUs go to the fuller island 1.
    Set<Device> free = without(all, Set.of(5));
    assertThat(ids(plugin.allocateDevices(free, 2, Map.of()))).containsExactly(4, 6);
    assertThat(ids(plugin.allocateDevices(free, 4, Map.of()))).containsExactly(0, 1, 2, 3);
    assertThat(plugin.allocateDevices(without(all, Set.of(0, 1, 2)), 6, Map.of())).isEmpty();
  }

  @Test
  void dockerContainersGetTheGpuUuids() {
    NvidiaGpuPlugin plugin = new NvidiaGpuPlugin(gpus(FakeNvidiaSmi.of("h100-8x", temp).smi()), conf(""));
    Set<Device> chosen = plugin.allocateDevices(plugin.getDevices(), 2, Map.of());

    DeviceRuntimeSpec spec = plugin.onDevicesAllocated(chosen, YarnRuntimeType.RUNTIME_DOCKER);

    assertThat(spec.getContainerRuntime()).isEqualTo("nvidia");
    assertThat(spec.getEnvs()).containsExactly(Map.entry("NVIDIA_VISIBLE_DEVICES",
        "GPU-0b1c2d3e-1111-4a5b-8c9d-0e1f2a3b4c01,GPU-0b1c2d3e-2222-4a5b-8c9d-0e1f2a3b4c02"));
    assertThat(plugin.onDevicesAllocated(chosen, YarnRuntimeType.RUNTIME_DEFAULT)).isNull();
  }

  @Test
  void mixedMigNodeAdvertisesOneResourcePerProfile() {
    NodeGpus gpus = gpus(FakeNvidiaSmi.of("a100-mig", temp).smi());
    Configuration conf = conf("3g.20gb, 2g.10gb, 1g.5gb, 4g.20gb");

    assertThat(new NvidiaGpuPlugin(gpus, conf).getDevices()).extracting(Device::getId).containsExactly(1);
    MigProfilePlugin1 threeG = new MigProfilePlugin1(gpus, conf);
    assertThat(threeG.getRegisterRequestInfo().getResourceName()).isEqualTo("nvidia.com/mig-3g.20gb");
    // Every place a 3g.20gb may start on the MIG GPU: memory slices 0 and 4.
    assertThat(ids(threeG.getDevices())).containsExactly(0, 4);
    assertThat(new MigProfilePlugin2(gpus, conf).getRegisterRequestInfo().getResourceName())
        .isEqualTo("nvidia.com/mig-2g.10gb");
    assertThat(ids(new MigProfilePlugin2(gpus, conf).getDevices())).containsExactly(0, 2, 4);
    assertThat(ids(new MigProfilePlugin3(gpus, conf).getDevices())).containsExactly(0, 1, 2, 3, 4, 5, 6);
    assertThat(ids(new MigProfilePlugin4(gpus, conf).getDevices())).containsExactly(0);
  }

  @Test
  void migContainerGetsAnExistingInstanceOfItsProfile() {
    NodeGpus gpus = gpus(FakeNvidiaSmi.of("a100-mig", temp).smi());
    MigProfilePlugin3 oneG = new MigProfilePlugin3(gpus, conf("3g.20gb,2g.10gb,1g.5gb"));
    Set<Device> slots = oneG.getDevices();

    Set<Device> first = oneG.allocateDevices(slots, 1, Map.of());
    assertThat(ids(first)).containsExactly(2);
    assertThat(oneG.onDevicesAllocated(first, YarnRuntimeType.RUNTIME_DOCKER).getEnvs())
        .containsEntry("NVIDIA_VISIBLE_DEVICES", "MIG-c2d3e4f5-a6b7-5c8d-9e0f-1a2b3c4d5e62");
    // With the instance at slice 2 taken, the other 1g.5gb (slice 3) is all that is left.
    Set<Device> rest = without(slots, Set.of(2));
    assertThat(ids(oneG.allocateDevices(rest, 1, Map.of()))).containsExactly(3);
    assertThat(oneG.allocateDevices(rest, 2, Map.of())).isEmpty();
  }

  @Test
  void handingOutAnInstanceReservesItsGpuForReconfiguration() {
    NodeGpus gpus = gpus(FakeNvidiaSmi.of("a100-mig", temp).smi());
    MigProfilePlugin1 threeG = new MigProfilePlugin1(gpus, conf("3g.20gb"));

    Set<Device> chosen = threeG.allocateDevices(threeG.getDevices(), 1, Map.of());

    assertThat(ids(chosen)).containsExactly(4);
    assertThat(gpus.reserved(0)).isTrue();
    clock.addAndGet(60_000);
    assertThat(gpus.reserved(0)).isFalse();
    threeG.allocateDevices(threeG.getDevices(), 1, Map.of());
    threeG.onDevicesReleased(chosen);
    assertThat(gpus.reserved(0)).isFalse();
  }

  @Test
  void brokenNvidiaSmiAdvertisesNothingAndThrowsNothing() {
    NvidiaSmi broken = args -> new NvidiaSmi.Result(-1, "", "cannot start /usr/bin/nvidia-smi: No such file");
    NodeGpus gpus = gpus(broken);

    assertThat(new NvidiaGpuPlugin(gpus, conf("")).getDevices()).isEmpty();
    MigProfilePlugin1 mig = new MigProfilePlugin1(gpus, conf("3g.40gb"));
    assertThat(mig.getDevices()).isEmpty();
    assertThat(mig.allocateDevices(new TreeSet<>(), 1, Map.of())).isEmpty();
  }

  @Test
  void misconfiguredProfilesStopTheNodeManagerWithAReason() {
    NodeGpus gpus = gpus(FakeNvidiaSmi.of("a100-mig", temp).smi());

    assertThatThrownBy(() -> new MigProfilePlugin3(gpus, conf("3g.20gb,1g.5gb")).getRegisterRequestInfo())
        .hasMessageContaining("serves entry 3 of yarn.nodemanager.spindle.mig.profiles, which lists only 2");
    assertThatThrownBy(() -> new MigProfilePlugin1(gpus, conf("1g.5gb+me")).getRegisterRequestInfo())
        .hasMessageContaining("'+' is not allowed in a YARN resource name");
    assertThatThrownBy(() -> new MigProfilePlugin1(gpus, conf("9g.99gb")).getRegisterRequestInfo())
        .hasMessageContaining("unknown MIG profile");
  }

  private NodeGpus gpus(NvidiaSmi smi) {
    return new NodeGpus(new GpuDiscovery(smi, GpuModelCatalog.builtIn()), new RecentAllocations(60_000), clock::get);
  }

  private static Configuration conf(String profiles) {
    Configuration conf = new Configuration(false);
    conf.set(NmSettings.MIG_PROFILES, profiles);
    return conf;
  }

  private static List<Integer> ids(Set<Device> devices) {
    return devices.stream().map(Device::getId).sorted().toList();
  }

  private static Set<Device> without(Set<Device> devices, Set<Integer> ids) {
    return devices.stream().filter(d -> !ids.contains(d.getId())).collect(Collectors.toCollection(TreeSet::new));
  }
}
