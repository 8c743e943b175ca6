package io.spindle.channel.mig;

import io.spindle.ha.Fence;
import io.spindle.ha.FencedException;
import io.spindle.ha.avro.MigLayoutRecord;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Desired and reported MIG layouts in ZooKeeper. The scheduler writes a GPU's desired layout; the node applies it
 * when the GPU is idle and writes what it then has as the reported layout, carrying the desired version it answers.
 * The scheduler counts a layout's slots only once a report with that version arrives.
 *
 * <p>The store does not own the Curator client: the process that starts the client closes it.
 */
public final class MigStateStore {

  private static final Logger LOG = LoggerFactory.getLogger(MigStateStore.class);

  private final CuratorFramework client;
  private final MigStatePaths paths;
  private final Fence desiredFence;
  private final List<ACL> desiredAcl;

  public MigStateStore(CuratorFramework client, String root) {
    this(client, root, Fence.NONE, ZooDefs.Ids.OPEN_ACL_UNSAFE);
  }

  /**
   * {@code desiredFence}: what a desired layout's write must prove, so that only the leading scheduler's lands;
   * {@code desiredAcl}: who may write desired layouts at all (the scheduler's identity: a desired layout makes a
   * node destroy and create MIG instances, so nobody else may write one).
   */
  public MigStateStore(CuratorFramework client, String root, Fence desiredFence, List<ACL> desiredAcl) {
    this.client = client;
    this.paths = new MigStatePaths(root);
    this.desiredFence = desiredFence;
    this.desiredAcl = List.copyOf(desiredAcl);
  }

  public MigStatePaths paths() {
    return paths;
  }

  /** The scheduler's side: asks {@code record.node}'s GPU for a layout. */
  public void writeDesired(MigLayoutRecord record) throws IOException {
    String path = paths.desired(record.getNode(), record.getGpuIndex());
    byte[] bytes = MigLayoutRecords.encode(record);
    try {
      if (client.checkExists().forPath(path) == null) {
        String parent = path.substring(0, path.lastIndexOf('/'));
        try {
          client.create().creatingParentsIfNeeded().forPath(parent);
        } catch (KeeperException.NodeExistsException ignored) {
          // The node's agent or an earlier write made it.
        }
        desiredFence.commit(client, "desired MIG layout " + path,
            client.transactionOp().create().withACL(desiredAcl).forPath(path, bytes));
      } else {
        // A znode made by someone else (or before an identity was configured) is taken back first.
        if (!client.getACL().forPath(path).equals(desiredAcl)) {
          client.setACL().withACL(desiredAcl).forPath(path);
        }
        desiredFence.commit(client, "desired MIG layout " + path, client.transactionOp().setData().forPath(path, bytes));
      }
    } catch (FencedException e) {
      throw new IOException(e.getMessage(), e);
    } catch (Exception e) {
      throw new IOException("cannot write " + path + ": " + e.getMessage(), e);
    }
  }

  /** The node's side: what a GPU has now. */
  public void writeReported(MigLayoutRecord record) throws IOException {
    write(paths.reported(record.getNode(), record.getGpuIndex()), record);
  }

  public Optional<MigLayoutRecord> desired(String node, int gpuIndex) throws IOException {
    return read(paths.desired(node, gpuIndex));
  }

  public Optional<MigLayoutRecord> reported(String node, int gpuIndex) throws IOException {
    return read(paths.reported(node, gpuIndex));
  }

  /** Every GPU's reported layout on a node, by GPU index. */
  public List<MigLayoutRecord> reportedAll(String node) throws IOException {
    String gpus = paths.gpus(node);
    List<MigLayoutRecord> out = new ArrayList<>();
    try {
      List<Integer> indices = new ArrayList<>();
      for (String child : client.getChildren().forPath(gpus)) {
        indices.add(Integer.parseInt(child));
      }
      indices.sort(null);
      for (int index : indices) {
        reported(node, index).ifPresent(out::add);
      }
      return out;
    } catch (KeeperException.NoNodeException e) {
      return List.of();
    } catch (NumberFormatException e) {
      throw new IOException("unexpected child of " + gpus + ": " + e.getMessage(), e);
    } catch (IOException e) {
      throw e;
    } catch (Exception e) {
      throw new IOException("cannot list " + gpus + ": " + e.getMessage(), e);
    }
  }

  /**
   * Calls {@code listener} with every desired layout of {@code node}'s GPUs: once for each that exists when the
   * watch starts, then on every change. Runs on Curator's event thread; hand long work to another thread.
   *
   * @return closing it ends the watch
   */
  public Closeable watchDesired(String node, Consumer<MigLayoutRecord> listener) {
    String base = paths.gpus(node);
    CuratorCache cache = CuratorCache.build(client, base);
    cache.listenable().addListener(CuratorCacheListener.builder()
        .forCreatesAndChanges((before, now) -> onDesired(now, listener))
        .build());
    cache.start();
    return cache::close;
  }

  private static void onDesired(ChildData data, Consumer<MigLayoutRecord> listener) {
    if (!data.getPath().endsWith("/" + MigStatePaths.DESIRED)) {
      return;
    }
    try {
      listener.accept(MigLayoutRecords.decode(data.getData()));
    } catch (IOException e) {
      LOG.error("Ignoring unreadable desired MIG layout at {}: {}", data.getPath(), e.getMessage());
    }
  }

  private void write(String path, MigLayoutRecord record) throws IOException {
    byte[] bytes = MigLayoutRecords.encode(record);
    try {
      client.create().orSetData().creatingParentsIfNeeded().forPath(path, bytes);
    } catch (Exception e) {
      throw new IOException("cannot write " + path + ": " + e.getMessage(), e);
    }
  }

  private Optional<MigLayoutRecord> read(String path) throws IOException {
    byte[] bytes;
    try {
      bytes = client.getData().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      return Optional.empty();
    } catch (Exception e) {
      throw new IOException("cannot read " + path + ": " + e.getMessage(), e);
    }
    try {
      return Optional.of(MigLayoutRecords.decode(bytes));
    } catch (IOException e) {
      throw new IOException(path + ": " + e.getMessage(), e);
    }
  }
}
