package io.spindle.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.spindle.client.avro.CheckpointAck;
import io.spindle.client.avro.CheckpointReport;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.message.SchemaStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

class CheckpointRecordsTest {

  private final CheckpointRecords records = new CheckpointRecords(new SchemaStore.Cache());

  static CheckpointNoticeView notice(long id, int revision, long deadline) {
    return new CheckpointNoticeView("application_1_0001", id, revision, List.of("gang-0"),
        List.of("container_1_0001_01_000002", "container_1_0001_01_000003"), "queue llm is below its guarantee",
        1_000, deadline, 0, 2, 60_000, Optional.empty());
  }

  @Test
  void everyRecordSurvivesTheRoundTrip() throws Exception {
    CheckpointNoticeView n = notice(7, 2, 31_000).withRevision(3);
    CheckpointAckView done = new CheckpointAckView("application_1_0001", 7, 3, CheckpointAckView.Kind.DONE, 0,
        Optional.of("hdfs:///ckpt/step-900"), OptionalLong.of(29_000), 30_000);
    CheckpointAckView extend = new CheckpointAckView("application_1_0001", 7, 3, CheckpointAckView.Kind.EXTEND,
        45_000, Optional.empty(), OptionalLong.empty(), 30_000);
    CheckpointReportView r = new CheckpointReportView("application_1_0001", "s3://b/ckpt/step-800", 20_000, 20_500);
    CheckpointReportView timed = new CheckpointReportView("application_1_0001", "s3://b/ckpt/step-900", 30_000, 30_500,
        OptionalLong.of(42_000));

    assertThat(records.decodeNotice(CheckpointRecords.encode(n))).isEqualTo(n);
    assertThat(records.decodeAck(CheckpointRecords.encode(done))).isEqualTo(done);
    assertThat(records.decodeAck(CheckpointRecords.encode(extend))).isEqualTo(extend);
    assertThat(records.decodeReport(CheckpointRecords.encode(r))).isEqualTo(r);
    assertThat(records.decodeReport(CheckpointRecords.encode(timed))).isEqualTo(timed);
  }

  /** A client older than the write time reports without it; the scheduler reads its report with the time unknown. */
  @Test
  void anOlderClientsReportReadsWithoutAWriteTime() throws Exception {
    Schema current = CheckpointReport.getClassSchema();
    List<Schema.Field> fields = new java.util.ArrayList<>();
    for (Schema.Field f : current.getFields()) {
      if (!f.name().equals("writeMillis")) {
        fields.add(new Schema.Field(f.name(), f.schema(), f.doc(), f.defaultVal()));
      }
    }
    Schema older = Schema.createRecord(current.getName(), current.getDoc(), current.getNamespace(), false, fields);
    GenericRecord report = new GenericData.Record(older);
    report.put("appId", "application_1_0001");
    report.put("location", "hdfs:///ckpt/7");
    report.put("checkpointMillis", 7L);
    report.put("reportedMillis", 8L);
    byte[] bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), older).encode(report).array();
    SchemaStore.Cache published = new SchemaStore.Cache();
    published.addSchema(older);

    assertThat(new CheckpointRecords(published).decodeReport(bytes))
        .isEqualTo(new CheckpointReportView("application_1_0001", "hdfs:///ckpt/7", 7, 8, OptionalLong.empty()));
  }

  @Test
  void garbageIsRefusedWithTheReason() {
    assertThatThrownBy(() -> records.decodeAck(new byte[0])).hasMessageContaining("empty checkpoint ack");
    assertThatThrownBy(() -> records.decodeAck("DONE hdfs:///x".getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("no Avro single-object header");
    assertThatThrownBy(() -> records.decodeAck(new byte[CheckpointRecords.MAX_RECORD_BYTES + 1]))
        .hasMessageContaining("more than");
  }

  @Test
  void aRecordOfAnotherTypeIsNotTakenForAnAck() throws Exception {
    byte[] report = CheckpointRecords.encode(new CheckpointReportView("application_1_0001", "x", 1, 2));
    // Known schema, but the wrong one: the decoder resolves it against the ack schema and fails.
    assertThatThrownBy(() -> records.decodeAck(report)).hasMessageContaining("checkpoint ack");
  }

  @Test
  void aLengthRunningPastTheEndIsRefusedBeforeAnythingIsAllocated() throws Exception {
    byte[] good = CheckpointRecords.encode(new CheckpointAckView("application_1_0001", 1, 1,
        CheckpointAckView.Kind.DONE, 0, Optional.empty(), OptionalLong.empty(), 5));
    // Header, then the appId length as the varint of 2^31 - 9 (zig-zag): 2 GB that are not there.
    ByteArrayOutputStream hostile = new ByteArrayOutputStream();
    hostile.write(good, 0, 10);
    hostile.writeBytes(new byte[] {(byte) 0xEE, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x0F});
    assertThatThrownBy(() -> records.decodeAck(hostile.toByteArray()))
        .hasMessageContaining("malformed checkpoint ack").hasMessageContaining("runs past the end");

    byte[] trailing = java.util.Arrays.copyOf(good, good.length + 3);
    assertThatThrownBy(() -> records.decodeAck(trailing)).hasMessageContaining("3 bytes left over");

    byte[] truncated = java.util.Arrays.copyOf(good, good.length - 1);
    assertThatThrownBy(() -> records.decodeAck(truncated)).hasMessageContaining("malformed checkpoint ack");
  }

  /**
   * Found by CheckpointAckFuzzTest: a published writer schema with an array of nulls, and two blocks whose counts
   * add up past Long.MAX_VALUE, slipped past the item limit and kept the RM's reader thread looping for ever.
   */
  @Test
  void blockCountsAddingUpPastTheLimitAreRefused() {
    Schema nulls = Schema.createRecord("Nulls", null, "hostile", false,
        List.of(new Schema.Field("n", Schema.createArray(Schema.create(Schema.Type.NULL)))));
    CheckpointRecords withHostileSchema = new CheckpointRecords(fingerprint -> nulls);
    ByteArrayOutputStream bytes = header(nulls);
    bytes.writeBytes(new byte[] {0x02}); // a block of 1
    bytes.writeBytes(new byte[] {(byte) 0xFE, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF,
        (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x01}); // a block of Long.MAX_VALUE
    bytes.write(0); // the end
    assertTimeoutPreemptively(java.time.Duration.ofSeconds(10), () -> assertThatThrownBy(
        () -> withHostileSchema.decodeAck(bytes.toByteArray())).hasMessageContaining("more than 100000 items"));
  }

  /** Zero-byte fields cost nothing to send; a schema of thousands of them, repeated, must still cost little to read. */
  @Test
  void recordsThatTakeTooManyStepsToWalkAreRefused() {
    List<Schema.Field> fields = new java.util.ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      fields.add(new Schema.Field("f" + i, Schema.create(Schema.Type.NULL)));
    }
    Schema wide = Schema.createRecord("Wide", null, "hostile", false,
        List.of(new Schema.Field("items", Schema.createArray(Schema.createRecord("W", null, "hostile", false, fields)))));
    CheckpointRecords withHostileSchema = new CheckpointRecords(fingerprint -> wide);
    ByteArrayOutputStream bytes = header(wide);
    bytes.writeBytes(new byte[] {(byte) 0xC0, (byte) 0x9A, 0x0C}); // a block of 100,000 records of 2,000 nulls each
    bytes.write(0);
    assertTimeoutPreemptively(java.time.Duration.ofSeconds(10), () -> assertThatThrownBy(
        () -> withHostileSchema.decodeAck(bytes.toByteArray())).hasMessageContaining("values (steps) in one record"));
  }

  private static ByteArrayOutputStream header(Schema writer) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(new byte[] {(byte) 0xC3, 0x01});
    out.writeBytes(java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN)
        .putLong(ZkSchemaStore.fingerprint(writer)).array());
    return out;
  }

  @Test
  void valuesTheViewRefusesMakeTheRecordInvalid() throws Exception {
    byte[] extendByZero = CheckpointAck.newBuilder().setAppId("application_1_0001").setNoticeId(1)
        .setNoticeRevision(1).setKind(io.spindle.client.avro.CheckpointAckKind.EXTEND).setAnsweredMillis(1).build()
        .toByteBuffer().array();
    assertThatThrownBy(() -> records.decodeAck(extendByZero)).hasMessageContaining("invalid checkpoint ack")
        .hasMessageContaining("EXTEND must ask for more than 0 ms");
    byte[] unknownKind = CheckpointAck.newBuilder().setAppId("application_1_0001").setNoticeId(1)
        .setNoticeRevision(1).setKind(io.spindle.client.avro.CheckpointAckKind.UNKNOWN).setAnsweredMillis(1).build()
        .toByteBuffer().array();
    assertThatThrownBy(() -> records.decodeAck(unknownKind)).hasMessageContaining("unknown kind");
  }

  @Test
  void aNewerWritersRecordIsReadThroughTheSchemaItPublished() throws Exception {
    // A later Spindle adds a field (with a default) to the ack; this build has never seen that schema.
    Schema v2 = new Schema.Parser().parse(CheckpointAck.getClassSchema().toString().replace(
        "{\"name\":\"answeredMillis\"",
        "{\"name\":\"attempt\",\"type\":\"int\",\"default\":1},{\"name\":\"answeredMillis\""));
    GenericRecord ack = new GenericData.Record(v2);
    ack.put("appId", "application_1_0001");
    ack.put("noticeId", 4L);
    ack.put("noticeRevision", 1);
    ack.put("kind", new GenericData.EnumSymbol(v2.getField("kind").schema(), "DONE"));
    ack.put("requestedExtensionMillis", 0L);
    ack.put("checkpointLocation", "hdfs:///ckpt/4");
    ack.put("checkpointMillis", 10L);
    ack.put("attempt", 2);
    ack.put("answeredMillis", 11L);
    byte[] bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v2).encode(ack).array();

    try (TestingServer server = new TestingServer(true);
        CuratorFramework zk = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100))) {
      zk.start();
      CheckpointPaths paths = new CheckpointPaths("/spindle/evolve");
      CheckpointRecords reader = new CheckpointRecords(new ZkSchemaStore(zk, paths));
      assertThatThrownBy(() -> reader.decodeAck(bytes)).hasMessageContaining("which is not published");

      new ZkSchemaStore(zk, paths).publish(List.of(v2));

      assertThat(reader.decodeAck(bytes)).isEqualTo(new CheckpointAckView("application_1_0001", 4, 1,
          CheckpointAckView.Kind.DONE, 0, Optional.of("hdfs:///ckpt/4"), OptionalLong.of(10), 11));
    }
  }

  @Test
  void aSchemaFiledUnderAnotherFingerprintIsIgnored() throws Exception {
    try (TestingServer server = new TestingServer(true);
        CuratorFramework zk = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100))) {
      zk.start();
      CheckpointPaths paths = new CheckpointPaths("/spindle/forged");
      zk.create().creatingParentsIfNeeded().forPath(paths.schema(42L),
          CheckpointAck.getClassSchema().toString().getBytes(StandardCharsets.UTF_8));
      assertThat(new ZkSchemaStore(zk, paths).findByFingerprint(42L)).isNull();
    }
  }

  /**
   * Found by CheckpointAckFuzzTest under Jazzer, which ran out of memory: every schema read from ZooKeeper was kept,
   * and anyone may publish one, so an application publishing thousands of large schemas filled the RM's heap.
   */
  @Test
  void schemasReadFromZooKeeperAreBoundedInSizeAndNumber() throws Exception {
    try (TestingServer server = new TestingServer(true);
        CuratorFramework zk = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100))) {
      zk.start();
      CheckpointPaths paths = new CheckpointPaths("/spindle/flood");
      List<Schema> flood = new java.util.ArrayList<>();
      for (int i = 0; i < ZkSchemaStore.MAX_FOREIGN_SCHEMAS + 5; i++) {
        flood.add(Schema.createRecord("Flood" + i, null, "hostile", false,
            List.of(new Schema.Field("f", Schema.create(Schema.Type.NULL)))));
      }
      new ZkSchemaStore(zk, paths).publish(flood);
      ZkSchemaStore reader = new ZkSchemaStore(zk, paths);
      long kept = flood.stream().filter(f -> reader.findByFingerprint(ZkSchemaStore.fingerprint(f)) != null).count();
      assertThat(kept).isEqualTo(ZkSchemaStore.MAX_FOREIGN_SCHEMAS);

      List<Schema.Field> fields = new java.util.ArrayList<>();
      for (int i = 0; i < 5_000; i++) {
        fields.add(new Schema.Field("field_with_a_long_name_" + i, Schema.create(Schema.Type.NULL)));
      }
      Schema huge = Schema.createRecord("Huge", null, "hostile", false, fields);
      assertThat(huge.toString().length()).isGreaterThan(ZkSchemaStore.MAX_SCHEMA_BYTES);
      new ZkSchemaStore(zk, paths).publish(List.of(huge));
      assertThat(new ZkSchemaStore(zk, paths).findByFingerprint(ZkSchemaStore.fingerprint(huge))).isNull();
    }
  }
}
