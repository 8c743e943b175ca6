package io.spindle.web;

import io.spindle.core.engine.EngineStatus;
import io.spindle.core.model.AppId;
import io.spindle.core.status.AppHistory;
import io.spindle.core.status.Explanation;
import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * What the HTTP handlers may ask of the scheduler, from their own threads: published snapshots and a few
 * thread-safe calls, never the engine itself.
 */
public interface SchedulerView {

  /** The engine as of the last published cycle. */
  EngineStatus status();

  /** Leadership and cycle figures for the status summary. */
  SchedulerInfo info();

  Explanation explain(AppId appId);

  List<AppHistory.Outcome> history(AppId appId);

  /** The YARN container id of an engine allocation, if it has one (tooltips, the CLI). */
  Optional<String> containerName(long allocationId);

  /** Whether {@code user} holds the administer ACL of {@code queuePath} (or of a queue above it). */
  boolean isQueueAdmin(String user, String queuePath);

  /** Re-reads capacity-scheduler.xml as {@code yarn rmadmin -refreshQueues} does; throws with the reason if refused. */
  String refreshQueues() throws IOException;

  /**
   * Takes new work off {@code node} ({@code host:port}) for {@code reason}, or with {@code reason == null} gives it
   * back; says what it did. An {@link IllegalArgumentException} names what is wrong (an unknown node).
   */
  String cordon(String node, String reason);

  /**
   * Takes one GPU ({@code gpu}, its index on {@code node}) out of service for {@code reason}, stopping what runs on
   * it, or with {@code reason == null} puts it back; says what it did. An {@link IllegalArgumentException} names what
   * is wrong (an unknown node or GPU).
   */
  String cordonGpu(String node, int gpu, String reason);

  /**
   * @param leader whether this scheduler may schedule (always {@code true} without ZooKeeper-backed HA)
   * @param epoch the leader epoch it holds, or -1
   * @param cycleIntervalMillis how often idle cycles run
   */
  /**
   * @param ignoredKeys the configuration's keys of queues no {@code .queues} list declares, each with why (ignored, as
   *     CapacityScheduler ignores them)
   */
  record SchedulerInfo(String rmId, boolean leader, long epoch, long cycleIntervalMillis, List<String> ignoredKeys) {
    public SchedulerInfo {
      ignoredKeys = List.copyOf(ignoredKeys);
    }
  }
}
