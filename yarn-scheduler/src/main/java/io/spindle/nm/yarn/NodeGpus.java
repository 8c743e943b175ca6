package io.spindle.nm.yarn;

import io.spindle.channel.mig.MigStateStore;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.ha.ZkSettings;
import io.spindle.nm.GpuDiscovery;
import io.spindle.nm.GpuInventory;
import io.spindle.nm.MigReconfigurer;
import io.spindle.nm.MigStateAgent;
import io.spindle.nm.NvidiaSmi;
import io.spindle.nm.ProcessNvidiaSmi;
import io.spindle.nm.RecentAllocations;
import java.io.Closeable;
import java.util.List;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What all of this NodeManager's Spindle device plugins share: one discovery (the GPUs are the same whichever
 * resource asks), the devices recently handed out, and the ZooKeeper agent that applies MIG layouts.
 *
 * <p>The NodeManager creates each plugin by reflection with nothing but the configuration, so the plugins meet
 * here, in one instance per NodeManager process.
 */
public final class NodeGpus implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(NodeGpus.class);
  private static NodeGpus shared;

  private final GpuDiscovery discovery;
  private final RecentAllocations allocations;
  private final LongSupplier clock;
  private volatile GpuInventory inventory;
  private MigStateAgent agent;
  private CuratorFramework client;

  public NodeGpus(GpuDiscovery discovery, RecentAllocations allocations, LongSupplier clock) {
    this.discovery = discovery;
    this.allocations = allocations;
    this.clock = clock;
  }

  /** The NodeManager's instance, created from the first plugin's configuration. */
  public static synchronized NodeGpus shared(Configuration conf) {
    if (shared == null) {
      shared = create(NmSettings.from(conf));
      Runtime.getRuntime().addShutdownHook(new Thread(shared::close, "spindle-node-gpus-shutdown"));
    }
    return shared;
  }

  private static NodeGpus create(NmSettings settings) {
    NvidiaSmi smi = new ProcessNvidiaSmi(List.of(settings.nvidiaSmiPath()), settings.nvidiaSmiTimeout());
    GpuDiscovery discovery = new GpuDiscovery(smi, GpuModelCatalog.builtIn());
    NodeGpus gpus = new NodeGpus(discovery, new RecentAllocations(settings.migAllocationGrace().toMillis()),
        System::currentTimeMillis);
    if (!settings.zk().enabled()) {
      LOG.warn("No ZooKeeper address ({} or hadoop.zk.address): GPUs of node {} are not reported to the "
          + "scheduler and MIG layouts are not changed", ZkSettings.ZK_ADDRESS, settings.nodeName());
      return gpus;
    }
    CuratorFramework client = CuratorFrameworkFactory.newClient(settings.zk().address(),
        new ExponentialBackoffRetry(1_000, 3));
    client.start();
    MigStateStore store = new MigStateStore(client, settings.zk().root());
    gpus.startAgent(client, new MigStateAgent(settings.nodeName(), store, discovery,
        new MigReconfigurer(smi, discovery), gpus::reserved, gpus::update, System::currentTimeMillis,
        settings.migRetryInterval()));
    LOG.info("Node {} reports its GPUs under {} on {}", settings.nodeName(), settings.zk().root(),
        settings.zk().address());
    return gpus;
  }

  private void startAgent(CuratorFramework zk, MigStateAgent migAgent) {
    this.client = zk;
    this.agent = migAgent;
    migAgent.start();
  }

  /** The GPUs as last discovered (discovering now the first time). */
  public GpuInventory inventory() {
    GpuInventory now = inventory;
    return now != null ? now : refresh();
  }

  /** Discovers again and remembers the answer. */
  public GpuInventory refresh() {
    GpuInventory now = discovery.discover();
    inventory = now;
    return now;
  }

  /** Takes an inventory someone else just discovered (the MIG agent, after a layout changed). */
  public void update(GpuInventory fresh) {
    inventory = fresh;
  }

  public void allocated(int gpuIndex) {
    allocations.allocated(gpuIndex, clock.getAsLong());
  }

  public void released(int gpuIndex) {
    allocations.released(gpuIndex);
  }

  /** Whether a container was just given one of this GPU's devices (see {@link RecentAllocations}). */
  public boolean reserved(int gpuIndex) {
    return allocations.reserved(gpuIndex, clock.getAsLong());
  }

  @Override
  public void close() {
    if (agent != null) {
      agent.close();
    }
    if (client != null) {
      client.close();
    }
  }
}
