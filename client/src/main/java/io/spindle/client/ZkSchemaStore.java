package io.spindle.client;

import io.spindle.client.avro.CheckpointAck;
import io.spindle.client.avro.CheckpointNotice;
import io.spindle.client.avro.CheckpointReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.SchemaParseException;
import org.apache.avro.message.SchemaStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Avro schemas checkpoint records were written with, kept in ZooKeeper at {@code <root>/schemas/<fingerprint>}.
 *
 * <p>Why: a single-object-encoded record carries only its schema's fingerprint, and the reader needs the writer's
 * schema to resolve it. ApplicationMasters bundle a client of their own age while the ResourceManager is upgraded on
 * its own schedule, so neither side can assume it knows the other's schema version. Each writer publishes the
 * schemas it writes before its first write; a reader that meets an unknown fingerprint reads it from here (once per
 * process) and resolves by Avro's rules.
 *
 * <p>{@code <root>/schemas} lets anyone create and read; a published schema is readable by everyone and writable by
 * no one, so it cannot be changed once there. A schema read back must hash to the fingerprint it is filed under.
 */
public final class ZkSchemaStore implements SchemaStore {

  private static final Logger LOG = LoggerFactory.getLogger(ZkSchemaStore.class);

  /** The directory: anyone may add a schema; nobody may delete or change one. */
  public static final List<ACL> DIRECTORY_ACL = List.of(
      new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.CREATE, ZooDefs.Ids.ANYONE_ID_UNSAFE));
  /** A schema: readable by everyone, writable by no one. */
  public static final List<ACL> SCHEMA_ACL = ZooDefs.Ids.READ_ACL_UNSAFE;

  /** The schemas this build of the protocol writes and reads. */
  public static final List<Schema> LOCAL = List.of(CheckpointNotice.getClassSchema(), CheckpointAck.getClassSchema(),
      CheckpointReport.getClassSchema());

  /** A checkpoint schema is about 2 KB of JSON; anything this large is not one, whoever published it. */
  public static final int MAX_SCHEMA_BYTES = 64 * 1024;
  /**
   * Schemas read from ZooKeeper that one process keeps, beside its own. Each client version publishes three, so this
   * covers years of releases; without a bound, anyone allowed to publish (everyone) could fill the RM's memory.
   */
  public static final int MAX_FOREIGN_SCHEMAS = 64;

  private final CuratorFramework client;
  private final CheckpointPaths paths;
  private final Map<Long, Schema> known = new ConcurrentHashMap<>();

  public ZkSchemaStore(CuratorFramework client, CheckpointPaths paths) {
    this.client = client;
    this.paths = paths;
    LOCAL.forEach(s -> known.put(fingerprint(s), s));
  }

  public static long fingerprint(Schema schema) {
    return SchemaNormalization.parsingFingerprint64(schema);
  }

  /** Makes {@code schemas} readable by every other process; a schema already there is left as it is. */
  public void publish(List<Schema> schemas) throws IOException {
    try {
      if (client.checkExists().forPath(paths.schemas()) == null) {
        client.create().creatingParentsIfNeeded().withACL(DIRECTORY_ACL).forPath(paths.schemas());
      }
    } catch (KeeperException.NodeExistsException raced) {
      // Another writer created it first; same ACL.
    } catch (Exception e) {
      throw new IOException("cannot create " + paths.schemas() + ": " + e.getMessage(), e);
    }
    for (Schema schema : schemas) {
      String path = paths.schema(fingerprint(schema));
      try {
        if (client.checkExists().forPath(path) != null) {
          continue; // Published before, and immutable: needs no right to create
        }
        client.create().withACL(SCHEMA_ACL).forPath(path, schema.toString().getBytes(StandardCharsets.UTF_8));
        LOG.info("Published Avro schema {} at {}", schema.getFullName(), path);
      } catch (KeeperException.NodeExistsException already) {
        // Published by an earlier process; immutable, so it is this schema (checked when read).
      } catch (Exception e) {
        throw new IOException("cannot publish schema " + schema.getFullName() + " at " + path + ": " + e.getMessage(),
            e);
      }
    }
  }

  /**
   * The schema filed under {@code fingerprint}: a local one, one read before, or one read now from ZooKeeper (a
   * blocking read: callers decode off ZooKeeper's event thread). Null when nobody published it, when what is there
   * does not hash to the fingerprint or is larger than {@link #MAX_SCHEMA_BYTES}, and once
   * {@link #MAX_FOREIGN_SCHEMAS} schemas have been read.
   */
  @Override
  public Schema findByFingerprint(long fingerprint) {
    Schema schema = known.get(fingerprint);
    if (schema != null) {
      return schema;
    }
    String path = paths.schema(fingerprint);
    if (known.size() >= LOCAL.size() + MAX_FOREIGN_SCHEMAS) {
      LOG.error("Ignoring {}: {} schemas read from ZooKeeper already, the most this process keeps", path,
          MAX_FOREIGN_SCHEMAS);
      return null;
    }
    try {
      byte[] json = client.getData().forPath(path);
      if (json.length > MAX_SCHEMA_BYTES) {
        LOG.error("Ignoring {}: {} bytes, more than a checkpoint schema's {}", path, json.length, MAX_SCHEMA_BYTES);
        return null;
      }
      schema = new Schema.Parser().parse(new String(json, StandardCharsets.UTF_8));
    } catch (KeeperException.NoNodeException e) {
      return null;
    } catch (SchemaParseException e) {
      LOG.error("Ignoring {}: not an Avro schema ({})", path, e.getMessage());
      return null;
    } catch (Exception e) {
      LOG.warn("Cannot read Avro schema {}: {}", path, e.getMessage());
      return null;
    }
    if (fingerprint(schema) != fingerprint) {
      LOG.error("Ignoring {}: the schema there has fingerprint {}", path, String.format("%016x", fingerprint(schema)));
      return null;
    }
    known.put(fingerprint, schema);
    return schema;
  }
}
