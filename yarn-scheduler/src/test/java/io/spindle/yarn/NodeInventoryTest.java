package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.channel.mig.MigLayoutExchange;
import io.spindle.channel.mig.MigStateStore;
import io.spindle.channel.share.ShareAssignmentStore;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuIsolation;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.Node;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.GpuSlot;
import io.spindle.ha.ZkSettings;
import io.spindle.ha.avro.MigInstanceRecord;
import io.spindle.ha.avro.MigLayoutRecord;
import io.spindle.ha.avro.ShareAssignmentRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The scheduler's view of node GPUs and the MIG layout exchange, against a real ZooKeeper server. */
class NodeInventoryTest {

  private static final GpuModelCatalog CATALOG = GpuModelCatalog.builtIn();
  private static final GpuModel H100 = CATALOG.require("model", "H100-80GB");
  private static final long TIMEOUT_MS = 60_000;

  private TestingServer zk;
  private CuratorFramework agentSide;
  private MigStateStore agentStore;
  private MigLayoutExchange exchange;
  private final LinkedBlockingQueue<MigLayoutRecord> reports = new LinkedBlockingQueue<>();
  private final AtomicLong now = new AtomicLong(1_000);
  private NodeInventory inventory;
  private final NodeId node = NodeId.newInstance("gpu3.example", 8041);

  @BeforeAll
  static void gpuResourceType() {
    Configuration c = new YarnConfiguration();
    c.set(YarnConfiguration.RESOURCE_TYPES, "yarn.io/gpu");
    ResourceUtils.resetResourceTypes(c);
  }

  @BeforeEach
  void start() throws Exception {
    zk = new TestingServer(true);
    agentSide = CuratorFrameworkFactory.newClient(zk.getConnectString(), new RetryOneTime(100));
    agentSide.start();
    agentStore = new MigStateStore(agentSide, "/spindle/test");
    exchange = MigLayoutExchange.start(new ZkSettings(zk.getConnectString(), "/spindle/test"), reports::add);
    inventory = new NodeInventory(CATALOG, new YarnResources(CATALOG, H100, 8), exchange, TIMEOUT_MS, now::get);
  }

  @AfterEach
  void stop() throws Exception {
    exchange.close();
    agentSide.close();
    zk.close();
  }

  @Test
  void aNodeWithoutReportsIsModelledFromItsWholeGpusThenRebuiltFromItsReports() throws Exception {
    Node provisional = inventory.register(node, "/rack1", resources(2), "");
    assertThat(provisional.gpus()).extracting(Gpu::migEnabled).containsExactly(false, false);

    report(0, false, List.of(), 0);
    report(1, true, List.of(new MigInstanceRecord("3g.40gb", 0), new MigInstanceRecord("3g.40gb", 4)), 0);
    MigLayoutRecord first = next();
    assertThat(inventory.onReport(first)).isEqualTo(new NodeInventory.Outcome.Rebuild(node));

    awaitMirrored(2);
    Node rebuilt = inventory.rebuild(node).orElseThrow();
    assertThat(rebuilt.id().value()).isEqualTo(node.toString());
    assertThat(rebuilt.gpus()).extracting(Gpu::migEnabled).containsExactly(false, true);
    assertThat(rebuilt.gpus().get(1).migLayout().placements()).extracting(MigPlacement::start).containsExactly(0, 4);
    assertThat(rebuilt.gpus().get(1).nvlinkIsland()).isEqualTo(3);
  }

  @Test
  void aReconfigurationIsWrittenAsDesiredStateAndOnlyItsAnswerReachesTheEngine() throws Exception {
    report(0, true, List.of(new MigInstanceRecord("7g.80gb", 0)), 0);
    next();
    awaitMirrored(1);
    inventory.register(node, "/rack1", resources(0), "");

    MigLayout wanted = MigLayout.empty(H100).with(new MigPlacement(H100.profile("3g.40gb").orElseThrow(), 0))
        .with(new MigPlacement(H100.profile("3g.40gb").orElseThrow(), 4));
    assertThat(inventory.request(new Decision.ReconfigureMig(YarnIds.node(node), 0, wanted, 0))).isEmpty();
    MigLayoutRecord desired = awaitDesired(1);
    assertThat(desired.getNode()).isEqualTo("gpu3.example:8041");
    assertThat(desired.getInstances()).extracting(MigInstanceRecord::getStart).containsExactly(0, 4);

    // A report that answers an older version (here: a late re-send of the first) is ignored.
    report(0, true, List.of(new MigInstanceRecord("7g.80gb", 0)), 0);
    assertThat(inventory.onReport(next())).isInstanceOf(NodeInventory.Outcome.Ignore.class);

    report(0, true, desired.getInstances(), 1);
    assertThat(inventory.onReport(next())).isEqualTo(new NodeInventory.Outcome.Report(
        new EngineEvent.MigLayoutReported(YarnIds.node(node), 0, wanted)));
    now.addAndGet(TIMEOUT_MS);
    assertThat(inventory.overdueAnswers()).isEmpty();
  }

  @Test
  void anUnansweredReconfigurationGivesTheGpuBackWithItsLastLayoutAfterTheTimeout() throws Exception {
    report(0, true, List.of(new MigInstanceRecord("7g.80gb", 0)), 0);
    next();
    awaitMirrored(1);
    Node n = inventory.register(node, "/rack1", resources(0), "");
    MigLayout current = n.gpus().get(0).migLayout();
    inventory.request(new Decision.ReconfigureMig(YarnIds.node(node), 0, MigLayout.empty(H100), 0));

    now.addAndGet(TIMEOUT_MS - 1);
    assertThat(inventory.overdueAnswers()).isEmpty();
    now.addAndGet(1);
    assertThat(inventory.overdueAnswers()).containsExactly(
        new EngineEvent.MigLayoutReported(YarnIds.node(node), 0, current));
    assertThat(inventory.overdueAnswers()).isEmpty();
  }

  @Test
  void sharedGpusAreModelledFromTheirReportedModeAndAModeChangeRebuildsTheNode() throws Exception {
    report(0, "mps");
    report(1, "time-slice");
    report(2, false, List.of(), 0);
    next();
    awaitMirrored(3);

    Node n = inventory.register(node, "/rack1", resources(0), "");

    assertThat(n.gpus()).extracting(Gpu::sharing).containsExactly(GpuSharing.MPS, GpuSharing.TIME_SLICE,
        GpuSharing.EXCLUSIVE);
    assertThat(n.gpus()).extracting(Gpu::sharesBelowWhole).containsExactly(true, true, false);
    reports.clear();
    report(1, "mps");
    assertThat(inventory.onReport(nextFor(1))).isEqualTo(new NodeInventory.Outcome.Rebuild(node));
  }

  @Test
  void aShareContainersGpuIsPublishedForItsNodeAndWithdrawnWhenItEnds() throws Exception {
    report(0, "exclusive");
    report(1, "mps");
    next();
    awaitMirrored(2);
    inventory.register(node, "/rack1", resources(0), "");
    ContainerId container = ContainerId.newContainerId(
        ApplicationAttemptId.newInstance(ApplicationId.newInstance(1_700_000_000_000L, 7), 1), 3);
    Resources shape = Resources.of(4_096, 2).withShare(250, 10_240, GpuIsolation.ANY);

    inventory.shareAllocated(container, new Decision.Allocate(11, AppId.of("application_1700000000000_0007"), "r1",
        YarnIds.node(node), shape, List.of(GpuSlot.shareOf(1)), ResourceVector.of(4_096, 2, 0)));

    ShareAssignmentStore nodeSide = new ShareAssignmentStore(agentSide, "/spindle/test");
    ShareAssignmentRecord published = await(() -> nodeSide.read("gpu3.example:8041", container.toString()), true);
    assertThat(published.getGpuIndex()).isEqualTo(1);
    assertThat(published.getMilli()).isEqualTo(250);
    assertThat(published.getMemoryMb()).isEqualTo(10_240);
    assertThat(published.getSharing()).isEqualTo("mps");
    assertThat(published.getContainerId()).isEqualTo("container_1700000000000_0007_01_000003");

    inventory.shareEnded(container);
    await(() -> nodeSide.read("gpu3.example:8041", container.toString()), false);

    // A whole-GPU container publishes nothing.
    ContainerId whole = ContainerId.newContainerId(container.getApplicationAttemptId(), 4);
    inventory.shareAllocated(whole, new Decision.Allocate(12, AppId.of("application_1700000000000_0007"), "r2",
        YarnIds.node(node), Resources.of(1, 1).withGpus(1), List.of(GpuSlot.whole(0)), ResourceVector.of(1, 1, 1)));
    inventory.shareEnded(whole);
    Thread.sleep(200);
    assertThat(nodeSide.read("gpu3.example:8041", whole.toString())).isEmpty();
  }

  @Test
  void withoutZooKeeperOnlyWholeGpusAreModelledAndNothingCanBeReconfigured() {
    NodeInventory local = new NodeInventory(CATALOG, new YarnResources(CATALOG, H100, 8), null, TIMEOUT_MS,
        now::get);
    assertThat(local.canReconfigure()).isFalse();
    Node n = local.register(node, "/rack1", resources(4), "");
    assertThat(n.gpus()).hasSize(4).noneMatch(Gpu::migEnabled);
  }

  private static Resource resources(int gpus) {
    Resource r = Resource.newInstance(65_536, 32);
    r.setResourceValue("yarn.io/gpu", gpus);
    return r;
  }

  private void report(int gpu, boolean mig, List<MigInstanceRecord> instances, long version) throws Exception {
    agentStore.writeReported(MigLayoutRecord.newBuilder()
        .setNode("gpu3.example:8041")
        .setGpuIndex(gpu)
        .setMigEnabled(mig)
        .setInstances(new ArrayList<>(instances))
        .setVersion(version)
        .setUpdatedMillis(now.get())
        .setGpuModel("H100-80GB")
        .setNvlinkIsland(3)
        .build());
  }

  /** A GPU outside MIG mode in a sharing mode. */
  private void report(int gpu, String sharing) throws Exception {
    agentStore.writeReported(MigLayoutRecord.newBuilder()
        .setNode("gpu3.example:8041")
        .setGpuIndex(gpu)
        .setMigEnabled(false)
        .setInstances(new ArrayList<>())
        .setVersion(0)
        .setUpdatedMillis(now.get())
        .setGpuModel("H100-80GB")
        .setNvlinkIsland(3)
        .setSharing(sharing)
        .setMemoryMb(81_559)
        .build());
  }

  private MigLayoutRecord nextFor(int gpu) throws InterruptedException {
    MigLayoutRecord r = next();
    while (r.getGpuIndex() != gpu) {
      r = next();
    }
    return r;
  }

  private interface Read {
    Optional<ShareAssignmentRecord> read() throws Exception;
  }

  /** Waits until the assignment is there ({@code present}) or gone. */
  private static ShareAssignmentRecord await(Read read, boolean present) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    Optional<ShareAssignmentRecord> r = read.read();
    while (r.isPresent() != present && System.nanoTime() < deadline) {
      Thread.sleep(20);
      r = read.read();
    }
    assertThat(r.isPresent()).isEqualTo(present);
    return r.orElse(null);
  }

  private MigLayoutRecord next() throws InterruptedException {
    MigLayoutRecord r = reports.poll(10, TimeUnit.SECONDS);
    assertThat(r).as("a report within 10 s").isNotNull();
    return r;
  }

  private void awaitMirrored(int gpus) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (exchange.reported("gpu3.example:8041").size() < gpus && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(exchange.reported("gpu3.example:8041")).hasSize(gpus);
  }

  private MigLayoutRecord awaitDesired(long version) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    Optional<MigLayoutRecord> d = agentStore.desired("gpu3.example:8041", 0);
    while ((d.isEmpty() || d.get().getVersion() < version) && System.nanoTime() < deadline) {
      Thread.sleep(20);
      d = agentStore.desired("gpu3.example:8041", 0);
    }
    assertThat(d).isPresent();
    return d.get();
  }
}
