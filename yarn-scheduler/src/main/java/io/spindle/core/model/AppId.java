package io.spindle.core.model;

import static io.spindle.core.model.InvalidInputException.requireNonBlank;

/**
 * An application, as the engine knows it. The YARN adapter makes one from an {@code ApplicationId} (its text form,
 * {@code application_<cluster>_<n>}) and keeps the way back; the simulator makes one from a trace's job id. The engine
 * never parses it: it only compares, hashes and orders it.
 *
 * <p>Hashing and ordering are those of the text, so maps and sorts keyed by application behave exactly as they did
 * when the id was a bare string (the simulator's and the journal's replays depend on that).
 */
public record AppId(String value) implements Comparable<AppId> {

  public AppId {
    requireNonBlank("appId", value);
  }

  public static AppId of(String value) {
    return new AppId(value);
  }

  @Override
  public int compareTo(AppId other) {
    return value.compareTo(other.value);
  }

  @Override
  public int hashCode() {
    return value.hashCode();
  }

  @Override
  public String toString() {
    return value;
  }
}
