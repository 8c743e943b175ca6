package io.spindle.ha;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spindle.channel.mig.MigLayoutRecords;
import io.spindle.core.engine.DurableState;
import io.spindle.core.engine.DurableState.NoticeContainer;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.preemption.CheckpointHandshake;
import io.spindle.core.preemption.Need;
import io.spindle.ha.avro.MigLayoutRecord;
import io.spindle.ha.avro.SchedulerState;
import io.spindle.ha.avro.UnitRecord;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumWriter;
import org.junit.jupiter.api.Test;

class SchedulerStateCodecTest {

  private static final Resources TWO_GPUS = Resources.of(16_384, 4).withGpus(2);
  private static final Resources MIG = Resources.of(8_192, 2).withMig("3g.40gb", 1).withGpuModel("H100-80GB");
  private static final String C2 = "container_1700000000000_0001_01_000002";
  private static final String C3 = "container_1700000000000_0001_01_000003";
  private static final String C4 = "container_1700000000000_0001_01_000004";
  private static final String M5 = "container_1700000000000_0002_01_000005";

  /** Every field set, every optional one both present and absent somewhere. */
  static DurableState everything() {
    DurableState.UnitState gang = new DurableState.UnitState(4, AppId.of("application_1700000000000_0001"), "gang-workers",
        TWO_GPUS, PlacementSpec.gang("rack", true), 1_000, 4, List.of(C2, C3, C4));
    DurableState.UnitState single = new DurableState.UnitState(9, AppId.of("application_1700000000000_0002"), "r", MIG,
        PlacementSpec.SINGLE.withMaxRuntimeMillis(3_600_000), 2_000, 1, List.of(M5));
    DurableState.NoticeState done = new DurableState.NoticeState(3, 4, gang.appId(), gang.requestKey(), List.of(
        new NoticeContainer(C2, NodeId.of("n1"), TWO_GPUS, Long.MAX_VALUE, false),
        new NoticeContainer(C3, NodeId.of("n1"), TWO_GPUS, Long.MAX_VALUE, false),
        new NoticeContainer(C4, NodeId.of("n2"), TWO_GPUS, Long.MAX_VALUE, false),
        new NoticeContainer(null, NodeId.of("n2"), TWO_GPUS, 7_000_000, true)),
        60_000, 240_000, 1, 2, 300_000, "queue root.a is below its fair share", "hdfs:///ckpt/1/step-9",
        CheckpointHandshake.State.RECLAIM_DUE, null);
    DurableState.NoticeState killing = new DurableState.NoticeState(5, 9, single.appId(), "r",
        List.of(new NoticeContainer(M5, NodeId.of("n3"), MIG, 3_602_000, false)), 70_000, 190_000, 0, 1, 300_000,
        "application_1700000000000_0004 outranks it", null, CheckpointHandshake.State.RECLAIMING,
        "the checkpoint deadline (190000 ms) passed without a DONE answer");
    Need gangNeed = new Need(AppId.of("application_1700000000000_0004"), "workers", "root.a", "alice", 3,
        ResourceVector.of(8 * 16_384, 32, 16), 8, true, true, ResourceVector.of(1_024, 1, 0),
        ResourceVector.of(100_000, 50, 20));
    Need singleNeed = new Need(AppId.of("application_1700000000000_0006"), "r", "root.b", "bob", 0,
        ResourceVector.of(1_024, 1, 1), 1, false, false, ResourceVector.ZERO, null);
    DurableState.NoticeState letGo = new DurableState.NoticeState(2, 7, AppId.of("application_1700000000000_0003"), "r",
        List.of(new NoticeContainer("container_1700000000000_0003_01_000002", NodeId.of("n4"), TWO_GPUS, Long.MAX_VALUE, false)),
        50_000, 170_000, 0, 1, 300_000, "why", null, CheckpointHandshake.State.WITHDRAWN, null);
    return new DurableState(6, 12, List.of(gang, single),
        List.of(new DurableState.ReservationState(AppId.of("application_1700000000000_0004"), "workers", "/r1",
            List.of(NodeId.of("n1"), NodeId.of("n2")), 5_000, 8)),
        List.of(new DurableState.ReservationBackoff(AppId.of("application_1700000000000_0005"), "workers", 905_000)),
        List.of(new DurableState.ReclaimState(gangNeed, false, List.of(done, killing)),
            new DurableState.ReclaimState(singleNeed, true, List.of(letGo))),
        List.of(new DurableState.CheckpointState(gang.appId(), 50_000, "hdfs:///ckpt/1/step-9",
                java.util.OptionalLong.of(95_000)),
            new DurableState.CheckpointState(single.appId(), 10_000, null)),
        List.of(new DurableState.ResumeState(AppId.of("application_1700000000000_0007"), "r", "s3://bucket/ckpt/7")),
        new DurableState.StarvationState(
            List.of(new DurableState.WaitingSince(AppId.of("application_1700000000000_0004"), "workers", 4_000)),
            List.of(new DurableState.BelowFairShareSince("root.a", 3_000))),
        List.of(new DurableState.DeclaredEnd(M5, 3_602_000)),
        List.of(new DurableState.AttainedState(AppId.of("application_1700000000000_0004"), 840_000, 1_000, 4_000,
            2_000, 0)),
        List.of(new DurableState.LearnedRuntime("alice", "train tag=a", List.of(60_000L, 90_000L))),
        List.of(new DurableState.CordonState(NodeId.of("n3"), "replacing a fan")),
        new io.spindle.core.reliability.FailureObservations.Saved(3_600_000L * 5_000, 7_000, 24, 3),
        List.of(new DurableState.GpuFaultState(NodeId.of("n1"), 3, io.spindle.core.model.GpuHealth.State.FAILED,
                List.of(1_000L, 7_000L), 86_407_000, null),
            new DurableState.GpuFaultState(NodeId.of("n2"), 0, io.spindle.core.model.GpuHealth.State.HEALTHY,
                List.of(), 0, "reseat")))
        .withUsageHistory(List.of(
            new DurableState.UsageState("root.a", "", 1.5e9, 3.25e6, 2.4192e8, ResourceVector.of(0, 0, 6_720), 9_000),
            new DurableState.UsageState("root.a", "alice", 2.0e9, 4.0e6, 3.0e8, ResourceVector.ZERO, 8_000)));
  }

  @Test
  void everyFieldSurvivesTheRoundTripWithTheEpochAndSchemaVersion() {
    DurableState state = everything();

    byte[] bytes = SchedulerStateCodec.encode(state, 17);

    assertThat(new String(bytes, 0, 4, StandardCharsets.US_ASCII)).isEqualTo("SPST");
    assertThat(SchedulerStateCodec.decode(bytes))
        .isEqualTo(new SchedulerStateCodec.Snapshot(17, SchedulerStateCodec.SCHEMA_VERSION, state));
    assertThat(SchedulerStateCodec.decode(SchedulerStateCodec.encode(DurableState.EMPTY, 1)).state())
        .isEqualTo(DurableState.EMPTY);
  }

  @Test
  void anOlderWritersRecordReadsWithTheDefaultsOfFieldsAddedSince() throws IOException {
    // As if declaredEnds, belowFairShareSince and PlacementSpecRecord.preemptible had come in a later version.
    ObjectNode schema = currentSchemaJson();
    dropField(schema, "declaredEnds");
    dropField(schema, "belowFairShareSince");
    dropField(schema, "usageHistory");
    dropField(record(schema, "PlacementSpecRecord"), "preemptible");
    Schema older = new Schema.Parser().parse(schema.toString());
    DurableState state = everything();
    GenericRecord written = readAs(older, state);
    assertThat(written.getSchema().getField("declaredEnds")).isNull();

    DurableState read = SchedulerStateCodec.decode(SchedulerStateCodec.encode(older, written)).state();

    assertThat(read.declaredEnds()).isEmpty();
    assertThat(read.usageHistory()).as("a state saved before usage history has none").isEmpty();
    assertThat(read.starvation().queues()).isEmpty();
    assertThat(read.starvation().requests()).isEqualTo(state.starvation().requests());
    assertThat(read.units()).extracting(u -> u.spec().preemptible()).containsOnly(true);
    assertThat(read.reclaims()).isEqualTo(state.reclaims());
    assertThat(read.reservations()).isEqualTo(state.reservations());
  }

  @Test
  void stateSavedBeforeCheckpointAdviceReadsWithNoWriteTimesAndNothingObserved() throws IOException {
    ObjectNode schema = currentSchemaJson();
    dropField(schema, "failureObservations");
    dropField(record(schema, "CheckpointReportRecord"), "writeMillis");
    Schema older = new Schema.Parser().parse(schema.toString());
    DurableState state = everything();

    DurableState read = SchedulerStateCodec.decode(SchedulerStateCodec.encode(older, readAs(older, state))).state();

    assertThat(read.failures()).isEqualTo(io.spindle.core.reliability.FailureObservations.Saved.NONE);
    assertThat(read.checkpoints()).extracting(DurableState.CheckpointState::writeMillis)
        .containsOnly(java.util.OptionalLong.empty());
    assertThat(read.checkpoints()).extracting(DurableState.CheckpointState::location)
        .containsExactly("hdfs:///ckpt/1/step-9", null);
  }

  @Test
  void aNewerWritersRecordReadsWithoutWhatThisReaderDoesNotKnow() throws IOException {
    ObjectNode schema = currentSchemaJson();
    ((ArrayNode) schema.get("fields")).addObject().put("name", "drainDeadlines").put("type", "long")
        .put("default", 0);
    ((ArrayNode) record(schema, "NoticeRecord").get("fields")).addObject().put("name", "escalation")
        .put("type", "int").put("default", 0);
    Schema newer = new Schema.Parser().parse(schema.toString());
    GenericRecord written = readAs(newer, everything());
    written.put("drainDeadlines", 12L);
    written.put("schemaVersion", 2);

    SchedulerStateCodec.Snapshot read = SchedulerStateCodec.decode(SchedulerStateCodec.encode(newer, written));

    assertThat(read.schemaVersion()).isEqualTo(2);
    assertThat(read.state()).isEqualTo(everything());
  }

  @Test
  void bytesThatAreNotSchedulerStateAreRefusedSayingWhy() throws IOException {
    byte[] good = SchedulerStateCodec.encode(everything(), 3);

    assertThatThrownBy(() -> SchedulerStateCodec.decode(null)).hasMessage("not scheduler state: no bytes");
    assertThatThrownBy(() -> SchedulerStateCodec.decode(new byte[5]))
        .hasMessageContaining("5 bytes, fewer than the 17-byte header");
    byte[] mig = MigLayoutRecords.encode(MigLayoutRecord.newBuilder().setNode("n1").setGpuIndex(0)
        .setMigEnabled(true).setInstances(List.of()).setVersion(1).setUpdatedMillis(5).build());
    assertThatThrownBy(() -> SchedulerStateCodec.decode(Arrays.copyOf(mig, Math.max(mig.length, 40))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("not scheduler state: it does not start");

    byte[] format = good.clone();
    format[4] = 9;
    assertThatThrownBy(() -> SchedulerStateCodec.decode(format)).hasMessageContaining("format 9");

    byte[] length = good.clone();
    length[13] = 0x7f;
    assertThatThrownBy(() -> SchedulerStateCodec.decode(length)).hasMessageContaining("does not fit");

    byte[] schemaFlip = good.clone();
    schemaFlip[40] ^= 0x20; // A letter's case in a name: still parses, no longer the fingerprinted schema.
    assertThatThrownBy(() -> SchedulerStateCodec.decode(schemaFlip))
        .hasMessageStartingWith("corrupted scheduler state");

    GenericRecord layout = MigLayoutRecord.newBuilder().setNode("n1").setGpuIndex(0).setMigEnabled(true)
        .setInstances(List.of()).setVersion(1).setUpdatedMillis(5).build();
    assertThatThrownBy(() -> SchedulerStateCodec.decode(SchedulerStateCodec.encode(layout.getSchema(), layout)))
        .hasMessage("not scheduler state: a record of type io.spindle.ha.avro.MigLayoutRecord, not "
            + "io.spindle.ha.avro.SchedulerState");

    assertThatThrownBy(() -> SchedulerStateCodec.decode(Arrays.copyOf(good, good.length - 7)))
        .hasMessageStartingWith("corrupted scheduler state: the record does not decode");
    assertThatThrownBy(() -> SchedulerStateCodec.decode(Arrays.copyOf(good, good.length + 3)))
        .hasMessage("corrupted scheduler state: bytes are left after the record");
  }

  @Test
  void aSchemaThisReaderCannotResolveIsRefused() throws IOException {
    // A writer without nextUnitId, which has no default: the reader could not fill it in.
    ObjectNode schema = currentSchemaJson();
    dropField(schema, "nextUnitId");
    Schema incompatible = new Schema.Parser().parse(schema.toString());

    assertThatThrownBy(() -> SchedulerStateCodec.decode(SchedulerStateCodec.encode(incompatible,
        readAs(incompatible, everything()))))
        .hasMessageStartingWith("scheduler state written with a schema this reader cannot resolve")
        .hasMessageContaining("nextUnitId");
  }

  @Test
  void aRecordThatDecodesButContradictsItselfIsRefused() {
    SchedulerState record = SchedulerStateRecords.toRecord(everything(), 3, SchedulerStateCodec.SCHEMA_VERSION);
    List<UnitRecord> units = new ArrayList<>(record.getUnits());
    UnitRecord twin = UnitRecord.newBuilder(units.get(1)).setContainers(List.of("another")).build();
    units.add(twin);
    record.setUnits(units);

    assertThatThrownBy(() -> SchedulerStateCodec.decode(SchedulerStateCodec.encode(record.getSchema(), record)))
        .hasMessage("inconsistent scheduler state: unitId=9: two units with the same id");
  }

  private static ObjectNode currentSchemaJson() throws IOException {
    return (ObjectNode) new ObjectMapper().readTree(SchedulerState.getClassSchema().toString());
  }

  /** The current state, read as a record of {@code schema} (fields it lacks dropped, fields it adds defaulted). */
  private static GenericRecord readAs(Schema schema, DurableState state) throws IOException {
    SchedulerState current = SchedulerStateRecords.toRecord(state, 3, SchedulerStateCodec.SCHEMA_VERSION);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
    new SpecificDatumWriter<SchedulerState>(SchedulerState.getClassSchema()).write(current, encoder);
    encoder.flush();
    return new GenericDatumReader<GenericRecord>(SchedulerState.getClassSchema(), schema)
        .read(null, DecoderFactory.get().binaryDecoder(out.toByteArray(), null));
  }

  private static void dropField(JsonNode record, String field) {
    ArrayNode fields = (ArrayNode) record.get("fields");
    for (int i = 0; i < fields.size(); i++) {
      if (fields.get(i).get("name").asText().equals(field)) {
        fields.remove(i);
        return;
      }
    }
    throw new AssertionError("no field " + field);
  }

  /** The definition of a named record anywhere inside {@code schema}. */
  private static ObjectNode record(JsonNode schema, String name) {
    ObjectNode found = find(schema, name);
    if (found == null) {
      throw new AssertionError("no record " + name);
    }
    return found;
  }

  private static ObjectNode find(JsonNode node, String name) {
    if (node.isObject() && "record".equals(node.path("type").asText()) && name.equals(node.path("name").asText())) {
      return (ObjectNode) node;
    }
    for (JsonNode child : node) {
      ObjectNode found = child.isContainerNode() ? find(child, name) : null;
      if (found != null) {
        return found;
      }
    }
    return null;
  }
}
