package io.spindle.core.engine;

import io.spindle.core.model.AppId;
import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.preemption.CheckpointAnswer;
import java.util.OptionalLong;

/** What drivers (the YARN adapter, the simulator) tell the engine. Plain data, so it can be journaled and replayed. */
public sealed interface EngineEvent {

  record NodeAdded(Node node) implements EngineEvent {}

  /** The node is gone; containers on it are gone with it and their resources are no longer charged. */
  record NodeRemoved(NodeId nodeId) implements EngineEvent {}

  /**
   * The node's partition (YARN node label) changed: what runs there keeps running, new containers come from requests
   * of the new partition only, and a gang reservation holding it is given up (its gang can no longer use it).
   */
  /**
   * A node's YARN label changed: it is now in {@code partition}, which lends idle capacity to the default partition
   * if {@code sharesIdle} (a non-exclusive label).
   */
  record NodePartitionChanged(NodeId nodeId, String partition, boolean sharesIdle) implements EngineEvent {
    /** Into an exclusive partition. */
    public NodePartitionChanged(NodeId nodeId, String partition) {
      this(nodeId, partition, false);
    }
  }

  /**
   * An admin cordoned a node ({@code reason} says why) or, with {@code reason == null}, uncordoned it. A cordoned node
   * takes no new containers or reservations (a reservation it held is given up); what runs there runs on, and its
   * capacity still counts in queue shares, as a cordon is meant to be short.
   */
  record NodeCordonChanged(NodeId nodeId, String reason) implements EngineEvent {}

  /**
   * A node judged one of its GPUs ({@code gpuIndex}) from {@code nvidia-smi}, the kernel log and DCGM: failed, it
   * leaves service and what runs on it is stopped; degraded, it takes no new gang member (see {@link GpuFaults}).
   */
  record GpuHealthReported(NodeId nodeId, int gpuIndex, GpuHealth health) implements EngineEvent {
    public GpuHealthReported {
      java.util.Objects.requireNonNull(health, "health");
    }
  }

  /** An admin took one GPU out of service ({@code reason}), or put it back ({@code reason == null}). */
  record GpuCordonChanged(NodeId nodeId, int gpuIndex, String reason) implements EngineEvent {}

  /**
   * @param queue leaf queue by name or full path
   * @param priority higher runs first within a queue (YARN's application priority)
   * @param kind what the application is, for learning run times from finished ones of its kind and user (the YARN
   *     adapter gives its name and tags); {@code null}: only its user is known
   */
  record AppSubmitted(AppId appId, String queue, String user, int priority, String kind) implements EngineEvent {

    public AppSubmitted(AppId appId, String queue, String user, int priority) {
      this(appId, queue, user, priority, null);
    }
  }

  /**
   * The application's priority changed while it runs ({@code yarn application -updatePriority}): its waiting
   * requests are ordered by the new one from this cycle on, and it ranks by it as a victim and as a beneficiary of
   * preemption. Containers it already holds stay where they are.
   */
  record AppPriorityChanged(AppId appId, int priority) implements EngineEvent {}

  /** The application ended: its pending demands are dropped and its containers released. */
  record AppFinished(AppId appId) implements EngineEvent {}

  /**
   * The application now wants {@code count} more containers of {@code shape} under {@code requestKey}. A new
   * event for the same key replaces the outstanding count (YARN's resource requests work that way); 0 cancels.
   * With a gang {@link PlacementSpec}, the {@code count} containers are one gang.
   */
  record Demand(AppId appId, String requestKey, Resources shape, int count, PlacementSpec spec)
      implements EngineEvent {
    public Demand {
      spec = spec == null ? PlacementSpec.SINGLE : spec;
    }

    public Demand(AppId appId, String requestKey, Resources shape, int count) {
      this(appId, requestKey, shape, count, PlacementSpec.SINGLE);
    }
  }

  /** What exists on a MIG-mode GPU, as its node reports it (after a re-partition, or on its own). */
  record MigLayoutReported(NodeId nodeId, int gpuIndex, MigLayout layout) implements EngineEvent {}

  /**
   * A container that already runs, learned after a restart or a failover (YARN's work-preserving recovery): it is
   * charged to its application and takes its place on {@code nodeId} again. The driver chooses the id, from a range
   * it keeps apart from the ids the engine hands out. {@code preemptible} is {@code false} for an application
   * master's container (see {@link PlacementSpec#preemptible()}).
   */
  record ContainerRecovered(long allocationId, AppId appId, String requestKey, NodeId nodeId, Resources shape,
      boolean preemptible) implements EngineEvent {

    public ContainerRecovered(long allocationId, AppId appId, String requestKey, NodeId nodeId, Resources shape) {
      this(allocationId, appId, requestKey, nodeId, shape, true);
    }
  }

  /** A container ended (completed, released or killed); its resources return. */
  record ContainerFinished(long allocationId) implements EngineEvent {}

  /**
   * A container ended through no doing of its application or of the engine: it expired before it was launched, or
   * its disks failed. Its resources return, and a gang it belonged to that restarts on member loss is stopped and
   * re-queued whole ({@link Decision.RestartGang}). Containers on a node that left are lost the same way, through
   * {@link NodeRemoved}.
   */
  record ContainerLost(long allocationId, String reason) implements EngineEvent {}

  /**
   * The application's answer to the checkpoint notice {@code noticeId} ({@link Decision.RequestCheckpoint}): DONE,
   * with where the checkpoint is; or EXTEND, asking to move the deadline by {@code requestedExtensionMillis} (0: as
   * much as allowed). An answer to a notice that was already reclaimed or withdrawn changes nothing.
   */
  record CheckpointAnswered(AppId appId, long noticeId, CheckpointAnswer answer, long requestedExtensionMillis,
      String checkpointLocation) implements EngineEvent {
    public CheckpointAnswered {
      if (answer == null) {
        throw new IllegalArgumentException("answer must be DONE or EXTEND");
      }
      if (requestedExtensionMillis < 0) {
        throw new IllegalArgumentException("requestedExtensionMillis must not be negative: " + requestedExtensionMillis);
      }
    }
  }

  /**
   * The application wrote a checkpoint at {@code lastCheckpointMillis} (engine clock) to {@code location}: work
   * before it is not lost if its containers are preempted, so it becomes a cheaper victim; and a preempted request
   * is told to resume from {@code location}. {@code writeMillis}, when the application says, is how long the write
   * took: the checkpoint interval advised to it is computed with it.
   */
  record CheckpointReported(AppId appId, long lastCheckpointMillis, String location, OptionalLong writeMillis)
      implements EngineEvent {
    public CheckpointReported {
      if (writeMillis == null) {
        throw new IllegalArgumentException("writeMillis must be given (empty when not reported)");
      }
      if (writeMillis.isPresent() && writeMillis.getAsLong() < 0) {
        throw new IllegalArgumentException("writeMillis must not be negative: " + writeMillis.getAsLong());
      }
    }

    /** A report that does not say how long the write took. */
    public CheckpointReported(AppId appId, long lastCheckpointMillis, String location) {
      this(appId, lastCheckpointMillis, location, OptionalLong.empty());
    }
  }
}
