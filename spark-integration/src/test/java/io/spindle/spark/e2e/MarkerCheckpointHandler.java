package io.spindle.spark.e2e;

import io.spindle.client.CheckpointDecision;
import io.spindle.client.CheckpointNoticeView;
import io.spindle.spark.SparkCheckpointHandler;
import io.spindle.spark.SpindleSpark;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.spark.SparkContext;

/**
 * The end-to-end test's checkpoint handler ({@code spark.spindle.checkpoint.handler}): "saves" by writing a file
 * that names the notice, its containers and the executors in them, and answers DONE with that file.
 */
public final class MarkerCheckpointHandler implements SparkCheckpointHandler {

  /** Spark setting naming the marker directory shared with the test. */
  public static final String DIR = "spark.spindle.e2e.dir";

  @Override
  public CheckpointDecision onNotice(CheckpointNoticeView notice, SparkContext sc) throws IOException {
    Path dir = Path.of(sc.getConf().get(DIR));
    Path file = dir.resolve("checkpoint-" + notice.noticeId());
    long now = System.currentTimeMillis();
    GangBarrierJob.write(file, "containers " + String.join(",", notice.containerIds()) + "\nexecutors "
        + String.join(",", SpindleSpark.executorsIn(notice.containerIds())) + "\n");
    return CheckpointDecision.done(file.toUri().toString(), now);
  }

  /** The checkpoint file of the first notice answered, if any. */
  static Optional<Path> answered(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().matches("checkpoint-\\d+")).findFirst();
    }
  }
}
