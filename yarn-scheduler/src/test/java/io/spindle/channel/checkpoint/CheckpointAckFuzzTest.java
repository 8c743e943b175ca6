package io.spindle.channel.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.spindle.client.CheckpointAckView;
import io.spindle.client.CheckpointNoticeView;
import io.spindle.client.CheckpointRecords;
import io.spindle.client.CheckpointReportView;
import io.spindle.client.ZkSchemaStore;
import io.spindle.fuzz.FuzzInput;
import io.spindle.fuzz.HostileInput;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Hostile checkpoint answers, as the ResourceManager reads them ({@link CheckpointNoticeStore} decodes every ack and
 * report an application writes into its slot with {@link CheckpointRecords}): random bytes, valid records truncated,
 * bit-flipped or given huge lengths, and records of writer schemas the application published itself (the schema
 * directory is world-writable by design). Each is a view or an {@link IOException} saying what is wrong; never
 * another exception, an {@link OutOfMemoryError} or a reader thread that does not come back.
 */
class CheckpointAckFuzzTest {

  private static final String TARGET = "Avro checkpoint acks";
  private static final List<Schema> LOCAL = ZkSchemaStore.LOCAL;
  /** Schemas "published" by hostile writers, as the RM would find them in ZooKeeper. */
  private static final Map<Long, Schema> PUBLISHED = new ConcurrentHashMap<>();
  /** Decoders cache a resolver per writer schema, as the RM's do: renewed with the schemas so a run stays small. */
  private static CheckpointRecords records = new CheckpointRecords(PUBLISHED::get);
  private static final String APP = "application_1700000000000_0042";

  @Test
  void randomAnswersAreReadOrRefusedWithAReason() {
    HostileInput.Tally tally = HostileInput.run(TARGET, CheckpointAckFuzzTest::check);
    assertThat(tally.rejected()).as("bad records tried").isPositive();
    assertThat(tally.accepted()).as("good records tried").isPositive();
  }

  @FuzzTest(maxExecutions = 10_000)
  void coverageGuided(byte[] bytes) {
    HostileInput.once(TARGET, CheckpointAckFuzzTest::check, bytes);
  }

  @AfterAll
  static void report() {
    PUBLISHED.clear();
    HostileInput.report(TARGET);
  }

  static String check(FuzzInput in) throws IOException {
    int type = in.below(4); // ack DONE, ack EXTEND, report, notice
    byte[] bytes = switch (in.below(6)) {
      case 0 -> in.rest();
      case 1 -> concat(header(in.pick(LOCAL)), in.rest());
      case 2 -> concat(header(published(in)), body(in));
      default -> mutate(in, valid(in, type));
    };
    // Mostly the reader the record was written for, so that damage deep in a record is what decides.
    int reader = in.below(3) == 0 ? in.below(3) : Math.max(0, type - 1);
    try {
      Object view = switch (reader) {
        case 0 -> records.decodeAck(bytes);
        case 1 -> records.decodeReport(bytes);
        default -> records.decodeNotice(bytes);
      };
      assertThat(view).isNotNull();
      return HostileInput.ACCEPTED;
    } catch (IOException e) {
      return HostileInput.rejected(e, IOException.class);
    }
  }

  /** A record the client could write: an ack (DONE or EXTEND), a report, or a notice. */
  private static byte[] valid(FuzzInput in, int type) throws IOException {
    return switch (type) {
      case 0 -> CheckpointRecords.encode(new CheckpointAckView(APP, in.longIn(0, 1 << 20), in.intIn(1, 9),
          CheckpointAckView.Kind.DONE, 0, in.bool() ? Optional.empty() : Optional.of("hdfs:///ckpt/" + in.text(30)),
          in.bool() ? OptionalLong.empty() : OptionalLong.of(in.longIn(0, Long.MAX_VALUE)), in.anyLong()));
      case 1 -> CheckpointRecords.encode(new CheckpointAckView(APP, in.longIn(0, 1 << 20), in.intIn(1, 9),
          CheckpointAckView.Kind.EXTEND, in.longIn(1, Long.MAX_VALUE), Optional.empty(), OptionalLong.empty(),
          in.anyLong()));
      case 2 -> CheckpointRecords.encode(new CheckpointReportView(APP, "s3://b/" + in.text(20), in.longIn(0, 1 << 40),
          in.anyLong()));
      default -> CheckpointRecords.encode(new CheckpointNoticeView(APP, in.longIn(0, 1 << 20), in.intIn(0, 9),
          List.of("gang-0"), List.of("container_1700000000000_0042_01_000002"), in.text(40), 1_000, 31_000, 0, 2,
          60_000, Optional.empty()));
    };
  }

  /** Bytes cut, flipped, overwritten, or given a length of gigabytes somewhere. */
  private static byte[] mutate(FuzzInput in, byte[] record) {
    byte[] b = record;
    int edits = in.intIn(1, 3);
    for (int i = 0; i < edits && b.length > 0 && in.below(4) != 0; i++) {
      int at = in.below(b.length);
      switch (in.below(5)) {
        case 0 -> b = java.util.Arrays.copyOf(b, at);
        case 1 -> b[at] ^= (byte) (1 << in.below(8));
        case 2 -> b[at] = (byte) in.nextByte();
        case 3 -> b = splice(b, at, varLong(in.pick(Long.MAX_VALUE, Long.MIN_VALUE, (long) Integer.MAX_VALUE,
            1L << 31, -1L, 100_001L, in.anyLong())));
        default -> b = splice(b, at, in.take(16));
      }
    }
    return b;
  }

  /** A writer schema an application made up and published: nested, recursive, wide, of every Avro type. */
  private static Schema published(FuzzInput in) {
    if (PUBLISHED.size() >= 100) {
      // The RM keeps at most ZkSchemaStore.MAX_FOREIGN_SCHEMAS; a test that kept every one would only measure itself.
      PUBLISHED.clear();
      records = new CheckpointRecords(PUBLISHED::get);
    }
    Schema schema = randomSchema(in, 0, new int[1], new ArrayList<>());
    PUBLISHED.put(ZkSchemaStore.fingerprint(schema), schema);
    return schema;
  }

  private static Schema randomSchema(FuzzInput in, int depth, int[] names, List<Schema> records) {
    int kind = depth > 40 ? in.below(7) : in.below(12);
    return switch (kind) {
      case 0 -> Schema.create(Schema.Type.NULL);
      case 1 -> Schema.create(Schema.Type.BOOLEAN);
      case 2 -> Schema.create(in.pick(Schema.Type.INT, Schema.Type.LONG));
      case 3 -> Schema.create(in.pick(Schema.Type.FLOAT, Schema.Type.DOUBLE));
      case 4 -> Schema.create(in.pick(Schema.Type.STRING, Schema.Type.BYTES));
      case 5 -> Schema.createFixed("F" + names[0]++, null, "x", in.pick(0, 1, 16, 1 << 30));
      case 6 -> records.isEmpty() ? Schema.createEnum("E" + names[0]++, null, "x", List.of("A", "B"))
          : in.pick(records); // a reference back up the tree: a recursive schema
      case 7 -> Schema.createArray(randomSchema(in, depth + 1, names, records));
      case 8 -> Schema.createMap(randomSchema(in, depth + 1, names, records));
      case 9 -> {
        Schema a = randomSchema(in, depth + 1, names, records);
        Schema nul = Schema.create(Schema.Type.NULL);
        yield a.getType() == Schema.Type.UNION || a.getType() == Schema.Type.NULL ? a
            : Schema.createUnion(List.of(nul, a));
      }
      default -> {
        Schema record = Schema.createRecord("R" + names[0]++, null, "x", false);
        records.add(record);
        List<Schema.Field> fields = new ArrayList<>();
        int n = in.pick(0, 1, 2, 3, in.intIn(0, 2_000));
        for (int i = 0; i < n; i++) {
          Schema fieldSchema = i < 8 ? randomSchema(in, depth + 1, names, records) : Schema.create(Schema.Type.NULL);
          fields.add(new Schema.Field("f" + i, fieldSchema));
        }
        record.setFields(fields);
        yield record;
      }
    };
  }

  /** Data for a made-up schema: random bytes, or block counts and lengths chosen to be as large as possible. */
  private static byte[] body(FuzzInput in) {
    if (in.bool()) {
      return in.rest();
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int n = in.intIn(1, 8);
    for (int i = 0; i < n; i++) {
      out.writeBytes(varLong(in.pick(1L, 2L, 100_000L, 100_001L, Long.MAX_VALUE, Long.MAX_VALUE - 1, -1L,
          Long.MIN_VALUE, 0L, in.anyLong())));
    }
    return out.toByteArray();
  }

  private static byte[] header(Schema writer) {
    ByteBuffer b = ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN);
    b.put((byte) 0xC3).put((byte) 0x01).putLong(ZkSchemaStore.fingerprint(writer));
    return b.array();
  }

  /** Avro's zig-zag varint. */
  static byte[] varLong(long v) {
    long z = (v << 1) ^ (v >> 63);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    while ((z & ~0x7FL) != 0) {
      out.write((int) ((z & 0x7F) | 0x80));
      z >>>= 7;
    }
    out.write((int) z);
    return out.toByteArray();
  }

  private static byte[] splice(byte[] b, int at, byte[] insert) {
    return concat(concat(java.util.Arrays.copyOf(b, at), insert), java.util.Arrays.copyOfRange(b, at, b.length));
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
