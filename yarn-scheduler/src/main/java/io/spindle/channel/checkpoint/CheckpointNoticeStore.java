package io.spindle.channel.checkpoint;

import io.spindle.channel.ChannelSession;
import io.spindle.client.CheckpointAckView;
import io.spindle.client.CheckpointCredentials;
import io.spindle.client.CheckpointNoticeView;
import io.spindle.client.CheckpointPaths;
import io.spindle.client.CheckpointRecords;
import io.spindle.client.CheckpointReportView;
import io.spindle.client.ZkSchemaStore;
import io.spindle.client.avro.CheckpointNotice;
import io.spindle.ha.BackgroundWriter;
import io.spindle.ha.Fence;
import io.spindle.ha.SchedulerZkIdentity;
import io.spindle.ha.ZkSettings;
import java.io.Closeable;
import java.io.IOException;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Predicate;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler's side of checkpoint notices in ZooKeeper ({@link CheckpointPaths}): it writes notices, mirrors the
 * applications' acks and reports, and hands the valid ones to a {@link CheckpointListener}.
 *
 * <p><b>Threads.</b> Like {@link io.spindle.channel.mig.MigLayoutExchange}, the ResourceManager's threads never wait
 * on ZooKeeper: writes run on a writer thread of their own (each returns a future), and the {@link CuratorCache}
 * mirror only queues events for a reader thread, which decodes, validates and calls the listener.
 *
 * <p><b>Access.</b> The store's session authenticates as the scheduler ({@link SchedulerZkIdentity}) and creates
 * every znode of an application with ACLs ({@link CheckpointAcls}) that let only that application write its ack slots
 * and report, keyed to the application's {@link CheckpointCredentials}. The caller passes the secret (the password of
 * the attempt's current AMRMToken) to {@link #open} and {@link #issue}, which re-key the ACLs when it changed.
 *
 * <p><b>Validation.</b> An ack reaches the listener only if its slot's ACL still admits no one but the application
 * and the scheduler, it decodes as one well-formed record, it names the application and notice of its path, that
 * notice is open, and it answers a revision that was issued. Anything else is logged with the reason, reported to
 * {@link CheckpointListener#onRejected}, and not passed on — so the notice's deadline stands.
 */
public final class CheckpointNoticeStore implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(CheckpointNoticeStore.class);

  private final ChannelSession session;
  private final CuratorFramework client;
  private final Fence fence;
  private final CheckpointPaths paths;
  private final CheckpointAcls acls;
  private final CheckpointRecords records;
  private final ZkSchemaStore schemas;
  private final CheckpointListener listener;
  private final CuratorCache mirror;
  private final ExecutorService writer = BackgroundWriter.start("spindle-checkpoint-writer");
  private final ExecutorService reader = BackgroundWriter.start("spindle-checkpoint-reader");
  /** Open notices by path and last reports by application, as mirrored: written by the reader thread only. */
  private final Map<String, CheckpointNoticeView> notices = new ConcurrentHashMap<>();
  private final Map<String, CheckpointReportView> reports = new ConcurrentHashMap<>();
  /** Applications opened and not yet forgotten: an open still queued when its application ends is not written. */
  private final Set<String> live = ConcurrentHashMap.newKeySet();
  /** Applications whose znodes this store created and has not removed; used on the writer thread only. */
  private final Set<String> withZnodes = new HashSet<>();
  /** The mirror has loaded what was there when the store started (znodes of a scheduler before this one). */
  private volatile boolean mirrorLoaded;
  private volatile boolean schemaPublished;

  private CheckpointNoticeStore(ChannelSession session, String root, Id scheduler, Fence fence,
      CheckpointListener listener) {
    this.session = session;
    this.client = session.client();
    this.fence = fence;
    this.paths = new CheckpointPaths(root);
    this.acls = new CheckpointAcls(scheduler);
    this.schemas = new ZkSchemaStore(client, paths);
    this.records = new CheckpointRecords(schemas);
    this.listener = listener;
    this.mirror = CuratorCache.build(client, paths.apps());
    mirror.listenable().addListener(CuratorCacheListener.builder()
        .forCreatesAndChanges((before, now) -> onReader(() -> changed(now)))
        .forDeletes(gone -> onReader(() -> deleted(gone)))
        .forInitialized(() -> mirrorLoaded = true)
        .build());
  }

  /**
   * Connects to {@code settings}' quorum as {@code identity} and starts mirroring. Does not wait for the connection:
   * until it is up, writes wait on the writer thread and nothing reaches the listener.
   */
  public static CheckpointNoticeStore start(ZkSettings settings, SchedulerZkIdentity identity,
      CheckpointListener listener) {
    CheckpointNoticeStore store = new CheckpointNoticeStore(ChannelSession.connect(settings, identity.auth()),
        settings.root(), identity.aclId(), Fence.NONE, listener);
    store.begin();
    LOG.info("Spindle writes checkpoint notices to ZooKeeper {} under {} as {}", settings.address(),
        store.paths.apps(), identity);
    return store;
  }

  /**
   * As {@link #start(ZkSettings, SchedulerZkIdentity, CheckpointListener)} on a started client the caller owns and
   * closes, already authenticated as {@code scheduler}. Notices are written behind {@code fence}, so a deposed
   * scheduler's notice never reaches an application.
   */
  public static CheckpointNoticeStore start(CuratorFramework client, String root, Id scheduler, Fence fence,
      CheckpointListener listener) {
    CheckpointNoticeStore store = new CheckpointNoticeStore(ChannelSession.shared(client), root, scheduler, fence,
        listener);
    store.begin();
    return store;
  }

  public CheckpointPaths paths() {
    return paths;
  }

  /**
   * Creates {@code appId}'s znodes (idempotent) with ACLs for the application holding {@code secret}, so it can
   * report checkpoints before any notice. Call when an attempt starts and whenever its AMRMToken changes.
   */
  public CompletableFuture<Void> open(String appId, byte[] secret) {
    CheckpointCredentials owner = CheckpointCredentials.of(appId, secret);
    live.add(appId);
    return onWriter("open checkpoint znodes of " + appId, () -> {
      // One writer serves every application, and every application is opened when its AM first talks to the RM: in a
      // burst of submissions opens queue up. One whose application ended meanwhile would only be undone by the
      // forget queued behind it, so it is skipped — under a stream of short applications that keeps the queue from
      // growing without end, with notices waiting behind it (found by the soak, docs/reliability.md).
      if (live.contains(appId)) {
        ensureApp(owner);
      }
      return null;
    });
  }

  /**
   * Writes {@code notice} (opening the application's znodes and re-keying them for {@code secret} as
   * {@link #open} does) with an empty ack slot beside it. Writing a notice id again re-issues it — e.g. with a
   * later deadline and one more extension granted, or with a refusal — as the next revision. The revision in
   * {@code notice} is ignored: the store numbers them.
   *
   * @return the notice as written, with its revision
   */
  public CompletableFuture<CheckpointNoticeView> issue(CheckpointNoticeView notice, byte[] secret) {
    CheckpointCredentials owner = CheckpointCredentials.of(notice.appId(), secret);
    return onWriter("write checkpoint notice " + notice.noticeId() + " of " + notice.appId(), () -> {
      List<ACL> slot = ensureApp(owner);
      publishSchema();
      createIfMissing(paths.ack(notice.appId(), notice.noticeId()), slot);
      CheckpointNoticeView written = writeNotice(notice);
      LOG.info("Checkpoint notice {} (revision {}) to {}: {} container(s) of gangs {} go at {} unless acknowledged; {}",
          written.noticeId(), written.revision(), written.appId(), written.containerIds().size(), written.gangKeys(),
          Instant.ofEpochMilli(written.deadlineMillis()),
          written.refusal().map(r -> "extension refused: " + r).orElse(written.reason()));
      return written;
    });
  }

  /** Removes a notice and its ack (reclaimed, or no longer needed); the application sees it closed. */
  public CompletableFuture<Void> closeNotice(String appId, long noticeId) {
    String notice = paths.notice(appId, noticeId);
    String ack = paths.ack(appId, noticeId);
    return onWriter("close checkpoint notice " + noticeId + " of " + appId, () -> {
      deleteIfThere(notice);
      deleteIfThere(ack);
      return null;
    });
  }

  /** Removes every znode of {@code appId}; call when the application finishes. */
  public CompletableFuture<Void> forget(String appId) {
    live.remove(appId);
    return onWriter("remove checkpoint znodes of " + appId, () -> {
      // An application whose open was skipped has no znodes, unless a scheduler before this one made them (the
      // mirror has those once loaded): then nothing is sent. Even a delete that finds nothing is a ZooKeeper write.
      boolean ours = withZnodes.remove(appId);
      if (!ours && mirrorLoaded && mirror.get(paths.app(appId)).isEmpty()) {
        return null;
      }
      if (deleteApp(appId)) {
        LOG.info("Removed checkpoint znodes of {}", appId);
      }
      return null;
    });
  }

  /**
   * Removes the znodes of every application {@code running} does not name and nobody opened since: those that ended
   * while no scheduler led, or whose removal a leader had not written yet when it stepped down. Nobody else removes
   * them: a scheduler forgets the applications it saw end. Call as the new leader once YARN's recovery has told it
   * every application that still runs; {@code running} is asked on the writer thread.
   *
   * @return how many applications' znodes were removed
   */
  public CompletableFuture<Integer> sweep(Predicate<String> running) {
    return onWriter("remove checkpoint znodes of ended applications", () -> {
      List<String> apps;
      try {
        apps = client.getChildren().forPath(paths.apps());
      } catch (KeeperException.NoNodeException none) {
        return 0;
      }
      int removed = 0;
      for (String appId : apps) {
        if (!live.contains(appId) && !running.test(appId) && deleteApp(appId)) {
          withZnodes.remove(appId);
          removed++;
        }
      }
      if (removed > 0) {
        LOG.info("Removed the checkpoint znodes of {} applications that ended before this scheduler led", removed);
      }
      return removed;
    });
  }

  /** Whether the mirror has loaded the znodes that were there when the store started. For tests. */
  boolean mirrorLoaded() {
    return mirrorLoaded;
  }

  /** A notice as last mirrored; empty when it is not open (or not mirrored yet). */
  public Optional<CheckpointNoticeView> notice(String appId, long noticeId) {
    return Optional.ofNullable(notices.get(paths.notice(appId, noticeId)));
  }

  /** {@code appId}'s open notices as last mirrored, by id (after a restart: the ones the previous RM issued). */
  public List<CheckpointNoticeView> notices(String appId) {
    return notices.values().stream().filter(n -> n.appId().equals(appId))
        .sorted(Comparator.comparingLong(CheckpointNoticeView::noticeId)).toList();
  }

  /** {@code appId}'s last valid checkpoint report, as last mirrored. */
  public Optional<CheckpointReportView> lastReport(String appId) {
    return Optional.ofNullable(reports.get(appId));
  }

  @Override
  public void close() {
    BackgroundWriter.stop(writer, LOG, "Checkpoint notices");
    mirror.close();
    reader.shutdownNow();
    session.close();
  }

  private void begin() {
    onWriter("prepare " + paths.apps(), () -> {
      ensureDirectory(paths.apps());
      publishSchema();
      return null;
    });
    mirror.start();
  }

  // ---- writer thread -------------------------------------------------------------------------------------------

  /** The application's directories and report slot, keyed to {@code owner}; returns the owner-slot ACL. */
  private List<ACL> ensureApp(CheckpointCredentials owner) throws Exception {
    String appId = owner.appId();
    withZnodes.add(appId);
    List<ACL> slot = acls.ownerSlot(owner.aclId(), Optional.empty());
    try {
      // A new application, the usual case: all its znodes in one round trip. Checking each (below) takes eight.
      client.transaction().forOperations(
          client.transactionOp().create().withACL(acls.readable()).forPath(paths.app(appId)),
          client.transactionOp().create().withACL(acls.readable()).forPath(paths.notices(appId)),
          client.transactionOp().create().withACL(acls.readable()).forPath(paths.acks(appId)),
          client.transactionOp().create().withACL(slot).forPath(paths.report(appId), new byte[0]));
      return slot;
    } catch (KeeperException.NodeExistsException | KeeperException.NoNodeException e) {
      // Opened before (a new AMRMToken, a notice, a scheduler that took over), or the root is gone: one by one.
    }
    ensureDirectory(paths.apps());
    ensureDirectory(paths.app(appId));
    ensureDirectory(paths.notices(appId));
    ensureDirectory(paths.acks(appId));
    return rekey(owner);
  }

  /**
   * Grants {@code owner} its slots. A new identity becomes the newest and the one before stays admitted until the
   * next change (see {@link CheckpointAcls}); the same identity again changes nothing.
   */
  private List<ACL> rekey(CheckpointCredentials owner) throws Exception {
    String report = paths.report(owner.appId());
    Id current = owner.aclId();
    List<ACL> existing;
    try {
      existing = client.getACL().forPath(report);
    } catch (KeeperException.NoNodeException e) {
      List<ACL> acl = acls.ownerSlot(current, Optional.empty());
      createIfMissing(report, acl);
      return acl;
    }
    Optional<Id> newest = CheckpointAcls.newestOwner(existing, owner.appId());
    if (newest.equals(Optional.of(current)) && acls.whyNotOwnerOnly(existing, owner.appId()).isEmpty()) {
      return existing;
    }
    List<ACL> acl = acls.ownerSlot(current, newest);
    setAcl(report, acl);
    for (String ack : client.getChildren().forPath(paths.acks(owner.appId()))) {
      setAcl(paths.acks(owner.appId()) + "/" + ack, acl);
    }
    LOG.info("Checkpoint znodes of {} re-keyed to its current AMRMToken", owner.appId());
    return acl;
  }

  private CheckpointNoticeView writeNotice(CheckpointNoticeView notice) throws Exception {
    String path = paths.notice(notice.appId(), notice.noticeId());
    for (int attempt = 0; attempt < 5; attempt++) {
      Stat stat = new Stat();
      try {
        client.getData().storingStatIn(stat).forPath(path);
        // Only the scheduler writes a notice, so revision = znode version + 1 throughout (1 at creation).
        CheckpointNoticeView next = notice.withRevision(stat.getVersion() + 2);
        fence.commit(client, "checkpoint notice " + path, client.transactionOp().setData()
            .withVersion(stat.getVersion()).forPath(path, CheckpointRecords.encode(next)));
        return next;
      } catch (KeeperException.NoNodeException e) {
        CheckpointNoticeView first = notice.withRevision(1);
        try {
          fence.commit(client, "checkpoint notice " + path, client.transactionOp().create()
              .withACL(acls.readable()).forPath(path, CheckpointRecords.encode(first)));
          return first;
        } catch (KeeperException.NodeExistsException raced) {
          // Written meanwhile: read it again.
        }
      } catch (KeeperException.BadVersionException raced) {
        // Written meanwhile: read it again.
      }
    }
    throw new IOException(path + " kept changing while it was re-issued");
  }

  private void ensureDirectory(String path) throws Exception {
    try {
      client.create().creatingParentsIfNeeded().withACL(acls.readable()).forPath(path);
    } catch (KeeperException.NodeExistsException e) {
      List<ACL> acl = client.getACL().forPath(path);
      if (!acl.equals(acls.readable())) {
        setAcl(path, acls.readable());
      }
    }
  }

  private void createIfMissing(String path, List<ACL> acl) throws Exception {
    try {
      client.create().withACL(acl).forPath(path, new byte[0]);
    } catch (KeeperException.NodeExistsException e) {
      // Created earlier; its ACL is kept current by rekey().
    }
  }

  private void setAcl(String path, List<ACL> acl) throws Exception {
    try {
      client.setACL().withACL(acl).forPath(path);
    } catch (KeeperException.NoAuthException e) {
      throw new IOException("cannot take over " + path + ": its ACL does not let the scheduler change it (created by "
          + "someone else?); remove it with ZooKeeper super-user rights", e);
    }
  }

  /** Removes the application's znodes; false if there were none. */
  private boolean deleteApp(String appId) throws Exception {
    try {
      // No notice open, the usual case: one round trip.
      client.transaction().forOperations(
          client.transactionOp().delete().forPath(paths.report(appId)),
          client.transactionOp().delete().forPath(paths.notices(appId)),
          client.transactionOp().delete().forPath(paths.acks(appId)),
          client.transactionOp().delete().forPath(paths.app(appId)));
      return true;
    } catch (KeeperException.NoNodeException | KeeperException.NotEmptyException e) {
      // Never opened, or notices and acks remain: walk the tree.
    }
    try {
      client.delete().deletingChildrenIfNeeded().forPath(paths.app(appId));
      return true;
    } catch (KeeperException.NoNodeException gone) {
      return false; // Never opened, or removed already.
    }
  }

  private void deleteIfThere(String path) throws Exception {
    try {
      client.delete().forPath(path);
    } catch (KeeperException.NoNodeException gone) {
      // Closed already.
    }
  }

  private void publishSchema() throws IOException {
    if (!schemaPublished) {
      schemas.publish(List.of(CheckpointNotice.getClassSchema()));
      schemaPublished = true;
    }
  }

  // ---- reader thread -------------------------------------------------------------------------------------------

  private void changed(ChildData data) {
    paths.classify(data.getPath()).ifPresent(z -> {
      switch (z.kind()) {
        case NOTICE -> mirrorNotice(data);
        case ACK -> onAck(data, z);
        case REPORT -> onReport(data, z);
        default -> throw new IllegalStateException(z.kind().toString());
      }
    });
  }

  private void deleted(ChildData data) {
    paths.classify(data.getPath()).ifPresent(z -> {
      if (z.kind() == CheckpointPaths.Znode.Kind.NOTICE) {
        notices.remove(data.getPath());
      } else if (z.kind() == CheckpointPaths.Znode.Kind.REPORT) {
        reports.remove(z.appId());
      }
    });
  }

  private void mirrorNotice(ChildData data) {
    try {
      notices.put(data.getPath(), records.decodeNotice(data.getData()));
    } catch (IOException e) {
      LOG.error("Ignoring unreadable checkpoint notice at {}: {}", data.getPath(), e.getMessage());
    }
  }

  private void onAck(ChildData data, CheckpointPaths.Znode z) {
    if (data.getData() == null || data.getData().length == 0) {
      return; // the empty slot written with the notice: not answered yet
    }
    String path = data.getPath();
    Optional<String> untrusted = untrustedSlot(path, z.appId());
    if (untrusted.isPresent()) {
      reject(z.appId(), path, "ack", untrusted.get());
      return;
    }
    CheckpointAckView ack;
    try {
      ack = records.decodeAck(data.getData());
    } catch (IOException e) {
      reject(z.appId(), path, "ack", e.getMessage());
      return;
    }
    if (!ack.appId().equals(z.appId()) || ack.noticeId() != z.noticeId()) {
      reject(z.appId(), path, "ack", "it names application " + ack.appId() + " notice " + ack.noticeId());
      return;
    }
    Optional<CheckpointNoticeView> notice = currentNotice(z.appId(), z.noticeId());
    if (notice.isEmpty()) {
      reject(z.appId(), path, "ack", "it answers notice " + z.noticeId() + ", which is not open");
      return;
    }
    int revision = notice.get().revision();
    if (ack.noticeRevision() > revision) {
      reject(z.appId(), path, "ack", "it answers revision " + ack.noticeRevision() + " of notice " + z.noticeId()
          + ", which is at revision " + revision);
      return;
    }
    if (ack.kind() == CheckpointAckView.Kind.EXTEND && ack.noticeRevision() < revision) {
      LOG.debug("Ignoring EXTEND of {} to revision {} of notice {}: answered by revision {}", z.appId(),
          ack.noticeRevision(), z.noticeId(), revision);
      return;
    }
    LOG.info("Checkpoint ack of {} to notice {} (revision {}): {}", z.appId(), z.noticeId(), ack.noticeRevision(),
        ack.kind() == CheckpointAckView.Kind.DONE
            ? "DONE, checkpoint " + ack.checkpointLocation().orElse("(none given)")
            : "EXTEND by " + ack.requestedExtensionMillis() + " ms");
    call(() -> listener.onAck(ack, notice.get()));
  }

  private void onReport(ChildData data, CheckpointPaths.Znode z) {
    if (data.getData() == null || data.getData().length == 0) {
      return; // the empty slot written when the application was opened
    }
    String path = data.getPath();
    Optional<String> untrusted = untrustedSlot(path, z.appId());
    if (untrusted.isPresent()) {
      reject(z.appId(), path, "report", untrusted.get());
      return;
    }
    CheckpointReportView report;
    try {
      report = records.decodeReport(data.getData());
    } catch (IOException e) {
      reject(z.appId(), path, "report", e.getMessage());
      return;
    }
    if (!report.appId().equals(z.appId())) {
      reject(z.appId(), path, "report", "it names application " + report.appId());
      return;
    }
    reports.put(z.appId(), report);
    LOG.debug("Checkpoint of {} reported: {} taken at {}", z.appId(), report.location(), report.checkpointMillis());
    call(() -> listener.onReport(report));
  }

  /** Why the slot's content cannot be trusted to come from its application; empty when it can. */
  private Optional<String> untrustedSlot(String path, String appId) {
    try {
      return acls.whyNotOwnerOnly(client.getACL().forPath(path), appId);
    } catch (KeeperException.NoNodeException e) {
      return Optional.of("the slot was removed before its ACL could be checked");
    } catch (Exception e) {
      return Optional.of("its ACL cannot be read: " + e.getMessage());
    }
  }

  /** The notice as mirrored; read from ZooKeeper when an ack overtook it (the mirror's first load has no order). */
  private Optional<CheckpointNoticeView> currentNotice(String appId, long noticeId) {
    String path = paths.notice(appId, noticeId);
    CheckpointNoticeView mirrored = notices.get(path);
    if (mirrored != null) {
      return Optional.of(mirrored);
    }
    try {
      CheckpointNoticeView read = records.decodeNotice(client.getData().forPath(path));
      notices.put(path, read);
      return Optional.of(read);
    } catch (KeeperException.NoNodeException e) {
      return Optional.empty();
    } catch (Exception e) {
      LOG.error("Cannot read checkpoint notice {}: {}", path, e.getMessage());
      return Optional.empty();
    }
  }

  private void reject(String appId, String path, String what, String reason) {
    LOG.warn("Rejected checkpoint {} of {} at {}: {}. Not passed on; the notice's deadline stands.", what, appId,
        path, reason);
    call(() -> listener.onRejected(appId, path, reason));
  }

  private void call(Runnable listenerCall) {
    try {
      listenerCall.run();
    } catch (RuntimeException e) {
      LOG.error("Checkpoint listener failed", e);
    }
  }

  // ---- plumbing ------------------------------------------------------------------------------------------------

  private <T> CompletableFuture<T> onWriter(String what, Callable<T> op) {
    CompletableFuture<T> result = new CompletableFuture<>();
    try {
      writer.execute(() -> {
        try {
          result.complete(op.call());
        } catch (Exception e) {
          LOG.error("Cannot {}: {}", what, e.getMessage());
          result.completeExceptionally(e);
        }
      });
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(new IOException("checkpoint notice store is closed; cannot " + what, e));
    }
    return result;
  }

  private void onReader(Runnable task) {
    try {
      reader.execute(task);
    } catch (RejectedExecutionException closing) {
      // Shutting down.
    }
  }
}
