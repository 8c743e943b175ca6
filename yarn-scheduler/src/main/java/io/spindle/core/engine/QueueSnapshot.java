package io.spindle.core.engine;

import io.spindle.core.model.ResourceVector;
import java.util.Map;

/**
 * A queue as of the end of the last cycle: its limits, fair share, usage and outstanding demand in the default
 * partition (the unlabelled nodes), and the same figures in each labelled partition that has nodes.
 *
 * @param partitions the figures by node label, in label order; empty on a cluster without labelled nodes
 */
public record QueueSnapshot(String path, ResourceVector guarantee, ResourceVector maximum,
    ResourceVector fairShare, ResourceVector usage, ResourceVector pending, Map<String, Partition> partitions) {

  public QueueSnapshot {
    partitions = Map.copyOf(partitions);
  }

  /** A queue of a cluster without labelled nodes. */
  public QueueSnapshot(String path, ResourceVector guarantee, ResourceVector maximum, ResourceVector fairShare,
      ResourceVector usage, ResourceVector pending) {
    this(path, guarantee, maximum, fairShare, usage, pending, Map.of());
  }

  /** The queue's figures in one labelled partition. */
  public record Partition(ResourceVector guarantee, ResourceVector maximum, ResourceVector fairShare,
      ResourceVector usage, ResourceVector pending) {}
}
