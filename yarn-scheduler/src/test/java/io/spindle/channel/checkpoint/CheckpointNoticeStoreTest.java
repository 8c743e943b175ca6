package io.spindle.channel.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.client.CheckpointAckView;
import io.spindle.client.CheckpointAuthException;
import io.spindle.client.CheckpointCredentials;
import io.spindle.client.CheckpointDecision;
import io.spindle.client.CheckpointHandler;
import io.spindle.client.CheckpointNoticeView;
import io.spindle.client.CheckpointPaths;
import io.spindle.client.CheckpointRecords;
import io.spindle.client.CheckpointReportView;
import io.spindle.client.SpindleCheckpointClient;
import io.spindle.ha.SchedulerZkIdentity;
import io.spindle.ha.ZkSettings;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** The checkpoint handshake end to end: the scheduler's store and an application's client on a real ZooKeeper. */
class CheckpointNoticeStoreTest {

  private static final String APP = "application_1700000000000_0001";
  private static final String OTHER_APP = "application_1700000000000_0002";
  private static final byte[] SECRET = "amrm-password-of-0001".getBytes(StandardCharsets.UTF_8);
  private static final byte[] OTHER_SECRET = "amrm-password-of-0002".getBytes(StandardCharsets.UTF_8);
  private static final SchedulerZkIdentity RM = SchedulerZkIdentity.digest("spindle-rm", "rm-password");

  private static TestingServer zk;

  private final List<AutoCloseable> closeAfter = new ArrayList<>();
  private final Recorder heard = new Recorder();
  private String root;
  private CheckpointNoticeStore store;

  @BeforeAll
  static void startZooKeeper() throws Exception {
    zk = new TestingServer(true);
  }

  @AfterAll
  static void stopZooKeeper() throws Exception {
    zk.close();
  }

  @BeforeEach
  void startStore(TestInfo test) {
    root = "/spindle/" + test.getTestMethod().orElseThrow().getName();
    store = CheckpointNoticeStore.start(new ZkSettings(zk.getConnectString(), root), RM, heard);
    closeAfter.add(store);
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = closeAfter.size() - 1; i >= 0; i--) {
      closeAfter.get(i).close();
    }
  }

  @Test
  void aNoticeReachesTheRegisteredHandler() throws Exception {
    BlockingQueue<CheckpointNoticeView> seen = new LinkedBlockingQueue<>();
    BlockingQueue<String> threads = new LinkedBlockingQueue<>();
    SpindleCheckpointClient am = client(APP, SECRET);
    am.register(notice -> {
      threads.add(Thread.currentThread().getName());
      seen.add(notice);
      return CheckpointDecision.later();
    });

    CheckpointNoticeView written = store.issue(notice(7, 50_000, 0), SECRET).get(10, TimeUnit.SECONDS);

    CheckpointNoticeView got = seen.poll(10, TimeUnit.SECONDS);
    assertThat(got).isEqualTo(written);
    assertThat(got.revision()).isEqualTo(1);
    assertThat(got.containerIds()).containsExactly("container_1700000000000_0001_01_000002");
    assertThat(got.deadlineMillis()).isEqualTo(50_000);
    assertThat(got.mayExtend()).isTrue();
    assertThat(threads.poll()).isEqualTo("spindle-checkpoint-handler-" + APP);
    assertThat(am.openNotices()).containsExactly(written);
  }

  @Test
  void doneWithItsLocationReachesTheScheduler() throws Exception {
    client(APP, SECRET).register(notice -> CheckpointDecision.done("hdfs:///ckpt/app1/step-900", 41_000));

    store.issue(notice(7, 50_000, 0), SECRET).get(10, TimeUnit.SECONDS);

    Ack ack = heard.next(Ack.class);
    assertThat(ack.ack().kind()).isEqualTo(CheckpointAckView.Kind.DONE);
    assertThat(ack.ack().checkpointLocation()).contains("hdfs:///ckpt/app1/step-900");
    assertThat(ack.ack().checkpointMillis()).hasValue(41_000);
    assertThat(ack.notice().noticeId()).isEqualTo(7);
    assertThat(ack.notice().gangKeys()).containsExactly("gang-0");
  }

  @Test
  void anExtensionRequestReachesTheSchedulerAndTheGrantReachesTheApplication() throws Exception {
    BlockingQueue<CheckpointNoticeView> seen = new LinkedBlockingQueue<>();
    SpindleCheckpointClient am = client(APP, SECRET);
    am.register(notice -> {
      seen.add(notice);
      return notice.revision() == 1 ? CheckpointDecision.extend(Duration.ofSeconds(30)) : CheckpointDecision.later();
    });
    store.issue(notice(7, 50_000, 0), SECRET).get(10, TimeUnit.SECONDS);

    Ack extend = heard.next(Ack.class);
    assertThat(extend.ack().kind()).isEqualTo(CheckpointAckView.Kind.EXTEND);
    assertThat(extend.ack().requestedExtensionMillis()).isEqualTo(30_000);
    assertThat(extend.ack().noticeRevision()).isEqualTo(1);

    // The scheduler grants it: the same notice, a later deadline, one more extension granted.
    store.issue(notice(7, 80_000, 1), SECRET).get(10, TimeUnit.SECONDS);

    assertThat(seen.poll(10, TimeUnit.SECONDS).revision()).isEqualTo(1);
    CheckpointNoticeView granted = seen.poll(10, TimeUnit.SECONDS);
    assertThat(granted.revision()).isEqualTo(2);
    assertThat(granted.deadlineMillis()).isEqualTo(80_000);
    assertThat(granted.extensionsGranted()).isEqualTo(1);

    // Checkpointed within the new deadline, answered from the application's own thread.
    am.answer(7, CheckpointDecision.done("s3://ckpt/app1/7", 70_000));
    Ack done = heard.next(Ack.class);
    assertThat(done.ack().kind()).isEqualTo(CheckpointAckView.Kind.DONE);
    assertThat(done.ack().noticeRevision()).isEqualTo(2);
  }

  @Test
  void aHandlerThatFailsLeavesItsNoticeUnansweredAndTheApplicationCanStillAnswerLater() throws Exception {
    SpindleCheckpointClient am = client(APP, SECRET);
    am.register(notice -> {
      if (notice.noticeId() == 7) {
        throw new IllegalStateException("trainer not ready");
      }
      return CheckpointDecision.done();
    });
    store.issue(notice(7, 50_000, 0), SECRET).get(10, TimeUnit.SECONDS);
    store.issue(notice(8, 50_000, 0), SECRET).get(10, TimeUnit.SECONDS);

    // One handler thread, in order: notice 8's DONE is the first answer, so 7 produced none.
    Ack first = heard.next(Ack.class);
    assertThat(first.ack().noticeId()).isEqualTo(8);
    assertThat(first.ack().checkpointLocation()).isEmpty();

    am.answer(7, CheckpointDecision.done("hdfs:///ckpt/late", 3));
    assertThat(heard.next(Ack.class).ack().noticeId()).isEqualTo(7);
    assertThatThrownBy(() -> am.answer(9, CheckpointDecision.done())).hasMessageContaining("not open");
  }

  @Test
  void aReportOfTheLastCheckpointReachesTheScheduler() throws Exception {
    store.open(APP, SECRET).get(10, TimeUnit.SECONDS);
    SpindleCheckpointClient am = client(APP, SECRET);

    am.reportCheckpoint("hdfs:///ckpt/app1/step-800", 20_000);

    CheckpointReportView report = heard.next(CheckpointReportView.class);
    assertThat(report.appId()).isEqualTo(APP);
    assertThat(report.location()).isEqualTo("hdfs:///ckpt/app1/step-800");
    assertThat(report.checkpointMillis()).isEqualTo(20_000);
    assertThat(store.lastReport(APP)).contains(report);
  }

  @Test
  void anotherApplicationCannotAnswerANoticeThatIsNotItsOwn() throws Exception {
    store.issue(notice(7, 50_000, 0), SECRET).get(10, TimeUnit.SECONDS);
    store.open(OTHER_APP, OTHER_SECRET).get(10, TimeUnit.SECONDS);
    CheckpointPaths paths = store.paths();
    byte[] forgedDone = CheckpointRecords.encode(new CheckpointAckView(APP, 7, 1, CheckpointAckView.Kind.DONE, 0,
        Optional.of("hdfs:///somewhere-else"), OptionalLong.empty(), 1));

    // Through the library: it names the victim, but holds its own token.
    try (LogCapture log = LogCapture.of(SpindleCheckpointClient.class)) {
      SpindleCheckpointClient impostor = client(APP, OTHER_SECRET);
      assertThatThrownBy(() -> impostor.answer(7, CheckpointDecision.done("hdfs:///somewhere-else", 1)))
          .isInstanceOf(CheckpointAuthException.class).hasMessageContaining("NoAuth");
      assertThatThrownBy(() -> impostor.reportCheckpoint("hdfs:///somewhere-else", 1))
          .isInstanceOf(CheckpointAuthException.class);
      assertThat(log.lines()).anyMatch(l -> l.startsWith("ERROR") && l.contains("refused")
          && l.contains(APP) && l.contains(paths.ack(APP, 7)));
    }

    // Straight to ZooKeeper, as the other application and as nobody: every way in is shut.
    for (CuratorFramework intruder : List.of(session(CheckpointCredentials.of(OTHER_APP, OTHER_SECRET)),
        session(null))) {
      assertThatThrownBy(() -> intruder.setData().forPath(paths.ack(APP, 7), forgedDone))
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> intruder.setData().forPath(paths.report(APP), forgedDone))
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> intruder.setData().forPath(paths.notice(APP, 7), forgedDone))
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> intruder.create().forPath(paths.ack(APP, 8), forgedDone))
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> intruder.delete().forPath(paths.ack(APP, 7)))
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> intruder.setACL().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(paths.ack(APP, 7)))
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> intruder.create().forPath(paths.app("application_1700000000000_0099")))
          .isInstanceOf(KeeperException.NoAuthException.class);
    }

    // The owner's answer is the first thing the scheduler hears.
    client(APP, SECRET).answer(7, CheckpointDecision.done("hdfs:///ckpt/app1/7", 2));
    assertThat(heard.next(Ack.class).ack().checkpointLocation()).contains("hdfs:///ckpt/app1/7");
    assertThat(heard.events).isEmpty();
  }

  @Test
  void aMalformedAckIsRejectedLoggedAndNotPassedOnAndTheDeadlineHolds() throws Exception {
    store.issue(notice(7, 50_000, 0), SECRET).get(10, TimeUnit.SECONDS);
    CuratorFramework owner = session(CheckpointCredentials.of(APP, SECRET));
    String slot = store.paths().ack(APP, 7);

    try (LogCapture log = LogCapture.of(CheckpointNoticeStore.class)) {
      owner.setData().forPath(slot, "DONE hdfs:///ckpt".getBytes(StandardCharsets.UTF_8));
      Rejected garbage = heard.next(Rejected.class);
      assertThat(garbage.path()).isEqualTo(slot);
      assertThat(garbage.reason()).contains("no Avro single-object header");
      assertThat(log.lines()).anyMatch(l -> l.startsWith("WARN") && l.contains("Rejected checkpoint ack of " + APP)
          && l.contains("no Avro single-object header") && l.contains("deadline stands"));
    }

    // A length that claims 2 GB is refused without allocating it.
    byte[] good = CheckpointRecords.encode(doneAck(APP, 7, 1));
    byte[] hostile = java.util.Arrays.copyOf(good, 15);
    System.arraycopy(new byte[] {(byte) 0xEE, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x0F}, 0, hostile, 10, 5);
    owner.setData().forPath(slot, hostile);
    assertThat(heard.next(Rejected.class).reason()).contains("runs past the end");

    // Well-formed, but not an answer to anything issued.
    owner.setData().forPath(slot, CheckpointRecords.encode(doneAck(APP, 7, 5)));
    assertThat(heard.next(Rejected.class).reason()).contains("revision 5").contains("at revision 1");
    owner.setData().forPath(slot, CheckpointRecords.encode(doneAck(OTHER_APP, 7, 1)));
    assertThat(heard.next(Rejected.class).reason()).contains("names application " + OTHER_APP);

    assertThat(heard.events).isEmpty();
    assertThat(store.notice(APP, 7).orElseThrow().deadlineMillis()).isEqualTo(50_000);
    assertThat(store.notice(APP, 7).orElseThrow().revision()).isEqualTo(1);
  }

  @Test
  void anExtensionRequestForARevisionAlreadyAnsweredIsNotPassedOnAgain() throws Exception {
    store.issue(notice(7, 50_000, 0), SECRET).get(10, TimeUnit.SECONDS);
    store.issue(notice(7, 60_000, 1), SECRET).get(10, TimeUnit.SECONDS);
    CuratorFramework owner = session(CheckpointCredentials.of(APP, SECRET));
    String slot = store.paths().ack(APP, 7);

    owner.setData().forPath(slot, CheckpointRecords.encode(new CheckpointAckView(APP, 7, 1,
        CheckpointAckView.Kind.EXTEND, 10_000, Optional.empty(), OptionalLong.empty(), 1)));
    owner.setData().forPath(slot, CheckpointRecords.encode(doneAck(APP, 7, 1)));

    // DONE stands whatever revision it answers; the stale EXTEND before it was dropped.
    Ack done = heard.next(Ack.class);
    assertThat(done.ack().kind()).isEqualTo(CheckpointAckView.Kind.DONE);
    assertThat(done.notice().revision()).isEqualTo(2);
    assertThat(heard.events).isEmpty();
  }

  @Test
  void aSlotSomeoneElseCanWriteIsNotTrusted() throws Exception {
    store.issue(notice(7, 50_000, 0), SECRET).get(10, TimeUnit.SECONDS);
    String slot = store.paths().ack(APP, 7);
    // A mistake by hand (or a ZooKeeper super user): the slot opened to the world.
    CuratorFramework admin = session(null, RM);
    List<ACL> opened = new ArrayList<>(admin.getACL().forPath(slot));
    opened.add(new ACL(ZooDefs.Perms.WRITE, ZooDefs.Ids.ANYONE_ID_UNSAFE));
    admin.setACL().withACL(opened).forPath(slot);

    session(null).setData().forPath(slot, CheckpointRecords.encode(doneAck(APP, 7, 1)));

    assertThat(heard.next(Rejected.class).reason()).contains("writable by [world:anyone]");
    assertThat(heard.events).isEmpty();
  }

  @Test
  void theApplicationFollowsARollOfItsAmRmToken() throws Exception {
    byte[][] token = {SECRET};
    SpindleCheckpointClient am = SpindleCheckpointClient.builder().connectString(zk.getConnectString()).root(root)
        .appId(APP).secret(() -> token[0]).build();
    closeAfter.add(am);
    store.open(APP, SECRET).get(10, TimeUnit.SECONDS);

    // The master key rolls: the RM re-keys with the new token before the AM has it; the AM is not locked out.
    byte[] rolled = "amrm-password-of-0001-rolled".getBytes(StandardCharsets.UTF_8);
    store.open(APP, rolled).get(10, TimeUnit.SECONDS);
    am.reportCheckpoint("hdfs:///ckpt/a", 1);
    assertThat(heard.next(CheckpointReportView.class).location()).isEqualTo("hdfs:///ckpt/a");

    // Next roll: the first token is no longer admitted; the client re-reads its token and carries on.
    byte[] rolledAgain = "amrm-password-of-0001-rolled-again".getBytes(StandardCharsets.UTF_8);
    store.open(APP, rolledAgain).get(10, TimeUnit.SECONDS);
    token[0] = rolledAgain;
    am.reportCheckpoint("hdfs:///ckpt/b", 2);
    assertThat(heard.next(CheckpointReportView.class).location()).isEqualTo("hdfs:///ckpt/b");

    // A client still holding only the first token is refused.
    assertThatThrownBy(() -> client(APP, SECRET).reportCheckpoint("hdfs:///ckpt/c", 3))
        .isInstanceOf(CheckpointAuthException.class);
  }

  @Test
  void aNoticeReIssuedWhileTheHandlerIsBusyIsDeliveredOnceNewestOnly() throws Exception {
    BlockingQueue<CheckpointNoticeView> seen = new LinkedBlockingQueue<>();
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    SpindleCheckpointClient am = client(APP, SECRET);
    am.register(notice -> {
      seen.add(notice);
      release.await(10, TimeUnit.SECONDS);
      return CheckpointDecision.later();
    });
    store.issue(notice(7, 50_000, 0), SECRET).get(10, TimeUnit.SECONDS);
    assertThat(seen.poll(10, TimeUnit.SECONDS).revision()).isEqualTo(1);

    store.issue(notice(7, 60_000, 1), SECRET).get(10, TimeUnit.SECONDS);
    store.issue(notice(7, 70_000, 2), SECRET).get(10, TimeUnit.SECONDS);
    awaitClientSees(am, 7, 3); // both re-issues arrived while the handler was still busy
    release.countDown();

    assertThat(seen.poll(10, TimeUnit.SECONDS).revision()).isEqualTo(3);
    assertThat(seen.poll(300, TimeUnit.MILLISECONDS)).isNull();
  }

  @Test
  void cleanupRemovesTheApplicationsZnodesAndTheApplicationSeesItsNoticesClosed() throws Exception {
    BlockingQueue<Long> closed = new LinkedBlockingQueue<>();
    client(APP, SECRET).register(new CheckpointHandler() {
      @Override
      public CheckpointDecision onNotice(CheckpointNoticeView notice) {
        return CheckpointDecision.later();
      }

      @Override
      public void onClosed(long noticeId) {
        closed.add(noticeId);
      }
    });
    store.issue(notice(7, 50_000, 0), SECRET).get(10, TimeUnit.SECONDS);
    store.issue(notice(8, 50_000, 0), SECRET).get(10, TimeUnit.SECONDS);
    CuratorFramework look = session(null);

    store.closeNotice(APP, 7).get(10, TimeUnit.SECONDS);
    assertThat(closed.poll(10, TimeUnit.SECONDS)).isEqualTo(7);
    assertThat(look.checkExists().forPath(store.paths().notice(APP, 7))).isNull();
    assertThat(look.checkExists().forPath(store.paths().ack(APP, 7))).isNull();

    store.forget(APP).get(10, TimeUnit.SECONDS);
    assertThat(closed.poll(10, TimeUnit.SECONDS)).isEqualTo(8);
    assertThat(look.checkExists().forPath(store.paths().app(APP))).isNull();
    assertThat(look.getChildren().forPath(store.paths().apps())).isEmpty();
  }

  /**
   * Regression (the soak of issue #11): every application is opened when its AM first talks to the RM, on the one
   * writer thread that also writes notices. Under a stream of short applications the opens queued faster than they
   * were written, and each was written even when its application had ended meanwhile, only to be removed by the
   * forget queued behind it: the queue grew for as long as the stream lasted (8,300 applications behind after 10,000
   * in ten minutes), notices waiting at its end. An open still queued when its application ends is now not written.
   */
  @Test
  void anApplicationThatEndsBeforeItsQueuedOpenIsWrittenNeverGetsZnodes() throws Exception {
    String busy = "application_1700000000000_0003";
    store.open(OTHER_APP, OTHER_SECRET).get(10, TimeUnit.SECONDS);
    CuratorFramework before = session(null);
    int childChanges = before.checkExists().forPath(store.paths().apps()).getCversion();
    before.close();

    zk.stop(); // The writer blocks on the next write until ZooKeeper is back, so what follows queues behind it.
    CompletableFuture<Void> blocked = store.open(busy, SECRET);
    CompletableFuture<Void> open = store.open(APP, SECRET);
    CompletableFuture<Void> forget = store.forget(APP);
    zk.restart();
    blocked.get(60, TimeUnit.SECONDS);
    open.get(10, TimeUnit.SECONDS);
    forget.get(10, TimeUnit.SECONDS);

    CuratorFramework look = session(null, RM);
    // One child created under apps/ (the busy application's), none created and removed for APP.
    assertThat(look.checkExists().forPath(store.paths().apps()).getCversion() - childChanges).isEqualTo(1);
    assertThat(look.checkExists().forPath(store.paths().app(APP))).isNull();
    // Opened in one transaction, removed in one: the report slot belongs to the application alone.
    assertThat(CheckpointAcls.newestOwner(look.getACL().forPath(store.paths().report(busy)), busy))
        .contains(CheckpointCredentials.of(busy, SECRET).aclId());
    store.forget(busy).get(10, TimeUnit.SECONDS);
    store.forget(OTHER_APP).get(10, TimeUnit.SECONDS);
    assertThat(look.getChildren().forPath(store.paths().apps())).isEmpty();
  }

  /**
   * The other half of the same regression: the application whose open was skipped is still forgotten, and a delete
   * that finds nothing is a ZooKeeper write too (an error transaction in the log). Forgetting an application this
   * store never wrote znodes for, and none are mirrored for, sends nothing: ZooKeeper's transaction id stands. On a
   * ZooKeeper of its own, where no other test's session can end meanwhile (which takes a transaction id too).
   */
  @Test
  void forgettingAnApplicationWithoutZnodesCostsZooKeeperNothing() throws Exception {
    TestingServer own = new TestingServer(true);
    closeAfter.add(own);
    CheckpointNoticeStore quiet = CheckpointNoticeStore.start(new ZkSettings(own.getConnectString(), root), RM,
        new Recorder());
    closeAfter.add(quiet);
    CuratorFramework look = CuratorFrameworkFactory.builder().connectString(own.getConnectString())
        .retryPolicy(new RetryOneTime(100)).authorization(RM.auth()).build();
    closeAfter.add(look);
    look.start();
    look.blockUntilConnected();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!quiet.mirrorLoaded()) {
      assertThat(System.nanoTime()).as("mirror loaded").isLessThan(deadline);
      Thread.sleep(10);
    }
    // The start-up writes (directories, schema) are queued on the writer before anything else; a sweep that finds
    // every application running writes nothing and returns once they are done (on a loaded machine the mirror can
    // load first, and they fell between the probes).
    assertThat(quiet.sweep(app -> true).get(10, TimeUnit.SECONDS)).isZero();
    look.create().forPath(root + "/probe-1");
    long first = look.checkExists().forPath(root + "/probe-1").getCzxid();

    quiet.forget(APP).get(10, TimeUnit.SECONDS);

    look.create().forPath(root + "/probe-2");
    assertThat(look.checkExists().forPath(root + "/probe-2").getCzxid() - first)
        .as("ZooKeeper transactions between the probes: the second probe's own only").isEqualTo(1);
  }

  /** Znodes a scheduler before this one made (a restart, a failover) are still removed when the application ends. */
  @Test
  void aPreviousSchedulersZnodesAreRemovedWhenTheApplicationEnds() throws Exception {
    store.open(APP, SECRET).get(10, TimeUnit.SECONDS);
    store.close();
    CheckpointNoticeStore next = CheckpointNoticeStore.start(new ZkSettings(zk.getConnectString(), root), RM,
        new Recorder());
    closeAfter.add(next);
    CuratorFramework look = session(null, RM);
    assertThat(look.checkExists().forPath(next.paths().app(APP))).isNotNull();

    // Whether or not its mirror has loaded them yet, the new store removes them.
    next.forget(APP).get(10, TimeUnit.SECONDS);

    assertThat(look.checkExists().forPath(next.paths().app(APP))).isNull();
  }

  /**
   * An application that ended while no scheduler led, or whose removal the leader before had not written when it
   * stepped down, is forgotten by nobody: the next leader's sweep removes its znodes (found by the failover soak,
   * docs/reliability.md). A running application's stay, and so do those of one opened since.
   */
  @Test
  void theNextLeaderRemovesTheZnodesOfApplicationsThatEndedUnseen() throws Exception {
    String third = "application_1700000000000_0003";
    store.open(APP, SECRET).get(10, TimeUnit.SECONDS);
    store.open(OTHER_APP, OTHER_SECRET).get(10, TimeUnit.SECONDS);
    store.close();
    CheckpointNoticeStore next = CheckpointNoticeStore.start(new ZkSettings(zk.getConnectString(), root), RM,
        new Recorder());
    closeAfter.add(next);
    next.open(third, SECRET).get(10, TimeUnit.SECONDS);

    assertThat(next.sweep(OTHER_APP::equals).get(10, TimeUnit.SECONDS)).isEqualTo(1);

    CuratorFramework look = session(null, RM);
    assertThat(look.checkExists().forPath(next.paths().app(APP))).isNull();
    assertThat(look.checkExists().forPath(next.paths().report(OTHER_APP))).isNotNull();
    assertThat(look.checkExists().forPath(next.paths().report(third))).isNotNull();
    assertThat(next.sweep(OTHER_APP::equals).get(10, TimeUnit.SECONDS)).isZero();
  }

  @Test
  void aRestartedSchedulerHearsTheAnswersThatAreStillOpen() throws Exception {
    client(APP, SECRET).register(notice -> CheckpointDecision.done("hdfs:///ckpt/app1/7", 1));
    store.issue(notice(7, 50_000, 0), SECRET).get(10, TimeUnit.SECONDS);
    heard.next(Ack.class);
    store.close();

    Recorder heardAfterRestart = new Recorder();
    CheckpointNoticeStore restarted = CheckpointNoticeStore.start(new ZkSettings(zk.getConnectString(), root), RM,
        heardAfterRestart);
    closeAfter.add(restarted);

    Ack again = heardAfterRestart.next(Ack.class);
    assertThat(again.ack().checkpointLocation()).contains("hdfs:///ckpt/app1/7");
    assertThat(again.notice().deadlineMillis()).isEqualTo(50_000);
    assertThat(restarted.notices(APP)).extracting(CheckpointNoticeView::noticeId).containsExactly(7L);
  }

  // ---- helpers -------------------------------------------------------------------------------------------------

  private static CheckpointNoticeView notice(long id, long deadline, int granted) {
    return new CheckpointNoticeView(APP, id, 0, List.of("gang-0"), List.of("container_1700000000000_0001_01_000002"),
        "queue llm is below its guarantee", 1_000, deadline, granted, 2, 60_000, Optional.empty());
  }

  private static CheckpointAckView doneAck(String app, long id, int revision) {
    return new CheckpointAckView(app, id, revision, CheckpointAckView.Kind.DONE, 0, Optional.of("hdfs:///ckpt/x"),
        OptionalLong.empty(), 1);
  }

  private SpindleCheckpointClient client(String appId, byte[] secret) throws Exception {
    SpindleCheckpointClient client = SpindleCheckpointClient.connect(zk.getConnectString(), root, appId, secret);
    closeAfter.add(client);
    return client;
  }

  /** A plain ZooKeeper session, authenticated as an application, as the scheduler, or (null) as nobody. */
  private CuratorFramework session(CheckpointCredentials as) throws Exception {
    return session(as, null);
  }

  private CuratorFramework session(CheckpointCredentials app, SchedulerZkIdentity scheduler) throws Exception {
    CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder().connectString(zk.getConnectString())
        .retryPolicy(new RetryOneTime(100));
    if (app != null) {
      b.authorization(CheckpointCredentials.SCHEME, app.authBytes());
    }
    if (scheduler != null) {
      b.authorization(scheduler.auth());
    }
    CuratorFramework session = b.build();
    session.start();
    session.blockUntilConnected();
    closeAfter.add(session);
    return session;
  }

  private static void awaitClientSees(SpindleCheckpointClient am, long noticeId, int revision) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (am.openNotices().stream().noneMatch(n -> n.noticeId() == noticeId && n.revision() >= revision)) {
      assertThat(System.nanoTime()).as("client sees revision " + revision).isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  record Ack(CheckpointAckView ack, CheckpointNoticeView notice) {}

  record Rejected(String appId, String path, String reason) {}

  /** What the scheduler's listener heard, in order. */
  static final class Recorder implements CheckpointListener {
    final BlockingQueue<Object> events = new LinkedBlockingQueue<>();

    @Override
    public void onAck(CheckpointAckView ack, CheckpointNoticeView notice) {
      events.add(new Ack(ack, notice));
    }

    @Override
    public void onReport(CheckpointReportView report) {
      events.add(report);
    }

    @Override
    public void onRejected(String appId, String path, String reason) {
      events.add(new Rejected(appId, path, reason));
    }

    <T> T next(Class<T> type) throws InterruptedException {
      Object event = events.poll(10, TimeUnit.SECONDS);
      assertThat(event).as("the next thing the scheduler hears").isInstanceOf(type);
      return type.cast(event);
    }
  }
}
