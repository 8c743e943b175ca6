package io.spindle.channel.mig;

import io.spindle.channel.ChannelSession;
import io.spindle.channel.share.ShareAssignmentStore;
import io.spindle.ha.BackgroundWriter;
import io.spindle.ha.Fence;
import io.spindle.ha.ZkSettings;
import io.spindle.ha.avro.MigLayoutRecord;
import io.spindle.ha.avro.ShareAssignmentRecord;
import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler's side of the MIG layout exchange in ZooKeeper ({@link MigStatePaths}). It mirrors every node's
 * reported and desired layouts in memory (a {@link CuratorCache}) so the ResourceManager never waits on ZooKeeper:
 * reads come from the mirror, and desired layouts are written on a thread of their own. Each report, when it is
 * created or changed, goes to the listener given at start.
 *
 * <p>Share assignments ({@link ShareAssignmentStore}) travel the same way: written and deleted on the same thread,
 * so a container's deletion never overtakes its write. The mirror's share znodes tell which node a container's
 * assignment is on when this scheduler did not write it (a predecessor did, before a failover).
 */
public final class MigLayoutExchange implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(MigLayoutExchange.class);

  private final ChannelSession session;
  private final MigStateStore store;
  private final ShareAssignmentStore shares;
  private final CuratorCache mirror;
  private final ExecutorService writer;
  /** Container id to the node its assignment is under, for every assignment written or mirrored. */
  private final Map<String, String> shareNodes = new ConcurrentHashMap<>();

  private MigLayoutExchange(ChannelSession session, String root, Fence fence, List<ACL> acl,
      Consumer<MigLayoutRecord> onReported) {
    this.session = session;
    this.store = new MigStateStore(session.client(), root, fence, acl);
    this.shares = new ShareAssignmentStore(session.client(), root, fence, acl);
    this.mirror = CuratorCache.build(session.client(), store.paths().nodes());
    this.writer = BackgroundWriter.start("spindle-mig-desired-writer");
    mirror.listenable().addListener(CuratorCacheListener.builder()
        .forCreatesAndChanges((before, now) -> {
          if (now.getPath().endsWith("/" + MigStatePaths.REPORTED)) {
            decode(now).ifPresent(onReported);
          }
        })
        .forCreates(created -> shareOf(created.getPath())
            .ifPresent(k -> shareNodes.putIfAbsent(k.containerId(), k.node())))
        .build());
  }

  /**
   * Connects to {@code settings}' quorum and starts mirroring. Does not wait for the connection: until it is up the
   * mirror is empty and nodes are scheduled from what their NodeManagers advertise.
   */
  public static MigLayoutExchange start(ZkSettings settings, Consumer<MigLayoutRecord> onReported) {
    MigLayoutExchange exchange = new MigLayoutExchange(ChannelSession.connect(settings, List.of()), settings.root(),
        Fence.NONE, ZooDefs.Ids.OPEN_ACL_UNSAFE, onReported);
    exchange.mirror.start();
    LOG.info("Spindle reads MIG layouts from ZooKeeper {} under {}", settings.address(), settings.root());
    return exchange;
  }

  /**
   * As {@link #start(ZkSettings, Consumer)} on a started client the caller owns and closes; desired layouts are
   * written behind {@code fence}, so a deposed scheduler can never re-partition a GPU, with {@code acl}, so nobody
   * but the scheduler can.
   */
  public static MigLayoutExchange start(CuratorFramework client, String root, Fence fence, List<ACL> acl,
      Consumer<MigLayoutRecord> onReported) {
    MigLayoutExchange exchange = new MigLayoutExchange(ChannelSession.shared(client), root, fence, acl, onReported);
    exchange.mirror.start();
    return exchange;
  }

  /** {@code node}'s reported GPUs by index, as last mirrored; empty when its agent has not reported. */
  public Map<Integer, MigLayoutRecord> reported(String node) {
    Map<Integer, MigLayoutRecord> out = new TreeMap<>();
    String prefix = store.paths().gpus(node) + "/";
    mirror.stream()
        .filter(d -> d.getPath().startsWith(prefix) && d.getPath().endsWith("/" + MigStatePaths.REPORTED))
        .forEach(d -> decode(d).ifPresent(r -> out.put(r.getGpuIndex(), r)));
    return out;
  }

  /** The desired layout last written for a GPU, as mirrored (after an RM restart: what the previous RM asked). */
  public Optional<MigLayoutRecord> desired(String node, int gpuIndex) {
    return mirror.get(store.paths().desired(node, gpuIndex)).flatMap(MigLayoutExchange::decode);
  }

  /** Writes a desired layout in the background; a failure is logged (the answer timeout then frees the GPU). */
  public void requestLayout(MigLayoutRecord desired) {
    writer.execute(() -> {
      try {
        store.writeDesired(desired);
      } catch (IOException e) {
        LOG.error("Cannot ask node {} GPU {} for MIG layout version {}: {}", desired.getNode(),
            desired.getGpuIndex(), desired.getVersion(), e.getMessage());
      }
    });
  }

  /**
   * Records in the background which GPU a share container got; a failure is logged, and the node then chooses by
   * the scheduler's rule itself.
   */
  public void publishShare(ShareAssignmentRecord assignment) {
    shareNodes.put(assignment.getContainerId(), assignment.getNode());
    writer.execute(() -> {
      try {
        shares.write(assignment);
      } catch (IOException e) {
        LOG.error("Cannot tell node {} which GPU container {} shares (GPU {}); the node chooses by the scheduler's "
            + "rule: {}", assignment.getNode(), assignment.getContainerId(), assignment.getGpuIndex(),
            e.getMessage());
      }
    });
  }

  /** Deletes a container's share assignment in the background, if it has one. */
  public void withdrawShare(String containerId) {
    String node = shareNodes.remove(containerId);
    if (node == null) {
      return;
    }
    writer.execute(() -> {
      try {
        shares.delete(node, containerId);
      } catch (IOException e) {
        LOG.warn("Cannot delete the share assignment of ended container {} on node {}: {}", containerId, node,
            e.getMessage());
      }
    });
  }

  /** Where a share assignment is. */
  private record ShareKey(String node, String containerId) {}

  /** The share assignment a path holds, empty for any other path. */
  private Optional<ShareKey> shareOf(String path) {
    String prefix = store.paths().nodes() + "/";
    if (!path.startsWith(prefix)) {
      return Optional.empty();
    }
    String[] parts = path.substring(prefix.length()).split("/");
    return parts.length == 3 && parts[1].equals(MigStatePaths.SHARES) ? Optional.of(new ShareKey(parts[0], parts[2]))
        : Optional.empty();
  }

  private static Optional<MigLayoutRecord> decode(ChildData data) {
    try {
      return Optional.of(MigLayoutRecords.decode(data.getData()));
    } catch (IOException e) {
      LOG.error("Ignoring unreadable MIG layout record at {}: {}", data.getPath(), e.getMessage());
      return Optional.empty();
    }
  }

  @Override
  public void close() {
    BackgroundWriter.stop(writer, LOG, "Desired MIG layouts");
    mirror.close();
    session.close();
  }
}
