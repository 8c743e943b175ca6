package io.spindle.nm.yarn;

import io.spindle.channel.mig.MigStateStore;
import io.spindle.channel.share.ShareAssignmentStore;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.InvalidInputException;
import io.spindle.ha.ZkSettings;
import io.spindle.ha.avro.ShareAssignmentRecord;
import io.spindle.core.model.GpuHealth;
import io.spindle.nm.GpuDiscovery;
import io.spindle.nm.GpuHealthMonitor;
import io.spindle.nm.GpuInventory;
import io.spindle.nm.MigReconfigurer;
import io.spindle.nm.MigStateAgent;
import io.spindle.nm.NvidiaSmi;
import io.spindle.nm.ProcessNvidiaSmi;
import io.spindle.nm.RecentAllocations;
import io.spindle.nm.ShareAssignment;
import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What all of this NodeManager's Spindle device plugins share: one discovery (the GPUs are the same whichever
 * resource asks), the devices recently handed out, the ZooKeeper agent that applies MIG layouts, and the share
 * assignments the scheduler publishes for this node.
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
  private volatile ShareAssignment.Lookup shares;
  private volatile GpuInventory inventory;
  private MigStateAgent agent;
  private volatile GpuHealthMonitor healthMonitor;
  private CuratorFramework client;

  public NodeGpus(GpuDiscovery discovery, RecentAllocations allocations, LongSupplier clock) {
    this(discovery, allocations, clock, ShareAssignment.Lookup.none());
  }

  /** @param shares where the scheduler's share assignments for this node are read */
  public NodeGpus(GpuDiscovery discovery, RecentAllocations allocations, LongSupplier clock,
      ShareAssignment.Lookup shares) {
    this.discovery = discovery;
    this.allocations = allocations;
    this.clock = clock;
    this.shares = shares;
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
    GpuDiscovery discovery = new GpuDiscovery(smi, GpuModelCatalog.builtIn(), settings.sharing());
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
    gpus.shares = zkLookup(client, new ShareAssignmentStore(client, settings.zk().root()), settings.nodeName());
    MigStateAgent migAgent = new MigStateAgent(settings.nodeName(), store, discovery,
        new MigReconfigurer(smi, discovery), gpus::reserved, gpus::update, System::currentTimeMillis,
        settings.migRetryInterval());
    if (settings.health().watched()) {
      gpus.healthMonitor = new GpuHealthMonitor(GpuHealthMonitor.tools(smi, settings.health().kernelLog(),
          settings.health().dcgmi(), settings.nvidiaSmiTimeout()), settings.health().policy());
      migAgent.watchHealth(gpus.healthMonitor, settings.health().interval());
    } else {
      LOG.warn("GPU health is not watched on node {} ({} is 0)", settings.nodeName(), NmHealthSettings.INTERVAL_MS);
    }
    gpus.startAgent(client, migAgent);
    LOG.info("Node {} reports its GPUs under {} on {}", settings.nodeName(), settings.zk().root(),
        settings.zk().address());
    return gpus;
  }

  /**
   * Reads an assignment straight from ZooKeeper, not from a cache: the scheduler writes it moments before the
   * container starts, and a cache could lag behind. While the session is down it answers empty at once, so a
   * container start never waits on ZooKeeper; the plugin then chooses by the scheduler's rule.
   */
  private static ShareAssignment.Lookup zkLookup(CuratorFramework client, ShareAssignmentStore store, String node) {
    return containerId -> {
      if (!client.getZookeeperClient().isConnected()) {
        LOG.warn("ZooKeeper is not connected: the share assignment of container {} cannot be read", containerId);
        return Optional.empty();
      }
      try {
        return store.read(node, containerId).map(NodeGpus::assignment);
      } catch (IOException | RuntimeException e) {
        LOG.warn("Cannot read the share assignment of container {}: {}", containerId, e.getMessage());
        return Optional.empty();
      }
    };
  }

  private static ShareAssignment assignment(ShareAssignmentRecord r) {
    GpuSharing sharing;
    try {
      sharing = GpuSharing.parse("sharing", r.getSharing());
    } catch (InvalidInputException e) {
      sharing = null;
    }
    return new ShareAssignment(r.getContainerId(), r.getGpuIndex(), r.getMilli(), r.getMemoryMb(), sharing);
  }

  private void startAgent(CuratorFramework zk, MigStateAgent migAgent) {
    this.client = zk;
    this.agent = migAgent;
    migAgent.start();
  }

  /** A GPU's health as this node last judged it; healthy where health is not watched. */
  public GpuHealth health(int gpuIndex) {
    GpuHealthMonitor monitor = healthMonitor;
    return monitor == null ? GpuHealth.HEALTHY : monitor.of(gpuIndex);
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

  /** The GPU the scheduler gave a container's share, if it published one. */
  public Optional<ShareAssignment> shareAssignment(String containerId) {
    return containerId == null || containerId.isBlank() ? Optional.empty() : shares.find(containerId);
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
