package io.spindle.channel.mig;

import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.HealthEvidence;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import io.spindle.ha.avro.MigInstanceRecord;
import io.spindle.ha.avro.HealthEvidenceItem;
import io.spindle.ha.avro.MigLayoutRecord;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;

/**
 * Converts MIG layout records to bytes and to the core model. Bytes are Avro single-object encoding: a header with
 * the schema's fingerprint, then the binary record, so a reader can tell a record of another schema version from
 * garbage.
 *
 * <p>The fingerprint names one exact schema, so a reader knows only the schemas it is given. Every earlier version
 * of {@code MigLayoutRecord.avsc} is kept as a resource beside this class and registered with the decoder: reports
 * and desired layouts written before the schema grew (its fields added since take their defaults) stay readable
 * after an upgrade. An older reader cannot read a newer record, so upgrade the ResourceManager before the
 * NodeManagers.
 */
public final class MigLayoutRecords {

  /** Earlier schemas, oldest first; the current one is the generated class's. */
  private static final List<String> EARLIER_SCHEMAS = List.of("MigLayoutRecord-v1.avsc", "MigLayoutRecord-v2.avsc");
  private static final BinaryMessageDecoder<MigLayoutRecord> DECODER = decoder();

  private MigLayoutRecords() {}

  private static BinaryMessageDecoder<MigLayoutRecord> decoder() {
    BinaryMessageDecoder<MigLayoutRecord> decoder = MigLayoutRecord.createDecoder(null);
    for (String name : EARLIER_SCHEMAS) {
      try (InputStream in = MigLayoutRecords.class.getResourceAsStream(name)) {
        if (in == null) {
          throw new IllegalStateException("schema resource " + name + " is missing from the JAR");
        }
        decoder.addSchema(new Schema.Parser().parse(in));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read schema resource " + name, e);
      }
    }
    return decoder;
  }

  public static byte[] encode(MigLayoutRecord record) throws IOException {
    ByteBuffer buffer = record.toByteBuffer();
    byte[] bytes = new byte[buffer.remaining()];
    buffer.get(bytes);
    return bytes;
  }

  public static MigLayoutRecord decode(byte[] bytes) throws IOException {
    if (bytes == null || bytes.length == 0) {
      throw new IOException("empty MIG layout record");
    }
    try {
      return DECODER.decode(ByteBuffer.wrap(bytes));
    } catch (AvroRuntimeException e) {
      throw new IOException("not a MIG layout record: " + e.getMessage(), e);
    }
  }

  /**
   * The health a node reported for the GPU. An unknown state or evidence kind (a newer node's) reads as the worst
   * it could mean for the state, FAILED, and as a DCGM-style note for the evidence: a scheduler older than its nodes
   * must not hand out a GPU the node called unfit.
   */
  public static GpuHealth health(MigLayoutRecord record) {
    GpuHealth.State state;
    try {
      state = GpuHealth.State.valueOf(record.getHealth());
    } catch (IllegalArgumentException unknown) {
      state = GpuHealth.State.FAILED;
    }
    List<HealthEvidence> evidence = new ArrayList<>();
    for (HealthEvidenceItem item : record.getHealthEvidence()) {
      HealthEvidence.Kind kind;
      try {
        kind = HealthEvidence.Kind.valueOf(item.getKind());
      } catch (IllegalArgumentException unknown) {
        kind = HealthEvidence.Kind.DCGM;
      }
      evidence.add(new HealthEvidence(kind, item.getValue(), item.getDetail()));
    }
    return state == GpuHealth.State.HEALTHY && evidence.isEmpty() ? GpuHealth.HEALTHY : new GpuHealth(state, evidence);
  }

  /** {@code record} with {@code health} as its reported health. */
  public static MigLayoutRecord withHealth(MigLayoutRecord record, GpuHealth health) {
    List<HealthEvidenceItem> items = new ArrayList<>();
    for (HealthEvidence e : health.evidence()) {
      items.add(new HealthEvidenceItem(e.kind().name(), e.value(), e.detail()));
    }
    return MigLayoutRecord.newBuilder(record).setHealth(health.state().name()).setHealthEvidence(items).build();
  }

  /** A record of {@code layout}'s instances, without version or time (the writer sets those). */
  public static List<MigInstanceRecord> instances(MigLayout layout) {
    List<MigInstanceRecord> out = new ArrayList<>();
    for (MigPlacement p : layout.placements()) {
      out.add(new MigInstanceRecord(p.profile().name(), p.start()));
    }
    return out;
  }

  /** The record's instances as a layout of {@code model}; an unknown profile or illegal layout names the reason. */
  public static MigLayout layout(MigLayoutRecord record, GpuModel model) {
    List<MigPlacement> placements = new ArrayList<>();
    for (MigInstanceRecord i : record.getInstances()) {
      MigProfile profile = model.profile(i.getProfile()).orElseThrow(() -> new InvalidInputException(
          "mig.profile", i.getProfile(), model.name() + " offers no such MIG profile"));
      placements.add(new MigPlacement(profile, i.getStart()));
    }
    return MigLayout.of(model, placements);
  }
}
