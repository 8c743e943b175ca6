package io.spindle.core.engine;

import io.spindle.core.model.ResourceVector;
import java.util.Map;

/**
 * A queue as of the end of the last cycle: its limits, fair share, usage and outstanding demand in the default
 * partition (the unlabelled nodes), and the same figures in each labelled partition that has nodes.
 *
 * @param partitions the figures by node label, in label order; empty on a cluster without labelled nodes
 * @param usageHistory the queue's decayed borrowed usage ({@code null} while usage history is off)
 * @param historyFactor what usage history multiplied the queue's weight for idle capacity by (1: unchanged)
 * @param userHistory leaves: each user's decayed usage in the leaf, by user (empty while off)
 */
public record QueueSnapshot(String path, ResourceVector guarantee, ResourceVector maximum,
    ResourceVector fairShare, ResourceVector usage, ResourceVector pending, Map<String, Partition> partitions,
    Usage usageHistory, double historyFactor, Map<String, Usage> userHistory) {

  public QueueSnapshot {
    partitions = Map.copyOf(partitions);
    userHistory = Map.copyOf(userHistory);
  }

  /** A queue without usage history. */
  public QueueSnapshot(String path, ResourceVector guarantee, ResourceVector maximum, ResourceVector fairShare,
      ResourceVector usage, ResourceVector pending, Map<String, Partition> partitions) {
    this(path, guarantee, maximum, fairShare, usage, pending, partitions, null, 1.0, Map.of());
  }

  /** A queue of a cluster without labelled nodes. */
  public QueueSnapshot(String path, ResourceVector guarantee, ResourceVector maximum, ResourceVector fairShare,
      ResourceVector usage, ResourceVector pending) {
    this(path, guarantee, maximum, fairShare, usage, pending, Map.of());
  }

  /** The queue's figures in one labelled partition. */
  public record Partition(ResourceVector guarantee, ResourceVector maximum, ResourceVector fairShare,
      ResourceVector usage, ResourceVector pending) {}

  /**
   * Decayed usage ({@link UsageHistory}): GPU-equivalent-seconds (a MIG slice or share by its fraction of a GPU),
   * memory MB-seconds and vcore-seconds.
   */
  public record Usage(double gpuSeconds, double memoryMbSeconds, double vcoreSeconds) {
    static Usage of(double[] v) {
      return new Usage(v[2] / ResourceVector.GPU_UNITS, v[0], v[1]);
    }
  }
}
