package io.spindle.client;

import io.spindle.client.avro.CheckpointAck;
import io.spindle.client.avro.CheckpointAckKind;
import io.spindle.client.avro.CheckpointNotice;
import io.spindle.client.avro.CheckpointReport;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.SchemaStore;

/**
 * Converts checkpoint protocol records between their immutable views and bytes. Bytes are Avro single-object
 * encoding: a two-byte marker, the writer schema's fingerprint, then the binary record. A reader resolves records
 * of other schema versions through a {@link SchemaStore} (in practice {@link ZkSchemaStore}).
 *
 * <p>Decoding refuses anything that is not exactly one well-formed record — empty, larger than
 * {@link #MAX_RECORD_BYTES}, of an unknown schema, with lengths running past its end, trailing bytes, or values a
 * view does not accept — with an {@link IOException} that says which. Malformed data never allocates more than its
 * own size (see {@link AvroBounds}).
 */
public final class CheckpointRecords {

  /** A checkpoint record is well under 1 KiB; anything this large is not one. */
  public static final int MAX_RECORD_BYTES = 64 * 1024;
  private static final int HEADER_BYTES = 10;
  private static final Map<Long, Schema> LOCAL = ZkSchemaStore.LOCAL.stream()
      .collect(Collectors.toUnmodifiableMap(ZkSchemaStore::fingerprint, s -> s));

  private final SchemaStore schemas;
  private final BinaryMessageDecoder<CheckpointNotice> notices;
  private final BinaryMessageDecoder<CheckpointAck> acks;
  private final BinaryMessageDecoder<CheckpointReport> reports;

  /** Reads records of this build's schemas and of any {@code schemas} can find. */
  public CheckpointRecords(SchemaStore schemas) {
    this.schemas = schemas;
    this.notices = CheckpointNotice.createDecoder(schemas);
    this.acks = CheckpointAck.createDecoder(schemas);
    this.reports = CheckpointReport.createDecoder(schemas);
  }

  public static byte[] encode(CheckpointNoticeView n) throws IOException {
    return bytes(CheckpointNotice.newBuilder().setAppId(n.appId()).setNoticeId(n.noticeId())
        .setRevision(n.revision()).setGangKeys(n.gangKeys()).setContainerIds(n.containerIds()).setReason(n.reason())
        .setIssuedMillis(n.issuedMillis()).setDeadlineMillis(n.deadlineMillis())
        .setExtensionsGranted(n.extensionsGranted()).setMaxExtensions(n.maxExtensions())
        .setMaxExtensionMillis(n.maxExtensionMillis()).setRefusal(n.refusal().orElse(null)).setTargetSize(n.targetSize()).build().toByteBuffer());
  }

  public static byte[] encode(CheckpointAckView a) throws IOException {
    return bytes(CheckpointAck.newBuilder().setAppId(a.appId()).setNoticeId(a.noticeId())
        .setNoticeRevision(a.noticeRevision()).setKind(CheckpointAckKind.valueOf(a.kind().name()))
        .setRequestedExtensionMillis(a.requestedExtensionMillis())
        .setCheckpointLocation(a.checkpointLocation().orElse(null))
        .setCheckpointMillis(a.checkpointMillis().isPresent() ? a.checkpointMillis().getAsLong() : null)
        .setAnsweredMillis(a.answeredMillis()).build().toByteBuffer());
  }

  public static byte[] encode(CheckpointReportView r) throws IOException {
    return bytes(CheckpointReport.newBuilder().setAppId(r.appId()).setLocation(r.location())
        .setCheckpointMillis(r.checkpointMillis()).setReportedMillis(r.reportedMillis())
        .setWriteMillis(r.writeMillis().isPresent() ? r.writeMillis().getAsLong() : null).build().toByteBuffer());
  }

  public CheckpointNoticeView decodeNotice(byte[] bytes) throws IOException {
    CheckpointNotice n = decode(bytes, notices, "checkpoint notice");
    return view("checkpoint notice", () -> new CheckpointNoticeView(n.getAppId(), n.getNoticeId(), n.getRevision(),
        n.getGangKeys(), n.getContainerIds(), n.getReason(), n.getIssuedMillis(), n.getDeadlineMillis(),
        n.getExtensionsGranted(), n.getMaxExtensions(), n.getMaxExtensionMillis(), Optional.ofNullable(n.getRefusal()),
        n.getTargetSize()));
  }

  public CheckpointAckView decodeAck(byte[] bytes) throws IOException {
    CheckpointAck a = decode(bytes, acks, "checkpoint ack");
    if (a.getKind() == CheckpointAckKind.UNKNOWN) {
      throw new IOException("checkpoint ack of unknown kind (neither DONE nor EXTEND)");
    }
    return view("checkpoint ack", () -> new CheckpointAckView(a.getAppId(), a.getNoticeId(), a.getNoticeRevision(),
        CheckpointAckView.Kind.valueOf(a.getKind().name()), a.getRequestedExtensionMillis(),
        Optional.ofNullable(a.getCheckpointLocation()),
        a.getCheckpointMillis() == null ? OptionalLong.empty() : OptionalLong.of(a.getCheckpointMillis()),
        a.getAnsweredMillis()));
  }

  public CheckpointReportView decodeReport(byte[] bytes) throws IOException {
    CheckpointReport r = decode(bytes, reports, "checkpoint report");
    return view("checkpoint report", () -> new CheckpointReportView(r.getAppId(), r.getLocation(),
        r.getCheckpointMillis(), r.getReportedMillis(),
        r.getWriteMillis() == null ? OptionalLong.empty() : OptionalLong.of(r.getWriteMillis())));
  }

  private <T> T decode(byte[] bytes, BinaryMessageDecoder<T> decoder, String what) throws IOException {
    if (bytes == null || bytes.length == 0) {
      throw new IOException("empty " + what);
    }
    if (bytes.length > MAX_RECORD_BYTES) {
      throw new IOException(what + " of " + bytes.length + " bytes, more than " + MAX_RECORD_BYTES);
    }
    if (bytes.length < HEADER_BYTES || bytes[0] != (byte) 0xC3 || bytes[1] != (byte) 0x01) {
      throw new IOException("not a " + what + ": no Avro single-object header");
    }
    long fingerprint = ByteBuffer.wrap(bytes, 2, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    Schema writer = LOCAL.containsKey(fingerprint) ? LOCAL.get(fingerprint) : schemas.findByFingerprint(fingerprint);
    if (writer == null) {
      throw new IOException(what + " written with schema " + String.format("%016x", fingerprint)
          + ", which is not published or not accepted (too large, or too many schemas; see the log)");
    }
    try {
      AvroBounds.check(writer, bytes, HEADER_BYTES);
    } catch (IOException e) {
      throw new IOException("malformed " + what + ": " + e.getMessage(), e);
    }
    try {
      return decoder.decode(bytes);
    } catch (AvroRuntimeException | IOException e) {
      throw new IOException("unreadable " + what + ": " + e.getMessage(), e);
    }
  }

  private static <V> V view(String what, ViewBuilder<V> builder) throws IOException {
    try {
      return builder.build();
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new IOException("invalid " + what + ": " + e.getMessage(), e);
    }
  }

  private interface ViewBuilder<V> {
    V build();
  }

  private static byte[] bytes(ByteBuffer buffer) {
    byte[] out = new byte[buffer.remaining()];
    buffer.get(out);
    return out;
  }
}
