package io.spindle.core.model;

import static io.spindle.core.model.InvalidInputException.requireNonBlank;

/**
 * An id that is a piece of text the engine never parses: it only compares, hashes and orders it. Two ids are equal
 * when they are of one kind and their text is equal.
 *
 * <p>Hashing and ordering are those of the text, so maps and sorts keyed by ids behave exactly as they did when ids
 * were bare strings (the simulator's and the journal's replays depend on that). Public because the ids are; only
 * this package extends it (the constructor is package-private).
 */
public abstract class TextId<T extends TextId<T>> implements Comparable<T> {

  private final String value;
  /** The text's hash, taken once while the text is fresh in cache: ids are hashed on every lookup of every event. */
  private final int hash;

  TextId(String field, String value) {
    this.value = requireNonBlank(field, value);
    this.hash = value.hashCode();
  }

  /** The text, as drivers and formats (journal, fenced state, status API) write it. */
  public final String value() {
    return value;
  }

  @Override
  public final int compareTo(T other) {
    return value.compareTo(((TextId<?>) other).value);
  }

  @Override
  public final boolean equals(Object o) {
    // Identity first: map lookups mostly pass the very instance used as the key, and this spares reading it.
    return this == o || o != null && o.getClass() == getClass() && ((TextId<?>) o).value.equals(value);
  }

  @Override
  public final int hashCode() {
    return hash;
  }

  @Override
  public final String toString() {
    return value;
  }
}
