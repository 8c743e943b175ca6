package io.spindle.local;

import io.spindle.core.model.NodeId;
import io.spindle.local.LocalClusterSpec.NodeSpec;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.service.AbstractService;
import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

/**
 * A {@link MiniYARNCluster} whose NodeManagers differ: each gets its own memory, vcores and GPU/MIG resources, and its
 * own host address, so the ResourceManager can put nodes on different racks.
 *
 * <p>MiniYARNCluster gives every NodeManager the same configuration and the host {@code localhost}; the
 * ResourceManager resolves racks by host only ({@code RackResolver.resolve(nodeId.getHost())}), so out of the box all
 * nodes share one rack. Two hooks fix that without copying MiniYARNCluster's private classes:
 * <ul>
 *   <li>MiniYARNCluster registers one {@code NodeManagerWrapper} service per node through {@link #addService}; this
 *       class wraps each in a service that hands it a per-node copy of the configuration (resources) and, between
 *       the NodeManager's init and start, sets the node's {@code yarn.nodemanager.address} to its own loopback
 *       address ({@code 127.0.0.2}, {@code 127.0.0.3}, ...). The NodeManager reads that key only when it starts its
 *       RPC server, and builds its {@code NodeId} from the address it bound, so each node registers under its own
 *       host and the rack mapping can tell them apart. (Linux routes all of 127.0.0.0/8 to the loopback interface;
 *       where that is not so the caller passes {@code localhost} for every node.)
 *   <li>Node resources: YARN caches the {@code yarn.nodemanager.resource-type.*} values JVM-wide the first time a
 *       NodeManager reads them ({@code ResourceUtils.getNodeResourceInformation}), so every node would advertise the
 *       first node's GPUs. The cache is cleared before each node's init ({@code ResourceUtils.resetNodeResources()});
 *       NodeManagers are initialised one after another on one thread, and read the values only during init.
 * </ul>
 */
final class LocalYarnCluster extends MiniYARNCluster {

  private final List<NodeSpec> nodes;
  private final List<String> hosts;
  private final List<Map<String, Long>> resources;
  private int nextNode;

  /**
   * @param resourceManagers 1, or 2 for an HA pair (configured by {@link RmHaPair})
   * @param hosts the address each node binds, by node
   * @param resources the YARN resources beyond memory and vcores each node advertises, by node
   */
  LocalYarnCluster(int resourceManagers, List<NodeSpec> nodes, List<String> hosts,
      List<Map<String, Long>> resources) {
    super("spindle-local", resourceManagers, nodes.size(), 1, 1);
    this.nodes = List.copyOf(nodes);
    this.hosts = List.copyOf(hosts);
    this.resources = List.copyOf(resources);
  }

  @Override
  protected void addService(Service service) {
    if (service.getClass().getName().endsWith("$NodeManagerWrapper")) {
      int index = nextNode++;
      super.addService(new PerNode(service, index));
    } else {
      super.addService(service);
    }
  }

  /** Gives one NodeManager its own resources and address; otherwise passes everything to MiniYARNCluster's wrapper. */
  private final class PerNode extends AbstractService {
    private final Service wrapped;
    private final int index;

    PerNode(Service wrapped, int index) {
      super("spindle-local-node-" + index);
      this.wrapped = wrapped;
      this.index = index;
    }

    @Override
    protected void serviceInit(Configuration conf) throws Exception {
      NodeSpec node = nodes.get(index);
      Configuration c = new YarnConfiguration(conf);
      // MiniYARNCluster's wrapper copies this key into yarn.nodemanager.resource.memory-mb.
      c.setLong(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, node.memoryMb());
      c.setInt(YarnConfiguration.NM_VCORES, node.vcores());
      for (Map.Entry<String, Long> e : resources.get(index).entrySet()) {
        c.setLong(YarnConfiguration.NM_RESOURCES_PREFIX + e.getKey(), e.getValue());
      }
      ResourceUtils.resetNodeResources();
      wrapped.init(c);
      super.serviceInit(c);
    }

    @Override
    protected void serviceStart() throws Exception {
      NodeManager nm = getNodeManager(index);
      nm.getConfig().set(YarnConfiguration.NM_ADDRESS, hosts.get(index) + ":0");
      wrapped.start();
      super.serviceStart();
    }

    @Override
    protected void serviceStop() throws Exception {
      wrapped.stop();
      super.serviceStop();
    }
  }
}
