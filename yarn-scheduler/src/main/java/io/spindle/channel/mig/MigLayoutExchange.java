package io.spindle.channel.mig;

import io.spindle.channel.ChannelSession;
import io.spindle.ha.BackgroundWriter;
import io.spindle.ha.Fence;
import io.spindle.ha.ZkSettings;
import io.spindle.ha.avro.MigLayoutRecord;
import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
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
 */
public final class MigLayoutExchange implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(MigLayoutExchange.class);

  private final ChannelSession session;
  private final MigStateStore store;
  private final CuratorCache mirror;
  private final ExecutorService writer;

  private MigLayoutExchange(ChannelSession session, String root, Fence fence, List<ACL> acl,
      Consumer<MigLayoutRecord> onReported) {
    this.session = session;
    this.store = new MigStateStore(session.client(), root, fence, acl);
    this.mirror = CuratorCache.build(session.client(), store.paths().nodes());
    this.writer = BackgroundWriter.start("spindle-mig-desired-writer");
    mirror.listenable().addListener(CuratorCacheListener.builder()
        .forCreatesAndChanges((before, now) -> {
          if (now.getPath().endsWith("/" + MigStatePaths.REPORTED)) {
            decode(now).ifPresent(onReported);
          }
        })
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
