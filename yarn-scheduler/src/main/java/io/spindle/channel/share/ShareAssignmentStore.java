package io.spindle.channel.share;

import io.spindle.channel.mig.MigStatePaths;
import io.spindle.ha.Fence;
import io.spindle.ha.FencedException;
import io.spindle.ha.avro.ShareAssignmentRecord;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import org.apache.avro.AvroRuntimeException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;

/**
 * Share assignments in ZooKeeper ({@link MigStatePaths#share}): the scheduler writes which GPU a share container got
 * when it allocates the container and deletes it when the container ends; the node's device plugin reads it by the
 * container's id when YARN asks it for the container's devices. Records are Avro single-object encoded, like the MIG
 * layout records.
 *
 * <p>The store does not own the Curator client: the process that starts the client closes it.
 */
public final class ShareAssignmentStore {

  private final CuratorFramework client;
  private final MigStatePaths paths;
  private final Fence fence;
  private final List<ACL> acl;

  /** The node's side, which only reads. */
  public ShareAssignmentStore(CuratorFramework client, String root) {
    this(client, root, Fence.NONE, ZooDefs.Ids.OPEN_ACL_UNSAFE);
  }

  /**
   * {@code fence}: what a write must prove, so that only the leading scheduler's lands; {@code acl}: who may write
   * (the scheduler's identity: an assignment decides which GPU a container runs on).
   */
  public ShareAssignmentStore(CuratorFramework client, String root, Fence fence, List<ACL> acl) {
    this.client = client;
    this.paths = new MigStatePaths(root);
    this.fence = fence;
    this.acl = List.copyOf(acl);
  }

  public MigStatePaths paths() {
    return paths;
  }

  /** The scheduler's side: records the GPU a container's share is on. */
  public void write(ShareAssignmentRecord record) throws IOException {
    String path = paths.share(record.getNode(), record.getContainerId());
    byte[] bytes = encode(record);
    try {
      if (client.checkExists().forPath(path) == null) {
        try {
          client.create().creatingParentsIfNeeded().forPath(paths.shares(record.getNode()));
        } catch (KeeperException.NodeExistsException ignored) {
          // An earlier assignment of the node made it.
        }
        fence.commit(client, "share assignment " + path,
            client.transactionOp().create().withACL(acl).forPath(path, bytes));
      } else {
        fence.commit(client, "share assignment " + path, client.transactionOp().setData().forPath(path, bytes));
      }
    } catch (FencedException e) {
      throw new IOException(e.getMessage(), e);
    } catch (Exception e) {
      throw new IOException("cannot write " + path + ": " + e.getMessage(), e);
    }
  }

  /** The scheduler's side: the container ended. Deleting what is not there is no error. */
  public void delete(String node, String containerId) throws IOException {
    String path = paths.share(node, containerId);
    try {
      client.delete().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      // Never written (the write failed) or already deleted.
    } catch (Exception e) {
      throw new IOException("cannot delete " + path + ": " + e.getMessage(), e);
    }
  }

  /** The node's side: the container's assignment, empty when the scheduler wrote none. */
  public Optional<ShareAssignmentRecord> read(String node, String containerId) throws IOException {
    String path = paths.share(node, containerId);
    byte[] bytes;
    try {
      bytes = client.getData().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      return Optional.empty();
    } catch (Exception e) {
      throw new IOException("cannot read " + path + ": " + e.getMessage(), e);
    }
    try {
      return Optional.of(decode(bytes));
    } catch (IOException e) {
      throw new IOException(path + ": " + e.getMessage(), e);
    }
  }

  public static byte[] encode(ShareAssignmentRecord record) throws IOException {
    ByteBuffer buffer = record.toByteBuffer();
    byte[] bytes = new byte[buffer.remaining()];
    buffer.get(bytes);
    return bytes;
  }

  public static ShareAssignmentRecord decode(byte[] bytes) throws IOException {
    if (bytes == null || bytes.length == 0) {
      throw new IOException("empty share assignment record");
    }
    try {
      return ShareAssignmentRecord.fromByteBuffer(ByteBuffer.wrap(bytes));
    } catch (AvroRuntimeException e) {
      throw new IOException("not a share assignment record: " + e.getMessage(), e);
    }
  }
}
