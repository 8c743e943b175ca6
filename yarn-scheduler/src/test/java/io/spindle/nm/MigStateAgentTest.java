package io.spindle.nm;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.channel.mig.MigLayoutRecords;
import io.spindle.channel.mig.MigStateStore;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.ha.avro.MigInstanceRecord;
import io.spindle.ha.avro.MigLayoutRecord;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The scheduler writes a desired layout; the node applies it once the GPU is idle and reports the result. */
class MigStateAgentTest {

  private static final String NODE = "a100-node-1";
  private static TestingServer zk;
  private static CuratorFramework client;

  @TempDir
  Path temp;

  private MigStateAgent agent;
  private final List<GpuInventory> layoutChanges = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void startZooKeeper() throws Exception {
    zk = new TestingServer(true);
    client = CuratorFrameworkFactory.newClient(zk.getConnectString(), new RetryOneTime(100));
    client.start();
    client.blockUntilConnected();
  }

  @AfterAll
  static void stopZooKeeper() throws Exception {
    client.close();
    zk.close();
  }

  @AfterEach
  void stopAgent() {
    if (agent != null) {
      agent.close();
    }
  }

  @Test
  void reportsEveryGpuOnStart() throws Exception {
    MigStateStore store = store("start");
    start(FakeNvidiaSmi.of("a100-mig", temp), store, new AtomicBoolean(false));

    List<MigLayoutRecord> reported = awaitReports(store, 2);

    MigLayoutRecord mig = reported.get(0);
    assertThat(mig.getMigEnabled()).isTrue();
    assertThat(mig.getVersion()).isZero();
    assertThat(mig.getGpuModel()).isEqualTo("A100-40GB");
    assertThat(mig.getGpuUuid()).isEqualTo("GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77");
    assertThat(mig.getNvlinkIsland()).isZero();
    assertThat(mig.getInstances()).containsExactly(instance("2g.10gb", 0), instance("1g.5gb", 2),
        instance("1g.5gb", 3), instance("3g.20gb", 4));
    assertThat(mig.getSharing()).isEqualTo("exclusive");
    assertThat(mig.getMemoryMb()).isEqualTo(40_960);
    MigLayoutRecord whole = reported.get(1);
    assertThat(whole.getMigEnabled()).isFalse();
    assertThat(whole.getInstances()).isEmpty();
    assertThat(whole.getSharing()).isEqualTo("exclusive");
    assertThat(whole.getMemoryMb()).isEqualTo(40_960);
  }

  @Test
  void reportsEachGpusSharingMode() throws Exception {
    MigStateStore store = store("sharing");
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp);
    // The node's mode applies to GPUs outside MIG mode only; GPU 0 is in MIG mode.
    start(fake, store, new AtomicBoolean(false), GpuSharingSettings.parse("node", "mps", "per-gpu", ""));

    List<MigLayoutRecord> reported = awaitReports(store, 2);

    assertThat(reported).extracting(MigLayoutRecord::getSharing).containsExactly("exclusive", "mps");
  }

  @Test
  void desiredLayoutIsAppliedAndReportedBack() throws Exception {
    MigStateStore store = store("apply");
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp);
    start(fake, store, new AtomicBoolean(false));
    awaitReports(store, 2);

    store.writeDesired(desired(0, 1, instance("4g.20gb", 0), instance("3g.20gb", 4)));

    MigLayoutRecord reported = awaitReported(store, 0, r -> r.getVersion() == 1);
    assertThat(reported.getError()).isNull();
    assertThat(reported.getInstances()).containsExactly(instance("4g.20gb", 0), instance("3g.20gb", 4));
    assertThat(fake.migLog()).containsExactly(
        "mig -i 0 -gi 9,10,3 -dci", "mig -i 0 -gi 9,10,3 -dgi", "mig -i 0 -cgi 5:0 -C");
    assertThat(layoutChanges).isNotEmpty();
    assertThat(layoutChanges.get(layoutChanges.size() - 1).gpu(0).orElseThrow().instanceAt(0).orElseThrow()
        .uuid()).isEqualTo("MIG-e4f5a6b7-c8d9-5e0f-9a1b-3c4d5e6f7a70");
  }

  @Test
  void busyGpuKeepsItsLayoutUntilIdle() throws Exception {
    MigStateStore store = store("busy");
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp);
    AtomicBoolean held = new AtomicBoolean(true);
    start(fake, store, held);
    awaitReports(store, 2);

    store.writeDesired(desired(0, 1, instance("4g.20gb", 0), instance("3g.20gb", 4)));
    Thread.sleep(300);

    assertThat(store.reported(NODE, 0).orElseThrow().getVersion()).isZero();
    assertThat(fake.migLog()).isEmpty();

    held.set(false);
    MigLayoutRecord reported = awaitReported(store, 0, r -> r.getVersion() == 1);
    assertThat(reported.getInstances()).containsExactly(instance("4g.20gb", 0), instance("3g.20gb", 4));
  }

  @Test
  void illegalOrImpossibleLayoutsAreAnsweredWithAnError() throws Exception {
    MigStateStore store = store("errors");
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp);
    start(fake, store, new AtomicBoolean(false));
    awaitReports(store, 2);

    store.writeDesired(desired(0, 1, instance("3g.20gb", 0), instance("4g.20gb", 4)));
    store.writeDesired(desired(1, 7, instance("7g.40gb", 0)));

    MigLayoutRecord illegal = awaitReported(store, 0, r -> r.getVersion() == 1);
    assertThat(illegal.getError()).contains("desired layout is not legal").contains("4g.20gb may start only at");
    assertThat(illegal.getInstances()).hasSize(4);
    MigLayoutRecord wholeGpu = awaitReported(store, 1, r -> r.getVersion() == 7);
    assertThat(wholeGpu.getError()).contains("MIG mode disabled");
    assertThat(wholeGpu.getMigEnabled()).isFalse();
    assertThat(fake.migLog()).isEmpty();
  }

  @Test
  void aDesiredLayoutAlreadyAnsweredIsNotAppliedAgainAfterARestart() throws Exception {
    MigStateStore store = store("restart");
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("a100-mig", temp);
    start(fake, store, new AtomicBoolean(false));
    awaitReports(store, 2);
    store.writeDesired(desired(0, 3, instance("4g.20gb", 0), instance("3g.20gb", 4)));
    awaitReported(store, 0, r -> r.getVersion() == 3);
    agent.close();
    int commands = fake.migLog().size();

    start(fake, store, new AtomicBoolean(false));
    Thread.sleep(300);

    assertThat(store.reported(NODE, 0).orElseThrow().getVersion()).isEqualTo(3);
    assertThat(fake.migLog()).hasSize(commands);
  }

  @Test
  void eachGpusHealthIsReportedBesideItsLayoutAndFollowedAsItChanges() throws Exception {
    MigStateStore store = store("health");
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("h100-8x", temp);
    java.nio.file.Path log = java.nio.file.Files.writeString(temp.resolve("kern.log"),
        "[Tue Mar  4 10:07:19 2025] NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, "
            + "GPU has fallen off the bus.\n");
    GpuDiscovery discovery = new GpuDiscovery(fake.smi(), GpuModelCatalog.builtIn(), GpuSharingSettings.exclusive());
    agent = new MigStateAgent(NODE, store, discovery, new MigReconfigurer(fake.smi(), discovery), gpu -> false,
        layoutChanges::add, System::currentTimeMillis, Duration.ofMillis(50));
    agent.watchHealth(new GpuHealthMonitor(GpuHealthMonitor.tools(fake.smi(), log, null, Duration.ofSeconds(10)),
        io.spindle.core.model.GpuHealthPolicy.DEFAULT), Duration.ofMillis(50));
    agent.start();

    List<MigLayoutRecord> reported = awaitReports(store, 8);
    assertThat(MigLayoutRecords.health(reported.get(3)).state()).as("judged before the first report")
        .isEqualTo(io.spindle.core.model.GpuHealth.State.FAILED);
    assertThat(reported.get(3).getHealthEvidence()).singleElement()
        .satisfies(e -> assertThat(e.getDetail()).contains("Xid 79"));
    assertThat(MigLayoutRecords.health(reported.get(2))).isEqualTo(io.spindle.core.model.GpuHealth.HEALTHY);

    java.nio.file.Files.writeString(log, "");
    long deadline = System.currentTimeMillis() + 10_000;
    while (!store.reported(NODE, 3).map(MigLayoutRecords::health).orElseThrow().healthy()
        && System.currentTimeMillis() < deadline) {
      Thread.sleep(20);
    }
    MigLayoutRecord back = store.reported(NODE, 3).orElseThrow();
    assertThat(MigLayoutRecords.health(back).healthy()).isTrue();
    assertThat(back.getGpuUuid()).as("the layout fields are kept").isEqualTo(reported.get(3).getGpuUuid());
  }

  private void start(FakeNvidiaSmi fake, MigStateStore store, AtomicBoolean held) {
    start(fake, store, held, GpuSharingSettings.exclusive());
  }

  private void start(FakeNvidiaSmi fake, MigStateStore store, AtomicBoolean held, GpuSharingSettings sharing) {
    GpuDiscovery discovery = new GpuDiscovery(fake.smi(), GpuModelCatalog.builtIn(), sharing);
    agent = new MigStateAgent(NODE, store, discovery, new MigReconfigurer(fake.smi(), discovery),
        gpu -> held.get(), layoutChanges::add, System::currentTimeMillis, Duration.ofMillis(50));
    agent.start();
  }

  private static MigStateStore store(String name) {
    return new MigStateStore(client, "/spindle/agent-" + name);
  }

  private static MigLayoutRecord desired(int gpu, long version, MigInstanceRecord... instances) {
    return MigLayoutRecord.newBuilder().setNode(NODE).setGpuIndex(gpu).setMigEnabled(true)
        .setInstances(List.of(instances)).setVersion(version).setUpdatedMillis(System.currentTimeMillis()).build();
  }

  private static MigInstanceRecord instance(String profile, int start) {
    return new MigInstanceRecord(profile, start);
  }

  private static List<MigLayoutRecord> awaitReports(MigStateStore store, int gpus) throws Exception {
    long deadline = System.currentTimeMillis() + 10_000;
    List<MigLayoutRecord> reported = store.reportedAll(NODE);
    while (reported.size() < gpus && System.currentTimeMillis() < deadline) {
      Thread.sleep(20);
      reported = store.reportedAll(NODE);
    }
    assertThat(reported).hasSize(gpus);
    return reported;
  }

  private static MigLayoutRecord awaitReported(MigStateStore store, int gpu, Predicate<MigLayoutRecord> done)
      throws Exception {
    long deadline = System.currentTimeMillis() + 10_000;
    Optional<MigLayoutRecord> reported = store.reported(NODE, gpu);
    while ((reported.isEmpty() || !done.test(reported.get())) && System.currentTimeMillis() < deadline) {
      Thread.sleep(20);
      reported = store.reported(NODE, gpu);
    }
    assertThat(reported).isPresent();
    assertThat(reported.get()).matches(done);
    return reported.get();
  }
}
