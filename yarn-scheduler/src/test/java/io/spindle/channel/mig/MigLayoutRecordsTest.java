package io.spindle.channel.mig;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.ha.avro.MigInstanceRecord;
import io.spindle.ha.avro.MigLayoutRecord;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;

class MigLayoutRecordsTest {

  private static final GpuModel H100 = GpuModelCatalog.builtIn().find("H100-80GB").orElseThrow();

  @Test
  void binaryRoundTripKeepsEveryField() throws IOException {
    MigLayoutRecord reported = MigLayoutRecord.newBuilder()
        .setNode("gpu-node-7.example.com").setGpuIndex(3).setMigEnabled(true)
        .setInstances(List.of(new MigInstanceRecord("3g.40gb", 4), new MigInstanceRecord("4g.40gb", 0)))
        .setVersion(42).setUpdatedMillis(1_741_082_400_000L)
        .setGpuModel("H100-80GB").setGpuUuid("GPU-0b1c2d3e-4444-4a5b-8c9d-0e1f2a3b4c04").setNvlinkIsland(1)
        .setError("GPU 3 runs work")
        .setSharing("mps").setMemoryMb(81_559)
        .build();

    byte[] bytes = MigLayoutRecords.encode(reported);

    assertThat(MigLayoutRecords.decode(bytes)).isEqualTo(reported);
  }

  @Test
  void optionalFieldsDefaultForADesiredLayout() throws IOException {
    MigLayoutRecord desired = MigLayoutRecord.newBuilder()
        .setNode("n1").setGpuIndex(0).setMigEnabled(true).setInstances(List.of()).setVersion(1).setUpdatedMillis(5)
        .build();

    MigLayoutRecord back = MigLayoutRecords.decode(MigLayoutRecords.encode(desired));

    assertThat(back.getGpuModel()).isNull();
    assertThat(back.getError()).isNull();
    assertThat(back.getNvlinkIsland()).isEqualTo(-1);
  }

  @Test
  void aRecordWrittenBeforeSharingExistedStillReadsAsAnExclusiveGpu() throws IOException {
    Schema v1;
    try (InputStream in = MigLayoutRecords.class.getResourceAsStream("MigLayoutRecord-v1.avsc")) {
      v1 = new Schema.Parser().parse(in);
    }
    assertThat(v1.getField("sharing")).isNull();
    GenericRecord old = new GenericRecordBuilder(v1)
        .set("node", "n1").set("gpuIndex", 2).set("migEnabled", false).set("instances", List.of())
        .set("version", 4L).set("updatedMillis", 9L).set("gpuModel", "H100-80GB").set("gpuUuid", "GPU-x")
        .set("nvlinkIsland", 0).set("error", null)
        .build();
    ByteBuffer bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old);
    byte[] array = new byte[bytes.remaining()];
    bytes.get(array);

    MigLayoutRecord read = MigLayoutRecords.decode(array);

    assertThat(read.getGpuIndex()).isEqualTo(2);
    assertThat(read.getVersion()).isEqualTo(4);
    assertThat(read.getGpuModel()).isEqualTo("H100-80GB");
    assertThat(read.getSharing()).isEqualTo("exclusive");
    assertThat(read.getMemoryMb()).isZero();
  }

  @Test
  void aRecordWrittenBeforeHealthExistedReadsAsHealthy() throws IOException {
    Schema v2;
    try (InputStream in = MigLayoutRecords.class.getResourceAsStream("MigLayoutRecord-v2.avsc")) {
      v2 = new Schema.Parser().parse(in);
    }
    assertThat(v2.getField("health")).isNull();
    GenericRecord old = new GenericRecordBuilder(v2)
        .set("node", "n1").set("gpuIndex", 1).set("migEnabled", false).set("instances", List.of())
        .set("version", 0L).set("updatedMillis", 9L).set("gpuModel", "H100-80GB").set("gpuUuid", "GPU-x")
        .set("nvlinkIsland", 0).set("error", null).set("sharing", "exclusive").set("memoryMb", 81_559L)
        .build();
    ByteBuffer bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v2).encode(old);
    byte[] array = new byte[bytes.remaining()];
    bytes.get(array);

    assertThat(MigLayoutRecords.health(MigLayoutRecords.decode(array)))
        .isEqualTo(io.spindle.core.model.GpuHealth.HEALTHY);
  }

  @Test
  void healthAndItsEvidenceRoundTrip() throws IOException {
    io.spindle.core.model.GpuHealth failed = new io.spindle.core.model.GpuHealth(
        io.spindle.core.model.GpuHealth.State.FAILED, List.of(new io.spindle.core.model.HealthEvidence(
            io.spindle.core.model.HealthEvidence.Kind.XID, 79, "Xid 79: GPU has fallen off the bus")));
    MigLayoutRecord reported = MigLayoutRecords.withHealth(MigLayoutRecord.newBuilder().setNode("n1").setGpuIndex(3)
        .setMigEnabled(false).setInstances(List.of()).setVersion(0).setUpdatedMillis(1).build(), failed);

    assertThat(MigLayoutRecords.health(MigLayoutRecords.decode(MigLayoutRecords.encode(reported))))
        .isEqualTo(failed);
    assertThat(MigLayoutRecords.health(MigLayoutRecord.newBuilder(reported).setHealth("ON_FIRE").build()).state())
        .as("a state this scheduler does not know is the worst").isEqualTo(io.spindle.core.model.GpuHealth.State.FAILED);
  }

  @Test
  void garbageIsAnErrorNotARecord() {
    assertThatThrownBy(() -> MigLayoutRecords.decode(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}))
        .isInstanceOf(IOException.class).hasMessageStartingWith("not a MIG layout record");
    assertThatThrownBy(() -> MigLayoutRecords.decode(new byte[0])).hasMessage("empty MIG layout record");
  }

  @Test
  void layoutRoundTripThroughTheCoreModel() {
    MigLayout layout = MigLayout.of(H100, List.of(new MigPlacement(H100.profile("4g.40gb").orElseThrow(), 0),
        new MigPlacement(H100.profile("2g.20gb").orElseThrow(), 4),
        new MigPlacement(H100.profile("1g.10gb").orElseThrow(), 6)));
    MigLayoutRecord record = MigLayoutRecord.newBuilder()
        .setNode("n1").setGpuIndex(0).setMigEnabled(true).setInstances(MigLayoutRecords.instances(layout))
        .setVersion(1).setUpdatedMillis(0).build();

    assertThat(record.getInstances()).containsExactly(new MigInstanceRecord("4g.40gb", 0),
        new MigInstanceRecord("2g.20gb", 4), new MigInstanceRecord("1g.10gb", 6));
    assertThat(MigLayoutRecords.layout(record, H100)).isEqualTo(layout);
  }

  @Test
  void unknownProfileOrIllegalLayoutNamesTheReason() {
    MigLayoutRecord foreign = MigLayoutRecord.newBuilder()
        .setNode("n1").setGpuIndex(0).setMigEnabled(true).setInstances(List.of(new MigInstanceRecord("3g.20gb", 0)))
        .setVersion(1).setUpdatedMillis(0).build();
    MigLayoutRecord overlapping = MigLayoutRecord.newBuilder(foreign)
        .setInstances(List.of(new MigInstanceRecord("3g.40gb", 0), new MigInstanceRecord("4g.40gb", 0))).build();

    assertThatThrownBy(() -> MigLayoutRecords.layout(foreign, H100)).isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("H100-80GB offers no such MIG profile");
    assertThatThrownBy(() -> MigLayoutRecords.layout(overlapping, H100)).isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("overlaps");
  }
}
