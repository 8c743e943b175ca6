package io.spindle.core.model;

/**
 * Input that Spindle cannot accept: a negative amount, an unknown GPU model or MIG profile, a duplicate node, a
 * node outside the topology. The message always names the offending field and value, because it ends up in front
 * of an admin or a user who has to fix it.
 */
public class InvalidInputException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String field;
  private final String value;

  public InvalidInputException(String field, Object value, String reason) {
    super(field + "=" + value + ": " + reason);
    this.field = field;
    this.value = String.valueOf(value);
  }

  public String field() {
    return field;
  }

  public String value() {
    return value;
  }

  public static long requireNonNegative(String field, long value) {
    if (value < 0) {
      throw new InvalidInputException(field, value, "must not be negative");
    }
    return value;
  }

  static String requireNonBlank(String field, String value) {
    if (value == null || value.isBlank()) {
      throw new InvalidInputException(field, value, "must not be empty");
    }
    return value;
  }
}
