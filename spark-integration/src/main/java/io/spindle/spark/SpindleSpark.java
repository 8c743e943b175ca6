package io.spindle.spark;

import java.util.Collection;
import java.util.Optional;
import java.util.Set;

/**
 * What a Spark driver can ask of {@link SpindlePlugin} while it runs: report a periodic checkpoint, so Spindle
 * prefers other victims right after it and resumes preempted work from it; see the last one; map a notice's YARN
 * containers to executors. All methods are safe to call when the plugin is not enabled (they do nothing).
 */
public final class SpindleSpark {

  private static volatile SpindleDriverPlugin driver;

  private SpindleSpark() {}

  static void attach(SpindleDriverPlugin plugin) {
    driver = plugin;
  }

  static void detach(SpindleDriverPlugin plugin) {
    if (driver == plugin) {
      driver = null;
    }
  }

  /**
   * Tells Spindle that the application saved its state at {@code location} at {@code checkpointMillis} (epoch ms),
   * e.g. after each periodic checkpoint of a training loop.
   *
   * @return whether Spindle was told: false when the plugin is not enabled or not listening (client mode, no
   *     ZooKeeper configured) or the write failed (logged)
   */
  public static boolean reportCheckpoint(String location, long checkpointMillis) {
    SpindleDriverPlugin d = driver;
    return d != null && d.responder().checkpointed(location, checkpointMillis);
  }

  /** The latest checkpoint this driver reported or answered a notice with. */
  public static Optional<SparkCheckpoint> lastCheckpoint() {
    SpindleDriverPlugin d = driver;
    return d == null ? Optional.empty() : d.responder().lastCheckpoint();
  }

  /** The executors that run in these YARN containers (a notice's {@code containerIds()}), as Spark names them. */
  public static Set<String> executorsIn(Collection<String> containerIds) {
    SpindleDriverPlugin d = driver;
    return d == null ? Set.of() : d.tasks().executorsIn(containerIds);
  }

  /** Whether the driver receives Spindle's checkpoint notices (YARN cluster mode with Spindle's ZooKeeper). */
  public static boolean listening() {
    SpindleDriverPlugin d = driver;
    return d != null && d.listening();
  }
}
