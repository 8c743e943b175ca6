package io.spindle.spark;

import java.util.Objects;

/**
 * A checkpoint of the application as the driver knows it.
 *
 * @param location where it is, a URI the application can restart from
 * @param checkpointMillis when it was taken, epoch ms on the driver's clock
 */
public record SparkCheckpoint(String location, long checkpointMillis) {

  public SparkCheckpoint {
    Objects.requireNonNull(location, "location");
    if (checkpointMillis < 0) {
      throw new IllegalArgumentException("checkpointMillis must be >= 0, not " + checkpointMillis);
    }
  }
}
