package io.spindle.ha;

import io.spindle.core.engine.DurableState;
import io.spindle.ha.avro.SchedulerState;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.SchemaParseException;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;

/**
 * The scheduler's durable state as bytes for ZooKeeper: {@code SchedulerState.avsc} in Avro binary, behind a header
 * that carries the writer's schema.
 *
 * <p>Layout: the magic {@code SPST}, a format byte (1), the writer schema's 64-bit Rabin fingerprint
 * ({@link SchemaNormalization#parsingFingerprint64}, little-endian as in Avro's single-object encoding), the length
 * (4 bytes, big-endian) and UTF-8 text of the writer schema in Parsing Canonical Form, then the record. The schema
 * travels with the record, not only its fingerprint, so that every reader can resolve it by Avro's rules: a newer
 * leader reads what an older one wrote (fields added since take their defaults), and during a rolling upgrade or a
 * rollback an older one reads what a newer one wrote (fields it does not know are skipped). Parsing Canonical Form
 * leaves out docs and defaults, which resolution takes from the reader's schema; it costs a few kilobytes a write.
 *
 * <p>Anything else is refused with an {@link IllegalArgumentException} that says why: bytes that are not scheduler
 * state, a record of another type, a schema this reader cannot resolve, a truncated or corrupted record, or a state
 * that is inconsistent in itself.
 */
public final class SchedulerStateCodec {

  /** The {@code schemaVersion} this code writes; raised with every change to {@code SchedulerState.avsc}. */
  public static final int SCHEMA_VERSION = 1;

  private static final byte[] MAGIC = {'S', 'P', 'S', 'T'};
  private static final byte FORMAT = 1;
  private static final int HEADER = MAGIC.length + 1 + Long.BYTES + Integer.BYTES;
  private static final Schema READER = SchedulerState.getClassSchema();

  /** What one write held. */
  public record Snapshot(long leaderEpoch, int schemaVersion, DurableState state) {}

  private SchedulerStateCodec() {}

  public static byte[] encode(DurableState state, long leaderEpoch) {
    SchedulerState record = SchedulerStateRecords.toRecord(state, leaderEpoch, SCHEMA_VERSION);
    return encode(READER, new SpecificDatumWriter<>(READER), record);
  }

  /** Writes a record of any schema in this format; tests use it to write what older or foreign writers wrote. */
  static byte[] encode(Schema writer, GenericRecord record) {
    return encode(writer, new SpecificDatumWriter<>(writer), record); // Writes generic and generated records alike.
  }

  private static <T> byte[] encode(Schema writer, DatumWriter<T> datumWriter, T record) {
    byte[] schema = SchemaNormalization.toParsingForm(writer).getBytes(StandardCharsets.UTF_8);
    ByteArrayOutputStream out = new ByteArrayOutputStream(HEADER + schema.length + 1024);
    out.writeBytes(MAGIC);
    out.write(FORMAT);
    out.writeBytes(ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN)
        .putLong(SchemaNormalization.parsingFingerprint64(writer)).array());
    out.writeBytes(ByteBuffer.allocate(Integer.BYTES).putInt(schema.length).array());
    out.writeBytes(schema);
    BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
    try {
      datumWriter.write(record, encoder);
      encoder.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // A byte array does not fail.
    }
    return out.toByteArray();
  }

  public static Snapshot decode(byte[] bytes) {
    if (bytes == null || bytes.length < HEADER) {
      throw new IllegalArgumentException("not scheduler state: " + (bytes == null ? "no bytes" : bytes.length
          + " bytes, fewer than the " + HEADER + "-byte header"));
    }
    if (!Arrays.equals(bytes, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
      throw new IllegalArgumentException("not scheduler state: it does not start with 'SPST' but with "
          + hex(bytes, MAGIC.length));
    }
    if (bytes[MAGIC.length] != FORMAT) {
      throw new IllegalArgumentException("scheduler state in format " + bytes[MAGIC.length]
          + ", which this reader does not know (it knows " + FORMAT + ")");
    }
    ByteBuffer header = ByteBuffer.wrap(bytes, MAGIC.length + 1, Long.BYTES + Integer.BYTES);
    long fingerprint = header.order(ByteOrder.LITTLE_ENDIAN).getLong();
    int schemaLength = header.order(ByteOrder.BIG_ENDIAN).getInt();
    if (schemaLength <= 0 || schemaLength > bytes.length - HEADER) {
      throw new IllegalArgumentException("corrupted scheduler state: a writer schema of " + schemaLength
          + " bytes does not fit in the " + (bytes.length - HEADER) + " bytes after the header");
    }
    Schema writer = writerSchema(new String(bytes, HEADER, schemaLength, StandardCharsets.UTF_8), fingerprint);
    SchemaCompatibility.SchemaPairCompatibility compatible =
        SchemaCompatibility.checkReaderWriterCompatibility(READER, writer);
    if (compatible.getType() != SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE) {
      StringBuilder why = new StringBuilder();
      for (SchemaCompatibility.Incompatibility i : compatible.getResult().getIncompatibilities()) {
        why.append(why.length() == 0 ? "" : "; ").append(i.getType()).append(" at ").append(i.getLocation())
            .append(": ").append(i.getMessage());
      }
      throw new IllegalArgumentException("scheduler state written with a schema this reader cannot resolve: " + why);
    }
    int bodyStart = HEADER + schemaLength;
    BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(bytes, bodyStart, bytes.length - bodyStart, null);
    SchedulerState record;
    boolean whole;
    try {
      record = new SpecificDatumReader<SchedulerState>(writer, READER).read(null, decoder);
      whole = decoder.isEnd();
    } catch (IOException | RuntimeException e) {
      // Avro reports a truncated or garbled body in many ways: a short read, a bad index, an absurd length.
      throw new IllegalArgumentException("corrupted scheduler state: the record does not decode (" + e + ")", e);
    }
    if (!whole) {
      throw new IllegalArgumentException("corrupted scheduler state: bytes are left after the record");
    }
    try {
      return new Snapshot(record.getLeaderEpoch(), record.getSchemaVersion(), SchedulerStateRecords.toState(record));
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new IllegalArgumentException("inconsistent scheduler state: " + e.getMessage(), e);
    }
  }

  private static Schema writerSchema(String text, long fingerprint) {
    Schema writer;
    try {
      writer = new Schema.Parser().setValidateDefaults(false).parse(text);
    } catch (SchemaParseException e) {
      throw new IllegalArgumentException("corrupted scheduler state: its writer schema does not parse ("
          + e.getMessage() + ")", e);
    }
    if (SchemaNormalization.parsingFingerprint64(writer) != fingerprint) {
      throw new IllegalArgumentException("corrupted scheduler state: the writer schema does not match its fingerprint");
    }
    if (!writer.getFullName().equals(READER.getFullName())) {
      throw new IllegalArgumentException("not scheduler state: a record of type " + writer.getFullName()
          + ", not " + READER.getFullName());
    }
    return writer;
  }

  private static String hex(byte[] bytes, int n) {
    StringBuilder s = new StringBuilder("0x");
    for (int i = 0; i < n; i++) {
      s.append(String.format("%02x", bytes[i] & 0xff));
    }
    return s.toString();
  }
}
