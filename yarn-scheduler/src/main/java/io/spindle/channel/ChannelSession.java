package io.spindle.channel;

import io.spindle.ha.ZkSettings;
import java.io.Closeable;
import java.util.List;
import org.apache.curator.framework.AuthInfo;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * The ZooKeeper client a channel talks over. In the ResourceManager that is the scheduler's one session
 * ({@link io.spindle.ha.SchedulerZk}), which its owner closes: losing it must stop leadership and every channel
 * together. A channel started on its own connects a client of its own, and closing the channel closes it.
 */
public final class ChannelSession implements Closeable {

  private final CuratorFramework client;
  private final boolean owned;

  private ChannelSession(CuratorFramework client, boolean owned) {
    this.client = client;
    this.owned = owned;
  }

  /** A started client the caller owns; closing the channel leaves it open. */
  public static ChannelSession shared(CuratorFramework client) {
    return new ChannelSession(client, false);
  }

  /**
   * Connects to {@code settings}' quorum, authenticated with {@code auth} (none: empty). Does not wait for the
   * connection: until it is up, the channel's writes wait on its own threads, never on the ResourceManager's.
   */
  public static ChannelSession connect(ZkSettings settings, List<AuthInfo> auth) {
    CuratorFramework client = CuratorFrameworkFactory.builder().connectString(settings.address())
        .retryPolicy(new ExponentialBackoffRetry(200, 10, 10_000)).authorization(auth).build();
    client.start();
    return new ChannelSession(client, true);
  }

  public CuratorFramework client() {
    return client;
  }

  /** Closes the client if the channel connected it. */
  @Override
  public void close() {
    if (owned) {
      client.close();
    }
  }
}
