package io.spindle.channel.mig;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import io.spindle.ha.avro.MigInstanceRecord;
import io.spindle.ha.avro.MigLayoutRecord;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.AvroRuntimeException;

/**
 * Converts MIG layout records to bytes and to the core model. Bytes are Avro single-object encoding: a header with
 * the schema's fingerprint, then the binary record, so a reader can tell a record of another schema version from
 * garbage.
 */
public final class MigLayoutRecords {

  private MigLayoutRecords() {}

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
      return MigLayoutRecord.fromByteBuffer(ByteBuffer.wrap(bytes));
    } catch (AvroRuntimeException e) {
      throw new IOException("not a MIG layout record: " + e.getMessage(), e);
    }
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
