package io.spindle.client;

import java.io.IOException;
import org.apache.avro.Schema;

/**
 * Walks Avro binary data against its writer schema without building anything, and refuses it unless every length
 * fits in the bytes that are there and nothing is left over.
 *
 * <p>Why: Avro's decoder allocates a string, byte array or collection at the length the data claims before reading
 * it. A six-byte record claiming a 2 GB string would make the ResourceManager allocate 2 GB; any application can
 * write such bytes into its own ack. Checking first makes a hostile record cost what its bytes cost.
 */
final class AvroBounds {

  /** More items than this in one record is not a checkpoint message. */
  static final long MAX_ITEMS = 100_000;
  /**
   * More values than this in one record is not a checkpoint message either. Nulls take no bytes, so a published
   * schema of thousands of null fields, repeated {@link #MAX_ITEMS} times, would otherwise cost billions of steps.
   */
  static final long MAX_STEPS = 1_000_000;

  private final byte[] data;
  private int pos;
  private long items;
  private long steps;

  private AvroBounds(byte[] data, int offset) {
    this.data = data;
    this.pos = offset;
  }

  /** Checks that {@code data[offset..]} is exactly one datum of {@code schema}; the message says what is wrong. */
  static void check(Schema schema, byte[] data, int offset) throws IOException {
    AvroBounds walk = new AvroBounds(data, offset);
    walk.datum(schema, 0);
    if (walk.pos != data.length) {
      throw new IOException((data.length - walk.pos) + " bytes left over after the record");
    }
  }

  private void datum(Schema schema, int depth) throws IOException {
    if (depth > 32) {
      throw new IOException("schema nests deeper than 32 levels");
    }
    if (++steps > MAX_STEPS) {
      throw new IOException("more than " + MAX_STEPS + " values (steps) in one record");
    }
    switch (schema.getType()) {
      case NULL -> { }
      case BOOLEAN -> skip(1);
      case INT, LONG -> varLong();
      case FLOAT -> skip(4);
      case DOUBLE -> skip(8);
      case STRING, BYTES -> skip(length(varLong(), "length"));
      case FIXED -> skip(schema.getFixedSize());
      case ENUM -> index(varLong(), schema.getEnumSymbols().size(), "enum symbol");
      case UNION -> datum(schema.getTypes().get(index(varLong(), schema.getTypes().size(), "union branch")), depth + 1);
      case RECORD -> {
        for (Schema.Field field : schema.getFields()) {
          datum(field.schema(), depth + 1);
        }
      }
      case ARRAY, MAP -> {
        for (long count = blockCount(); count != 0; count = blockCount()) {
          for (long i = 0; i < count; i++) {
            if (schema.getType() == Schema.Type.MAP) {
              skip(length(varLong(), "map key length"));
              datum(schema.getValueType(), depth + 1);
            } else {
              datum(schema.getElementType(), depth + 1);
            }
          }
        }
      }
      default -> throw new IOException("unexpected schema type " + schema.getType());
    }
  }

  private long blockCount() throws IOException {
    long count = varLong();
    if (count < 0) {
      count = -count;
      length(varLong(), "block size");
    }
    // Compared before adding: two counts near Long.MAX_VALUE would otherwise wrap the sum below the limit.
    if (count < 0 || count > MAX_ITEMS - items) {
      throw new IOException("more than " + MAX_ITEMS + " items");
    }
    items += count;
    return count;
  }

  private int length(long length, String what) throws IOException {
    if (length < 0 || length > data.length - pos) {
      throw new IOException(what + " " + length + " at byte " + pos + " runs past the end (" + data.length + " bytes)");
    }
    return (int) length;
  }

  private static int index(long index, int size, String what) throws IOException {
    if (index < 0 || index >= size) {
      throw new IOException(what + " " + index + " out of range 0.." + (size - 1));
    }
    return (int) index;
  }

  private void skip(int n) throws IOException {
    if (n > data.length - pos) {
      throw new IOException("record ends at byte " + data.length + ", " + n + " more bytes expected at " + pos);
    }
    pos += n;
  }

  /** Avro's zig-zag variable-length long. */
  private long varLong() throws IOException {
    long raw = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos >= data.length) {
        throw new IOException("record ends inside a number at byte " + pos);
      }
      int b = data[pos++] & 0xff;
      raw |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return (raw >>> 1) ^ -(raw & 1);
      }
    }
    throw new IOException("number longer than 10 bytes at byte " + pos);
  }
}
