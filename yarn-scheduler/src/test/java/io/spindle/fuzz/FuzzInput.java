package io.spindle.fuzz;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Reads a test's choices from a byte string, the way Jazzer's {@code FuzzedDataProvider} does: every byte string is
 * a valid input, and once the bytes run out every read answers its smallest value. The same hostile-input check can
 * therefore be driven by random bytes ({@link HostileInput}) and by Jazzer's coverage-guided mutation of bytes
 * ({@code @FuzzTest}), and a failure of either is replayed from its bytes alone.
 */
public final class FuzzInput {

  /** Characters that mean something to the parsers under test, so random text reaches their branches. */
  private static final String SYNTAX = "=,.[]%:-+/ \t\n\r0123456789\"'<>&;()#_|\\";
  /** Text that has broken number and string handling elsewhere: sizes, signs, exponents, other scripts. */
  private static final List<String> NASTY = List.of("", " ", "-1", "0", "-0", "NaN", "Infinity", "-Infinity",
      "1e309", "0x10", "1_000", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
      "2147483647", "2147483648", "-2147483649", "99999999999999999999999999", "4294967296", "1.7976931348623157E308",
      "\u0661\u0660\u0660", "\uff11\uff10", "\u00a0", "\u0000", "\ud800", "\u202e", "%s%n", "null", "\u0130", "ß");

  private final byte[] data;
  private int pos;

  public FuzzInput(byte[] data) {
    this.data = data;
  }

  public byte[] bytes() {
    return data;
  }

  /** The bytes read so far: all a check's choices came from, so they replay it alone. */
  public byte[] consumed() {
    return java.util.Arrays.copyOf(data, Math.min(pos, data.length));
  }

  public boolean exhausted() {
    return pos >= data.length;
  }

  /** One byte, 0..255; 0 once the input is used up. */
  public int nextByte() {
    return pos < data.length ? data[pos++] & 0xff : 0;
  }

  public boolean bool() {
    return (nextByte() & 1) == 1;
  }

  /** 0..n-1; one byte for small n, four for larger. */
  public int below(int n) {
    if (n <= 0) {
      throw new IllegalArgumentException("below(" + n + ")");
    }
    if (n <= 256) {
      return nextByte() % n;
    }
    return Integer.remainderUnsigned(anyInt(), n);
  }

  /** lo..hi inclusive. */
  public int intIn(int lo, int hi) {
    return (int) longIn(lo, hi);
  }

  /** lo..hi inclusive. */
  public long longIn(long lo, long hi) {
    long span = hi - lo + 1; // unsigned: wider ranges than Long.MAX_VALUE wrap negative, and 0 means all of them
    return span == 0 ? anyLong() : lo + Long.remainderUnsigned(anyLong(), span);
  }

  public int anyInt() {
    return nextByte() | nextByte() << 8 | nextByte() << 16 | nextByte() << 24;
  }

  public long anyLong() {
    return (anyInt() & 0xffffffffL) | (long) anyInt() << 32;
  }

  /** Small values often, the edges of int and long sometimes, anything else otherwise. */
  public long interestingLong() {
    return switch (below(8)) { // an input used up reads as 0: the first choice, a small valid value
      case 0, 1, 2 -> longIn(0, 16);
      case 3 -> pick(List.of(-1L, -2L, Long.MAX_VALUE, Long.MIN_VALUE, (long) Integer.MAX_VALUE,
          (long) Integer.MIN_VALUE, Integer.MAX_VALUE + 1L, Long.MAX_VALUE / 840, 1L << 31, 1L << 53));
      case 4 -> longIn(0, 1 << 20);
      default -> anyLong();
    };
  }

  public int interestingInt() {
    long v = interestingLong();
    return bool() ? (int) v : (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, v));
  }

  public <T> T pick(List<T> options) {
    return options.get(below(options.size()));
  }

  @SafeVarargs
  public final <T> T pick(T... options) {
    return options[below(options.length)];
  }

  /** Up to {@code maxLength} chars: syntax characters, ASCII, any UTF-16 unit (lone surrogates too) or nasty words. */
  public String text(int maxLength) {
    int length = below(maxLength + 1);
    StringBuilder s = new StringBuilder(length);
    int style = below(4);
    while (s.length() < length && !exhausted()) {
      switch (style == 3 ? below(3) : style) {
        case 0 -> s.append(SYNTAX.charAt(below(SYNTAX.length())));
        case 1 -> s.append((char) (0x20 + below(0x5f)));
        default -> {
          if (below(8) == 0) {
            s.append(pick(NASTY));
          } else {
            s.append((char) (nextByte() | nextByte() << 8));
          }
        }
      }
    }
    return s.length() > maxLength ? s.substring(0, maxLength) : s.toString();
  }

  /** A word that breaks number parsing, or one of {@code usual}. */
  public String valueOr(List<String> usual) {
    return switch (below(4)) {
      case 0 -> pick(NASTY);
      case 1 -> text(12);
      default -> pick(usual);
    };
  }

  public byte[] take(int maxLength) {
    int n = Math.min(below(maxLength + 1), data.length - pos);
    byte[] out = new byte[Math.max(0, n)];
    System.arraycopy(data, pos, out, 0, out.length);
    pos += out.length;
    return out;
  }

  public byte[] rest() {
    return take(data.length);
  }

  public String restAsText() {
    return new String(rest(), StandardCharsets.UTF_8);
  }
}
