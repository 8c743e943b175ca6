package io.spindle.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.time.Duration;

/**
 * How often Spindle advises an application to checkpoint, as its status API gives it ({@code checkpointAdvice}):
 * the interval that loses the least work to GPU failures (Daly's), and the figures behind it.
 *
 * @param intervalSeconds compute time between the end of one checkpoint write and the start of the next
 * @param mtbfHours the mean time between failures of the GPUs the application runs on
 * @param failuresPerGpuHour the failure rate Spindle estimates from what the cluster has seen and a published prior
 * @param gpus the GPUs the advice is for
 * @param writeSeconds the checkpoint write time the advice assumes (the application's report, else a default)
 * @param basis all of it in one sentence, for people
 */
public record CheckpointAdviceView(long intervalSeconds, double mtbfHours, double failuresPerGpuHour, int gpus,
    long writeSeconds, String basis) {

  public CheckpointAdviceView {
    CheckpointNoticeView.require(intervalSeconds > 0, "intervalSeconds must be > 0, not " + intervalSeconds);
  }

  public Duration interval() {
    return Duration.ofSeconds(intervalSeconds);
  }

  /** Reads the status API's {@code checkpointAdvice} object. */
  public static CheckpointAdviceView fromJson(JsonNode advice) throws IOException {
    for (String field : new String[] {"intervalSeconds", "mtbfHours", "failuresPerGpuHour", "gpus", "writeSeconds"}) {
      if (!advice.path(field).isNumber()) {
        throw new IOException("checkpoint advice without a number '" + field + "': " + advice);
      }
    }
    try {
      return new CheckpointAdviceView(advice.get("intervalSeconds").asLong(), advice.get("mtbfHours").asDouble(),
          advice.get("failuresPerGpuHour").asDouble(), advice.get("gpus").asInt(), advice.get("writeSeconds").asLong(),
          advice.path("basis").asText(""));
    } catch (IllegalArgumentException e) {
      throw new IOException("invalid checkpoint advice: " + e.getMessage(), e);
    }
  }
}
