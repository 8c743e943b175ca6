package io.spindle.client;

import io.spindle.client.avro.CheckpointAck;
import io.spindle.client.avro.CheckpointReport;
import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An ApplicationMaster's end of Spindle's checkpoint notices. Before the scheduler preempts containers of an
 * application it writes a notice with a deadline to ZooKeeper; this client hands it to the application's
 * {@link CheckpointHandler} and writes the answer back: DONE (checkpointed, reclaim now) or EXTEND (more time,
 * which the scheduler may grant). Independently, {@link #reportCheckpoint} tells the scheduler where the latest
 * checkpoint is, so work preempted without an answer restarts from there.
 *
 * <pre>{@code
 * try (SpindleCheckpointClient spindle = SpindleCheckpointClient.builder()
 *     .settings(SpindleZkSettings.from(yarnConf::get))      // the RM's quorum and root, from yarn-site.xml
 *     .appId(appId)
 *     .secret(AmRmTokenSecret.currentUser())                 // the attempt's AMRMToken password, followed as it rolls
 *     .build()) {
 *   spindle.register(notice -> {
 *     String where = trainer.checkpointNow();                // blocks this handler thread only
 *     return CheckpointDecision.done(where, System.currentTimeMillis());
 *   });
 *   ... run the application; after each periodic checkpoint (how long it took to write, for the advised interval):
 *   spindle.reportCheckpoint(location, takenAtMillis, writeTime);
 * }
 * }</pre>
 *
 * <p><b>Authentication.</b> Only the application may answer its notices: ZooKeeper lets a session write
 * {@code <root>/apps/<appId>/acks/*} and {@code .../report} only if it authenticated with credentials derived from
 * the application attempt's AMRMToken password ({@link CheckpointCredentials}). The token is replaced when the
 * ResourceManager rolls its master key (daily by default); give the client a {@link Supplier} of the current
 * password ({@link Builder#secret(Supplier)}, e.g. {@link AmRmTokenSecret#currentUser()}) and it re-authenticates
 * when ZooKeeper refuses a write.
 *
 * <p><b>Threads.</b> The handler runs on one thread of this client's own; ZooKeeper's event thread only queues
 * work. {@link #answer}, {@link #reportCheckpoint} and {@link #openNotices} may be called from any thread; each write
 * is one ZooKeeper round trip.
 */
public final class SpindleCheckpointClient implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(SpindleCheckpointClient.class);
  /** The scheduler admits the current token and the one before; a few more cost nothing and cover races. */
  private static final int MAX_CREDENTIALS = 4;

  private final String appId;
  private final CheckpointPaths paths;
  private final Supplier<byte[]> secret;
  /** Every credential this client has authenticated with; a new ZooKeeper session gets all of them. */
  private final Set<CheckpointCredentials> credentials = new CopyOnWriteArraySet<>();
  private final CuratorFramework zk;
  private final ZkSchemaStore schemas;
  private final CheckpointRecords records;
  private final ExecutorService handlerThread;
  /** Notices answered DONE: later revisions are not handed to the handler again. */
  private final Set<Long> done = ConcurrentHashMap.newKeySet();
  /** Handler thread only: the newest revision of each notice the handler has seen. */
  private final Map<Long, Integer> delivered = new HashMap<>();

  private CheckpointHandler handler;
  private volatile CuratorCache notices;

  private SpindleCheckpointClient(Builder b) {
    this.appId = CheckpointPaths.checkAppId(b.appId);
    this.paths = new CheckpointPaths(b.root);
    this.secret = b.secret;
    this.credentials.add(CheckpointCredentials.of(appId, Objects.requireNonNull(secret.get(), "secret")));
    this.zk = CuratorFrameworkFactory.builder().connectString(b.connectString)
        .retryPolicy(new ExponentialBackoffRetry(200, 10, 10_000)).zookeeperFactory(authenticatingFactory())
        .build();
    this.schemas = new ZkSchemaStore(zk, paths);
    this.records = new CheckpointRecords(schemas);
    this.handlerThread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "spindle-checkpoint-handler-" + appId);
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Connects as {@code appId}, authenticated with {@code secret} (the attempt's AMRMToken password, see
   * {@link AmRmTokenSecret}). Waits up to 15 s for ZooKeeper.
   *
   * @param root Spindle's root znode, the ResourceManager's {@code yarn.scheduler.spindle.zk.root}
   *     ({@link SpindleZkSettings#from} resolves it as the ResourceManager does)
   * @throws IOException when ZooKeeper cannot be reached in time
   */
  public static SpindleCheckpointClient connect(String connectString, String root, String appId, byte[] secret)
      throws IOException {
    return builder().connectString(connectString).root(root).appId(appId).secret(secret).build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public String appId() {
    return appId;
  }

  /**
   * Starts delivering notices to {@code handler}: first those already open, then each new one and each re-issue.
   * One handler per client.
   */
  public synchronized void register(CheckpointHandler handler) {
    if (this.handler != null) {
      throw new IllegalStateException("a checkpoint handler is already registered for " + appId);
    }
    this.handler = Objects.requireNonNull(handler, "handler");
    CuratorCache cache = CuratorCache.build(zk, paths.notices(appId));
    cache.listenable().addListener(CuratorCacheListener.builder()
        .forCreatesAndChanges((before, now) -> noticeId(now).ifPresent(id -> onHandlerThread(() -> deliver(now.getPath(), id))))
        .forDeletes(gone -> noticeId(gone).ifPresent(id -> onHandlerThread(() -> closed(id))))
        .build());
    notices = cache;
    cache.start();
    LOG.info("Application {} listens for Spindle checkpoint notices at {}", appId, paths.notices(appId));
  }

  /**
   * Answers notice {@code noticeId} now, from any thread: for a handler that returned
   * {@link CheckpointDecision#later()}, or to follow an EXTEND with DONE once the checkpoint is written.
   *
   * @throws CheckpointAuthException when ZooKeeper refuses this client's credentials
   * @throws IOException when the notice is not open (closed by the scheduler) or ZooKeeper cannot be written
   */
  public void answer(long noticeId, CheckpointDecision decision) throws IOException {
    CheckpointNoticeView notice = openNotice(noticeId)
        .orElseThrow(() -> new IOException("notice " + noticeId + " of " + appId + " is not open"));
    write(notice, Objects.requireNonNull(decision, "decision"));
  }

  /**
   * Tells the scheduler where the application's latest checkpoint is, e.g. after each periodic checkpoint. A gang
   * preempted without a DONE answer re-queues with this location.
   *
   * @throws CheckpointAuthException when ZooKeeper refuses this client's credentials
   * @throws IOException when the scheduler has not opened this application's znodes (it does when the attempt
   *     starts) or ZooKeeper cannot be written
   */
  public void reportCheckpoint(String location, long checkpointMillis) throws IOException {
    report(new CheckpointReportView(appId, location, checkpointMillis, System.currentTimeMillis()));
  }

  /**
   * As {@link #reportCheckpoint(String, long)}, saying also how long the checkpoint took to write: the scheduler then
   * advises the checkpoint interval for this application's own write time rather than a default.
   */
  public void reportCheckpoint(String location, long checkpointMillis, Duration writeTime) throws IOException {
    report(new CheckpointReportView(appId, location, checkpointMillis, System.currentTimeMillis(),
        OptionalLong.of(writeTime.toMillis())));
  }

  private void report(CheckpointReportView report) throws IOException {
    setData(paths.report(appId), CheckpointRecords.encode(report), "report a checkpoint");
    LOG.info("Reported checkpoint {} taken at {} for {}{}", report.location(),
        Instant.ofEpochMilli(report.checkpointMillis()), appId,
        report.writeMillis().isPresent() ? " (written in " + report.writeMillis().getAsLong() + " ms)" : "");
  }

  /** The notices open now (issued and not closed), by id; read from ZooKeeper unless a handler is registered. */
  public List<CheckpointNoticeView> openNotices() throws IOException {
    List<CheckpointNoticeView> out = new ArrayList<>();
    CuratorCache cache = notices;
    if (cache != null) {
      for (ChildData d : cache.stream().toList()) {
        if (noticeId(d).isPresent()) {
          out.add(records.decodeNotice(d.getData()));
        }
      }
    } else {
      for (long id : childIds()) {
        openNotice(id).ifPresent(out::add);
      }
    }
    out.sort(Comparator.comparingLong(CheckpointNoticeView::noticeId));
    return out;
  }

  @Override
  public void close() {
    CuratorCache cache = notices;
    if (cache != null) {
      cache.close();
    }
    handlerThread.shutdown();
    try {
      if (!handlerThread.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("Checkpoint handler of {} still running at close", appId);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    zk.close();
  }

  private void start(Duration connectTimeout) throws IOException {
    zk.start();
    try {
      if (!zk.blockUntilConnected((int) connectTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IOException("cannot reach ZooKeeper within " + connectTimeout);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      close();
      throw new IOException("interrupted while connecting to ZooKeeper", e);
    } catch (IOException e) {
      close();
      throw e;
    }
    try {
      schemas.publish(List.of(CheckpointAck.getClassSchema(), CheckpointReport.getClassSchema()));
    } catch (IOException e) {
      // Not fatal: a scheduler of the same protocol version reads these records without it.
      LOG.warn("Cannot publish this client's record schemas ({}); a scheduler older than this client may not read "
          + "its answers", e.getMessage());
    }
  }

  private void deliver(String path, long noticeId) {
    CuratorCache cache = notices;
    Optional<ChildData> data = cache == null ? Optional.empty() : cache.get(path);
    if (data.isEmpty()) {
      return; // closed meanwhile
    }
    CheckpointNoticeView notice;
    try {
      notice = records.decodeNotice(data.get().getData());
    } catch (IOException e) {
      LOG.error("Ignoring unreadable checkpoint notice at {}: {}", path, e.getMessage());
      return;
    }
    if (!notice.appId().equals(appId) || notice.noticeId() != noticeId) {
      LOG.error("Ignoring checkpoint notice at {}: it names application {} notice {}", path, notice.appId(),
          notice.noticeId());
      return;
    }
    Integer seen = delivered.get(noticeId);
    if ((seen != null && notice.revision() <= seen) || done.contains(noticeId)) {
      return; // an older revision queued behind a newer one, or answered DONE already
    }
    delivered.put(noticeId, notice.revision());
    LOG.info("Checkpoint notice {} (revision {}) for {}: {} container(s) go at {} unless acknowledged; {}",
        noticeId, notice.revision(), appId, notice.containerIds().size(), Instant.ofEpochMilli(notice.deadlineMillis()),
        notice.refusal().map(r -> "extension refused: " + r).orElse(notice.reason()));
    CheckpointDecision decision;
    try {
      decision = handler.onNotice(notice);
    } catch (Exception e) {
      LOG.error("Checkpoint handler failed on notice {} of {}; unanswered, the containers go at the deadline",
          noticeId, appId, e);
      return;
    }
    if (decision == null) {
      LOG.warn("Checkpoint handler answered null to notice {} of {}; taken as later()", noticeId, appId);
      return;
    }
    try {
      write(notice, decision);
    } catch (IOException e) {
      LOG.error("Cannot answer checkpoint notice {} of {}: {}", noticeId, appId, e.getMessage());
    }
  }

  private void closed(long noticeId) {
    delivered.remove(noticeId);
    done.remove(noticeId);
    LOG.info("Checkpoint notice {} of {} closed by the scheduler", noticeId, appId);
    try {
      handler.onClosed(noticeId);
    } catch (RuntimeException e) {
      LOG.error("Checkpoint handler failed on the close of notice {} of {}", noticeId, appId, e);
    }
  }

  private void write(CheckpointNoticeView notice, CheckpointDecision decision) throws IOException {
    CheckpointAckView ack;
    long now = System.currentTimeMillis();
    if (decision instanceof CheckpointDecision.Done d) {
      ack = new CheckpointAckView(appId, notice.noticeId(), notice.revision(), CheckpointAckView.Kind.DONE, 0,
          d.location(), d.checkpointMillis(), now);
    } else if (decision instanceof CheckpointDecision.Extend e) {
      ack = new CheckpointAckView(appId, notice.noticeId(), notice.revision(), CheckpointAckView.Kind.EXTEND,
          e.by().toMillis(), Optional.empty(), null, now);
    } else {
      return; // later(): nothing to write now
    }
    setData(paths.ack(appId, notice.noticeId()), CheckpointRecords.encode(ack), "answer notice " + notice.noticeId());
    if (ack.kind() == CheckpointAckView.Kind.DONE) {
      done.add(notice.noticeId());
    }
    LOG.info("Answered checkpoint notice {} (revision {}) of {}: {}", notice.noticeId(), notice.revision(), appId,
        decision);
  }

  /** Writes a slot the scheduler created; on NoAuth re-reads the secret (a rolled token) and tries once more. */
  private void setData(String path, byte[] bytes, String what) throws IOException {
    for (boolean retried = false; ; retried = true) {
      try {
        zk.setData().forPath(path, bytes);
        return;
      } catch (KeeperException.NoAuthException e) {
        if (!retried && refreshCredentials()) {
          continue;
        }
        String message = "ZooKeeper refused to let this client " + what + " for application " + appId
            + " (NoAuth at " + path + "): its secret is not " + appId + "'s current AMRMToken password";
        LOG.error(message);
        throw new CheckpointAuthException(message, e);
      } catch (KeeperException.NoNodeException e) {
        throw new IOException("cannot " + what + ": " + path + " does not exist (the scheduler creates it; "
            + "the notice is closed, or the application is not under Spindle's checkpoint protocol)", e);
      } catch (Exception e) {
        throw new IOException("cannot " + what + " at " + path + ": " + e.getMessage(), e);
      }
    }
  }

  /** Authenticates the live session with the secret the supplier holds now; false when it is not new. */
  private synchronized boolean refreshCredentials() {
    CheckpointCredentials current;
    try {
      current = CheckpointCredentials.of(appId, secret.get());
    } catch (RuntimeException e) {
      LOG.warn("Cannot read the current secret of {}: {}", appId, e.getMessage());
      return false;
    }
    if (!credentials.add(current)) {
      return false;
    }
    while (credentials.size() > MAX_CREDENTIALS) {
      credentials.remove(credentials.iterator().next()); // the oldest: a long job rolls its token daily
    }
    try {
      zk.getZookeeperClient().getZooKeeper().addAuthInfo(CheckpointCredentials.SCHEME, current.authBytes());
      LOG.info("Re-authenticated {} to ZooKeeper with its current AMRMToken", appId);
      return true;
    } catch (Exception e) {
      LOG.warn("Cannot re-authenticate {} to ZooKeeper: {}", appId, e.getMessage());
      return false;
    }
  }

  private Optional<CheckpointNoticeView> openNotice(long noticeId) throws IOException {
    String path = paths.notice(appId, noticeId);
    CuratorCache cache = notices;
    byte[] bytes;
    if (cache != null) {
      Optional<ChildData> data = cache.get(path);
      if (data.isEmpty()) {
        return Optional.empty();
      }
      bytes = data.get().getData();
    } else {
      try {
        bytes = zk.getData().forPath(path);
      } catch (KeeperException.NoNodeException e) {
        return Optional.empty();
      } catch (Exception e) {
        throw new IOException("cannot read " + path + ": " + e.getMessage(), e);
      }
    }
    return Optional.of(records.decodeNotice(bytes));
  }

  private List<Long> childIds() throws IOException {
    List<Long> ids = new ArrayList<>();
    try {
      for (String child : zk.getChildren().forPath(paths.notices(appId))) {
        paths.classify(paths.notices(appId) + "/" + child).ifPresent(z -> ids.add(z.noticeId()));
      }
    } catch (KeeperException.NoNodeException e) {
      return ids;
    } catch (Exception e) {
      throw new IOException("cannot list " + paths.notices(appId) + ": " + e.getMessage(), e);
    }
    return ids;
  }

  private Optional<Long> noticeId(ChildData data) {
    return paths.classify(data.getPath())
        .filter(z -> z.kind() == CheckpointPaths.Znode.Kind.NOTICE && z.appId().equals(appId))
        .map(CheckpointPaths.Znode::noticeId);
  }

  private void onHandlerThread(Runnable task) {
    try {
      handlerThread.execute(task);
    } catch (RejectedExecutionException closing) {
      // The client is closing; the notice stays in ZooKeeper.
    }
  }

  private ZookeeperFactory authenticatingFactory() {
    return new ZookeeperFactory() {
      @Override
      public ZooKeeper newZooKeeper(String connectString, int sessionTimeout, Watcher watcher, boolean readOnly)
          throws Exception {
        return authenticate(new ZooKeeper(connectString, sessionTimeout, watcher, readOnly));
      }

      @Override
      public ZooKeeper newZooKeeper(String connectString, int sessionTimeout, Watcher watcher, boolean readOnly,
          ZKClientConfig config) throws Exception {
        return authenticate(config == null ? new ZooKeeper(connectString, sessionTimeout, watcher, readOnly)
            : new ZooKeeper(connectString, sessionTimeout, watcher, readOnly, config));
      }
    };
  }

  private ZooKeeper authenticate(ZooKeeper session) {
    for (CheckpointCredentials c : credentials) {
      session.addAuthInfo(CheckpointCredentials.SCHEME, c.authBytes());
    }
    return session;
  }

  /** Connection settings. {@link #build()} connects. */
  public static final class Builder {
    private String connectString;
    private String root;
    private String appId;
    private Supplier<byte[]> secret;
    private Duration connectTimeout = Duration.ofSeconds(15);

    private Builder() {}

    public Builder connectString(String connectString) {
      this.connectString = connectString;
      return this;
    }

    public Builder root(String root) {
      this.root = root;
      return this;
    }

    /** Connect string and root as the ResourceManager resolves them. */
    public Builder settings(SpindleZkSettings settings) {
      return connectString(settings.address()).root(settings.root());
    }

    public Builder appId(String appId) {
      this.appId = appId;
      return this;
    }

    /** A fixed secret: the AMRMToken password at connect time (re-authentication after a key roll needs a new client). */
    public Builder secret(byte[] secret) {
      byte[] copy = Objects.requireNonNull(secret, "secret").clone();
      this.secret = copy::clone;
      return this;
    }

    /** The AMRMToken password as it is now; read at connect and again when ZooKeeper refuses a write. */
    public Builder secret(Supplier<byte[]> secret) {
      this.secret = Objects.requireNonNull(secret, "secret");
      return this;
    }

    public Builder connectTimeout(Duration connectTimeout) {
      this.connectTimeout = Objects.requireNonNull(connectTimeout, "connectTimeout");
      return this;
    }

    /** Connects and publishes the schemas this client writes. */
    public SpindleCheckpointClient build() throws IOException {
      if (connectString == null || connectString.isBlank()) {
        throw new IllegalArgumentException("no ZooKeeper connect string (" + SpindleZkSettings.ZK_ADDRESS + ")");
      }
      Objects.requireNonNull(root, "root");
      Objects.requireNonNull(secret, "secret");
      SpindleCheckpointClient client = new SpindleCheckpointClient(this);
      client.start(connectTimeout);
      return client;
    }
  }
}
