package io.spindle.nm;

import io.spindle.channel.mig.MigLayoutRecords;
import io.spindle.channel.mig.MigStateStore;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigLayout;
import io.spindle.ha.avro.MigLayoutRecord;
import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntPredicate;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's half of MIG re-partitioning. Reports every GPU (model, NVLink island, MIG layout, sharing mode and
 * memory) to ZooKeeper when it starts, watches the desired layouts the scheduler writes for this node, applies each
 * one with {@link MigReconfigurer} as soon as the instances it destroys are idle (trying again every retry interval
 * while they are not; instances it only creates never wait), and reports the layout the GPU then has, with the
 * desired version it answers.
 *
 * <p>All work runs on one thread, so the pending set and the versions need no locks, and two layouts never reach
 * one GPU at once.
 */
public final class MigStateAgent implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(MigStateAgent.class);

  private final String node;
  private final MigStateStore store;
  private final GpuDiscovery discovery;
  private final MigReconfigurer reconfigurer;
  private final IntPredicate reserved;
  private final Consumer<GpuInventory> onLayoutChange;
  private final LongSupplier clock;
  private final Duration retryInterval;
  private final ScheduledExecutorService executor;

  /** Desired layouts not yet answered, by GPU index. */
  private final Map<Integer, MigLayoutRecord> pending = new HashMap<>();
  /** The desired version each GPU's last report answered. */
  private final Map<Integer, Long> answered = new HashMap<>();
  /** The desired version for which "waiting for idle" was logged, so a busy GPU costs one line, not one per try. */
  private final Map<Integer, Long> waitLogged = new HashMap<>();
  /** Reports ZooKeeper did not take (it was unreachable); written again on every retry until it does. */
  private final Map<Integer, MigLayoutRecord> unsent = new HashMap<>();
  private Closeable watch;
  /** Judges the GPUs' health every {@code healthInterval}; {@code null}: health is not watched. */
  private GpuHealthMonitor health;
  private Duration healthInterval;

  /**
   * @param node this node's name in ZooKeeper (its host name, as the scheduler knows it)
   * @param reserved whether a container holds or was just given an instance of a GPU, by index
   * @param onLayoutChange called with the fresh inventory after a GPU's layout changed, so the device plugins hand
   *     out the new instances
   */
  public MigStateAgent(String node, MigStateStore store, GpuDiscovery discovery, MigReconfigurer reconfigurer,
      IntPredicate reserved, Consumer<GpuInventory> onLayoutChange, LongSupplier clock, Duration retryInterval) {
    this.node = node;
    this.store = store;
    this.discovery = discovery;
    this.reconfigurer = reconfigurer;
    this.reserved = reserved;
    this.onLayoutChange = onLayoutChange;
    this.clock = clock;
    this.retryInterval = retryInterval;
    this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "spindle-mig-agent");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Also judges the GPUs' health every {@code every} and reports each GPU whose health changed, beside its layout.
   * Call before {@link #start}.
   */
  public void watchHealth(GpuHealthMonitor monitor, Duration every) {
    this.health = monitor;
    this.healthInterval = every;
  }

  /** Reports the GPUs and starts watching; returns at once (ZooKeeper may still be connecting). */
  public void start() {
    if (health != null) {
      executor.execute(health::check); // Judged before the first report, so that it carries the health.
    }
    executor.execute(this::reportAll);
    if (health != null) {
      long h = healthInterval.toMillis();
      executor.scheduleWithFixedDelay(this::checkHealth, h, h, TimeUnit.MILLISECONDS);
    }
    executor.execute(() -> watch = store.watchDesired(node, record -> executor.execute(() -> receive(record))));
    long every = retryInterval.toMillis();
    executor.scheduleWithFixedDelay(this::retryPending, every, every, TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    executor.execute(() -> {
      if (watch != null) {
        try {
          watch.close();
        } catch (IOException e) {
          LOG.warn("Closing the desired-layout watch of node {} failed: {}", node, e.getMessage());
        }
      }
    });
    executor.shutdown();
    try {
      if (!executor.awaitTermination(retryInterval.toMillis() + 5_000, TimeUnit.MILLISECONDS)) {
        executor.shutdownNow();
      }
    } catch (InterruptedException e) {
      executor.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  private void reportAll() {
    GpuInventory inventory = discovery.discover();
    for (DiscoveredGpu gpu : inventory.gpus()) {
      long version = 0;
      try {
        Optional<MigLayoutRecord> earlier = store.reported(node, gpu.index());
        if (earlier.isPresent()) {
          version = earlier.get().getVersion();
        }
      } catch (IOException e) {
        LOG.error("Cannot read the earlier report of node {} GPU {}: {}", node, gpu.index(), e.getMessage());
      }
      answered.put(gpu.index(), version);
      report(gpu.index(), gpu.migEnabled(), gpu.layout(), gpu, version, null);
    }
    LOG.info("Reported {} GPU(s) of node {} to ZooKeeper", inventory.gpus().size(), node);
  }

  /** Reports the GPUs whose health changed: the layout as last reported, with the new health. */
  private void checkHealth() {
    health.check().forEach((index, judged) -> {
      MigLayoutRecord base = unsent.get(index);
      try {
        if (base == null) {
          base = store.reported(node, index).orElse(null);
        }
      } catch (IOException e) {
        LOG.warn("Cannot read node {} GPU {}'s report to add its health (sent with the next report): {}", node,
            index, e.getMessage());
      }
      if (base != null) {
        send(MigLayoutRecords.withHealth(MigLayoutRecord.newBuilder(base).setUpdatedMillis(clock.getAsLong())
            .build(), judged));
      } else {
        discovery.discover().gpu(index).ifPresent(g ->
            report(index, g.migEnabled(), g.layout(), g, answered.getOrDefault(index, 0L), null));
      }
    });
  }

  private void receive(MigLayoutRecord desired) {
    int gpu = desired.getGpuIndex();
    if (desired.getVersion() <= answered.getOrDefault(gpu, 0L)) {
      return;
    }
    LOG.info("Node {} GPU {}: desired MIG layout v{} {}", node, gpu, desired.getVersion(),
        describe(desired));
    pending.put(gpu, desired);
    attempt(gpu);
  }

  private void retryPending() {
    for (MigLayoutRecord record : new ArrayList<>(unsent.values())) {
      send(record);
    }
    for (int gpu : new ArrayList<>(pending.keySet())) {
      attempt(gpu);
    }
  }

  private void attempt(int gpuIndex) {
    MigLayoutRecord desired = pending.get(gpuIndex);
    Optional<DiscoveredGpu> gpu = discovery.discover().gpu(gpuIndex);
    if (gpu.isEmpty()) {
      finish(desired, false, null, null, "GPU " + gpuIndex + " is not among the GPUs discovery advertises");
      return;
    }
    if (!desired.getMigEnabled() || !gpu.get().migEnabled()) {
      finish(desired, gpu.get().migEnabled(), gpu.get().layout(), gpu.get(), desired.getMigEnabled()
          ? "GPU " + gpuIndex + " has MIG mode disabled; enabling it needs a GPU reset, which Spindle leaves to the "
              + "administrator"
          : "disabling MIG mode needs a GPU reset, which Spindle leaves to the administrator");
      return;
    }
    MigLayout layout;
    try {
      layout = MigLayoutRecords.layout(desired, gpu.get().model());
    } catch (InvalidInputException e) {
      finish(desired, true, gpu.get().layout(), gpu.get(), "desired layout is not legal: " + e.getMessage());
      return;
    }
    MigReconfigurer.Outcome outcome = reconfigurer.apply(gpuIndex, layout, reserved.test(gpuIndex));
    switch (outcome.status()) {
      case BUSY -> {
        if (!Long.valueOf(desired.getVersion()).equals(waitLogged.get(gpuIndex))) {
          waitLogged.put(gpuIndex, desired.getVersion());
          LOG.info("Node {} GPU {}: desired layout v{} waits: {}", node, gpuIndex, desired.getVersion(),
              outcome.detail());
        }
      }
      case UNCHANGED, APPLIED -> finish(desired, true, outcome.layout(), gpu.get(), null);
      case FAILED -> finish(desired, true, outcome.layout(), gpu.get(), outcome.detail());
      default -> throw new IllegalStateException("unknown outcome " + outcome.status());
    }
  }

  /** Answers a desired layout: reports what the GPU has now, with the error when it is not what was asked. */
  private void finish(MigLayoutRecord desired, boolean migEnabled, MigLayout layout, DiscoveredGpu gpu,
      String error) {
    int gpuIndex = desired.getGpuIndex();
    pending.remove(gpuIndex);
    waitLogged.remove(gpuIndex);
    answered.put(gpuIndex, desired.getVersion());
    if (error != null) {
      LOG.error("Node {} GPU {}: desired layout v{} not applied: {}", node, gpuIndex, desired.getVersion(), error);
    }
    // The device plugins learn the new instances before the scheduler does: once the report lands, the scheduler
    // places containers on them, and the node must already hand them out.
    onLayoutChange.accept(discovery.discover());
    report(gpuIndex, migEnabled, layout, gpu, desired.getVersion(), error);
  }

  private void report(int gpuIndex, boolean migEnabled, MigLayout layout, DiscoveredGpu gpu, long version,
      String error) {
    MigLayoutRecord record = MigLayoutRecord.newBuilder()
        .setNode(node)
        .setGpuIndex(gpuIndex)
        .setMigEnabled(migEnabled)
        .setInstances(layout == null ? List.of() : MigLayoutRecords.instances(layout))
        .setVersion(version)
        .setUpdatedMillis(clock.getAsLong())
        .setGpuModel(gpu == null ? null : gpu.model().name())
        .setGpuUuid(gpu == null ? null : gpu.uuid())
        .setNvlinkIsland(gpu == null ? -1 : gpu.nvlinkIsland())
        .setError(error)
        .setSharing(gpu == null || migEnabled ? GpuSharing.EXCLUSIVE.text() : gpu.sharing().text())
        .setMemoryMb(gpu == null ? 0 : gpu.memoryMb())
        .build();
    send(health == null ? record : MigLayoutRecords.withHealth(record, health.of(gpuIndex)));
  }

  private void send(MigLayoutRecord record) {
    int gpuIndex = record.getGpuIndex();
    try {
      store.writeReported(record);
      if (unsent.remove(gpuIndex) != null) {
        LOG.info("Node {} GPU {}: report reached ZooKeeper", node, gpuIndex);
      }
    } catch (IOException e) {
      if (unsent.put(gpuIndex, record) == null) {
        LOG.error("Cannot report node {} GPU {} to ZooKeeper (will retry): {}", node, gpuIndex, e.getMessage());
      }
    }
  }

  private static String describe(MigLayoutRecord record) {
    List<String> parts = new ArrayList<>();
    record.getInstances().forEach(i -> parts.add(i.getProfile() + "@" + i.getStart()));
    return parts.toString();
  }
}
