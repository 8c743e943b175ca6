package io.spindle.nm.yarn;

import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.MigProfile;
import io.spindle.nm.DiscoveredGpu;
import io.spindle.nm.DiscoveredMigInstance;
import io.spindle.nm.GpuAllocator;
import io.spindle.nm.GpuInventory;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.nodemanager.api.deviceplugin.Device;

/**
 * MIG instances of one profile as the resource {@code nvidia.com/mig-<profile>}.
 *
 * <p>YARN's device framework binds one resource name to one plugin class, and creates it with nothing but the
 * configuration. So a plugin does not know its profile from its class name: the n-th {@code MigProfilePlugin<n>}
 * serves the n-th profile of {@value NmSettings#MIG_PROFILES}. A node has one GPU model, and a model has at most
 * six profiles that are valid YARN resource names, hence six classes.
 *
 * <p>What it advertises is every place an instance of the profile may start on every MIG-mode GPU of a model that
 * offers it, not just the instances that exist. YARN's framework reads a plugin's devices once, when the
 * NodeManager starts; MIG layouts change while it runs. The places are fixed by the GPU, so the framework's
 * bookkeeping (and its records of containers across NodeManager restarts) stay valid through re-partitioning, and
 * a container is only ever given an instance that exists now. Spindle's scheduler counts real instances from the
 * layouts nodes report to ZooKeeper, never from these totals.
 */
public abstract class MigDevicePlugin extends SpindleDevicePlugin {

  /** The most profiles one node advertises: an eight-slice GPU has six without the media extension. */
  public static final int MAX_PROFILES = 6;

  private final int position;
  private String profile;

  /**
   * @param position which entry of {@value NmSettings#MIG_PROFILES} this plugin serves, from 1
   */
  protected MigDevicePlugin(int position) {
    this.position = position;
  }

  protected MigDevicePlugin(int position, NodeGpus gpus, Configuration conf) {
    super(gpus, conf);
    this.position = position;
  }

  /**
   * The profile this plugin serves. A misconfiguration here stops the NodeManager at start with this message: the
   * plugin class is listed, so the admin meant it to serve something.
   */
  protected final synchronized String profile() {
    if (profile == null) {
      String[] profiles = conf().getTrimmedStrings(NmSettings.MIG_PROFILES, NmSettings.DEFAULT_MIG_PROFILES);
      if (profiles.length < position) {
        throw new IllegalStateException(getClass().getName() + " serves entry " + position + " of "
            + NmSettings.MIG_PROFILES + ", which lists only " + profiles.length + " profile(s): "
            + List.of(profiles));
      }
      String name = profiles[position - 1];
      GpuModelCatalog.builtIn().requireProfile(NmSettings.MIG_PROFILES, name);
      if (name.endsWith("+me")) {
        throw new IllegalStateException(NmSettings.MIG_PROFILES + " lists " + name + ": '+' is not allowed in a "
            + "YARN resource name, so media-extension profiles cannot be advertised");
      }
      profile = name;
    }
    return profile;
  }

  @Override
  protected String resourceName() {
    String name = profile();
    return GpuModelCatalog.builtIn().modelsOffering(name).get(0).profile(name).map(MigProfile::resourceName)
        .orElseThrow();
  }

  @Override
  protected Set<Device> devices(GpuInventory inventory) {
    Set<Device> slots = new TreeSet<>();
    for (DiscoveredGpu gpu : inventory.migGpus()) {
      gpu.model().profile(profile()).ifPresent(p -> p.legalStarts()
          .forEach(start -> slots.add(Devices.migSlot(gpu, p.name(), start))));
    }
    return slots;
  }

  @Override
  protected Set<Device> choose(Set<Device> available, int count) {
    // Layouts change under a running NodeManager, and processes come and go: decide on a fresh look.
    GpuInventory inventory = gpus().refresh();
    Map<Integer, Device> byId = available.stream().collect(Collectors.toMap(Device::getId, Function.identity()));
    Set<String> held = new HashSet<>();
    for (DiscoveredGpu gpu : inventory.migGpus()) {
      for (DiscoveredMigInstance i : gpu.migInstances()) {
        if (i.usable() && i.profileName().equals(profile())
            && !byId.containsKey(gpu.index() * Devices.SLOT_STRIDE + i.placement().start())) {
          held.add(i.uuid());
        }
      }
    }
    Set<Device> chosen = new TreeSet<>();
    for (DiscoveredMigInstance i : GpuAllocator.chooseMigInstances(inventory.gpus(), profile(), count, held)) {
      chosen.add(byId.get(i.gpuIndex() * Devices.SLOT_STRIDE + i.placement().start()));
    }
    return chosen;
  }

  @Override
  protected List<String> uuids(Set<Device> allocated) {
    List<String> uuids = new ArrayList<>();
    GpuInventory inventory = gpus().inventory();
    for (Device d : allocated) {
      int gpuIndex = Devices.gpuIndexOfSlot(d);
      int start = Devices.startOfSlot(d);
      uuids.add(inventory.gpu(gpuIndex).flatMap(g -> g.instanceAt(start))
          .filter(i -> i.usable() && i.profileName().equals(profile()))
          .map(DiscoveredMigInstance::uuid)
          .orElseThrow(() -> new IllegalStateException("GPU " + gpuIndex + " has no usable " + profile()
              + " instance at memory slice " + start + " any more")));
    }
    return uuids;
  }

  @Override
  protected int gpuIndex(Device device) {
    return Devices.gpuIndexOfSlot(device);
  }
}
