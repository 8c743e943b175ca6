package io.spindle.channel.mig;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.ha.avro.MigInstanceRecord;
import io.spindle.ha.avro.MigLayoutRecord;
import java.io.Closeable;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class MigStateStoreTest {

  private static TestingServer zk;
  private static CuratorFramework client;

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

  @Test
  void desiredAndReportedLiveUnderTheNodesGpu() throws Exception {
    MigStateStore store = new MigStateStore(client, "/spindle/store-paths");
    store.writeDesired(record("node-a", 2, 5, "3g.40gb", 0));
    store.writeReported(record("node-a", 2, 4, "7g.80gb", 0));

    assertThat(client.checkExists().forPath("/spindle/store-paths/nodes/node-a/gpus/2/desired")).isNotNull();
    assertThat(client.checkExists().forPath("/spindle/store-paths/nodes/node-a/gpus/2/reported")).isNotNull();
    assertThat(store.desired("node-a", 2)).contains(record("node-a", 2, 5, "3g.40gb", 0));
    assertThat(store.reported("node-a", 2)).contains(record("node-a", 2, 4, "7g.80gb", 0));
    assertThat(store.desired("node-a", 3)).isEmpty();
  }

  @Test
  void reportedAllListsEveryGpuInIndexOrder() throws Exception {
    MigStateStore store = new MigStateStore(client, "/spindle/store-all");
    store.writeReported(record("node-b", 10, 0, "1g.10gb", 6));
    store.writeReported(record("node-b", 2, 0, "1g.10gb", 0));
    store.writeDesired(record("node-b", 5, 1, "1g.10gb", 1));

    assertThat(store.reportedAll("node-b")).extracting(MigLayoutRecord::getGpuIndex).containsExactly(2, 10);
    assertThat(store.reportedAll("no-such-node")).isEmpty();
  }

  @Test
  void watchSeesExistingAndNewDesiredLayoutsOnly() throws Exception {
    MigStateStore store = new MigStateStore(client, "/spindle/store-watch");
    store.writeDesired(record("node-c", 0, 1, "3g.40gb", 4));
    store.writeReported(record("node-c", 0, 0, "7g.80gb", 0));
    List<MigLayoutRecord> seen = new CopyOnWriteArrayList<>();

    try (Closeable watch = store.watchDesired("node-c", seen::add)) {
      awaitSize(seen, 1);
      store.writeDesired(record("node-c", 1, 1, "4g.40gb", 0));
      store.writeDesired(record("node-c", 0, 2, "2g.20gb", 2));
      store.writeReported(record("node-c", 1, 1, "4g.40gb", 0));
      awaitSize(seen, 3);
    }

    assertThat(seen).containsExactly(record("node-c", 0, 1, "3g.40gb", 4), record("node-c", 1, 1, "4g.40gb", 0),
        record("node-c", 0, 2, "2g.20gb", 2));
  }

  static MigLayoutRecord record(String node, int gpu, long version, String profile, int start) {
    return MigLayoutRecord.newBuilder().setNode(node).setGpuIndex(gpu).setMigEnabled(true)
        .setInstances(List.of(new MigInstanceRecord(profile, start))).setVersion(version).setUpdatedMillis(1000)
        .build();
  }

  private static void awaitSize(List<?> list, int size) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 10_000;
    while (list.size() < size && System.currentTimeMillis() < deadline) {
      Thread.sleep(10);
    }
    assertThat(list).hasSizeGreaterThanOrEqualTo(size);
  }
}
