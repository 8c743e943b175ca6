package io.spindle.local;

import io.spindle.channel.mig.MigLayoutRecords;
import io.spindle.channel.mig.MigStateStore;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.NodeId;
import io.spindle.ha.avro.MigLayoutRecord;
import io.spindle.local.LocalClusterSpec.NodeSpec;
import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stands in for Spindle's NodeManager-side {@code MigStateAgent} on the fake nodes: reports every GPU of every node
 * (model, NVLink island, MIG layout) to ZooKeeper when the cluster starts, and answers each desired layout the
 * scheduler writes by reporting it as applied at once — there is no hardware to re-partition, and no check that the
 * GPU is idle. A desired layout that is not legal on the GPU's model, or aimed at a GPU without MIG mode, is answered
 * with the GPU's current layout and an error, as the real agent does.
 */
final class FakeMigAgents implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(FakeMigAgents.class);

  private final MigStateStore store;
  private final List<Closeable> watches = new ArrayList<>();
  /** Current layout by node name in ZooKeeper, then GPU index; only MIG-mode GPUs. */
  private final Map<String, Map<Integer, MigLayout>> layouts = new HashMap<>();
  private final Map<String, NodeSpec> specs = new HashMap<>();

  FakeMigAgents(MigStateStore store) {
    this.store = store;
  }

  /** Reports {@code node}'s GPUs under {@code zkNode} (the host of its YARN NodeId) and starts answering. */
  synchronized void start(String zkNode, NodeSpec node) throws IOException {
    specs.put(zkNode, node);
    Map<Integer, MigLayout> mig = new HashMap<>();
    layouts.put(zkNode, mig);
    for (int i = 0; i < node.wholeGpus(); i++) {
      store.writeReported(record(zkNode, node, i, false, List.of(), 0, null));
    }
    for (int j = 0; j < node.migGpus().size(); j++) {
      int index = node.wholeGpus() + j;
      MigLayout layout = node.migGpus().get(j);
      mig.put(index, layout);
      store.writeReported(record(zkNode, node, index, true, MigLayoutRecords.instances(layout), 0, null));
    }
    watches.add(store.watchDesired(zkNode, this::answer));
  }

  private synchronized void answer(MigLayoutRecord desired) {
    String zkNode = desired.getNode();
    NodeSpec node = specs.get(zkNode);
    int index = desired.getGpuIndex();
    if (node == null || index < 0 || index >= node.totalGpus()) {
      LOG.warn("Ignoring desired MIG layout for unknown GPU {} of node {}", index, zkNode);
      return;
    }
    Map<Integer, MigLayout> mig = layouts.get(zkNode);
    MigLayout current = mig.get(index);
    try {
      if (current == null) {
        throw new InvalidInputException("gpu", index, "GPU is not in MIG mode; Spindle does not toggle MIG mode");
      }
      MigLayout next = MigLayoutRecords.layout(desired, node.model());
      mig.put(index, next);
      store.writeReported(record(zkNode, node, index, true, MigLayoutRecords.instances(next),
          desired.getVersion(), null));
      LOG.info("MIG re-partition applied (simulated): node {} GPU {} now {}", zkNode, index, next.placements());
    } catch (InvalidInputException e) {
      try {
        store.writeReported(record(zkNode, node, index, current != null,
            current == null ? List.of() : MigLayoutRecords.instances(current), desired.getVersion(), e.getMessage()));
      } catch (IOException io) {
        LOG.error("Cannot report MIG layout of node {} GPU {}: {}", zkNode, index, io.getMessage());
      }
      LOG.warn("MIG re-partition refused: node {} GPU {}: {}", zkNode, index, e.getMessage());
    } catch (IOException e) {
      LOG.error("Cannot report MIG layout of node {} GPU {}: {}", zkNode, index, e.getMessage());
    }
  }

  private static MigLayoutRecord record(String zkNode, NodeSpec node, int index, boolean mig,
      List<io.spindle.ha.avro.MigInstanceRecord> instances, long version, String error) {
    return MigLayoutRecord.newBuilder()
        .setNode(zkNode)
        .setGpuIndex(index)
        .setMigEnabled(mig)
        .setInstances(new ArrayList<>(instances))
        .setVersion(version)
        .setUpdatedMillis(System.currentTimeMillis())
        .setGpuModel(node.model().name())
        .setGpuUuid(fakeUuid(node.name(), index))
        .setNvlinkIsland(node.nvlinkIsland(index))
        .setError(error)
        .build();
  }

  /** A stable made-up GPU UUID in NVIDIA's format, so the same node and index always get the same one. */
  static String fakeUuid(String node, int index) {
    return "GPU-" + UUID.nameUUIDFromBytes(("spindle-local/" + node + "/" + index).getBytes(StandardCharsets.UTF_8));
  }

  @Override
  public synchronized void close() {
    for (Closeable c : watches) {
      try {
        c.close();
      } catch (IOException | RuntimeException e) {
        LOG.debug("closing a MIG watch: {}", e.getMessage());
      }
    }
    watches.clear();
  }
}
