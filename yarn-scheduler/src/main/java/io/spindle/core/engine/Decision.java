package io.spindle.core.engine;

import io.spindle.core.model.MigLayout;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.model.ResourceVector;
import java.util.List;

/** What the engine decided. Drivers apply decisions; the engine never acts on the outside world itself. */
public sealed interface Decision {

  /** Start one container of {@code shape} for the application's request {@code requestKey} on {@code nodeId}. */
  record Allocate(long allocationId, String appId, String requestKey, String nodeId, Resources shape,
      List<GpuSlot> gpus, ResourceVector charge) implements Decision {
    public Allocate {
      gpus = List.copyOf(gpus);
    }
  }

  /**
   * The application ({@code requestKey == null}) or one of its requests cannot be served, ever, as asked: an unknown
   * queue, an unknown MIG profile, a container larger than any node or than the queue's maximum.
   */
  record Reject(String appId, String requestKey, String reason) implements Decision {}

  /**
   * Nodes are held for a gang that does not fit yet: nothing else starts there (but backfill that ends before
   * {@code projectedStartMillis}) until the gang does, or the reservation times out.
   */
  record Reserve(String appId, String requestKey, String subtree, List<String> nodeIds, long projectedStartMillis)
      implements Decision {
    public Reserve {
      nodeIds = List.copyOf(nodeIds);
    }
  }

  /** A request still waits, and why. Emitted when the reason changes, not every cycle. */
  record Wait(String appId, String requestKey, String reason) implements Decision {}

  /**
   * Re-partition a MIG GPU to {@code layout}. Every instance a container holds is in {@code layout}, and the node
   * must leave it alone: it destroys only the unused instances {@code layout} lacks and creates the missing ones,
   * which MIG allows beside running work. The node applies it and reports the result
   * ({@link EngineEvent.MigLayoutReported}); the new instances count from then, and not before
   * {@code availableAtMillis}. Never the layout the GPU already has.
   */
  record ReconfigureMig(String nodeId, int gpuIndex, MigLayout layout, long availableAtMillis) implements Decision {}
}
