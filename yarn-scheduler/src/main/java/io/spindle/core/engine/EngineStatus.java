package io.spindle.core.engine;

import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.placement.NodeView;
import io.spindle.core.reliability.CheckpointAdvice;
import java.util.List;
import java.util.Optional;

/**
 * Everything a status page shows, as of the end of one cycle: plain values, so readers on other threads (the HTTP
 * server) never touch the engine, and the page, the CLI and {@code why} all read the same moment.
 *
 * @param cycle the cycle this was taken after (0: before the first)
 * @param timeMillis engine clock at that moment
 */
public record EngineStatus(long cycle, long timeMillis, List<QueueSnapshot> queues, List<App> apps,
    List<NodeView> nodes, List<Container> containers) {

  public static final EngineStatus EMPTY = new EngineStatus(0, 0, List.of(), List.of(), List.of(), List.of());

  public EngineStatus {
    queues = List.copyOf(queues);
    apps = List.copyOf(apps);
    nodes = List.copyOf(nodes);
    containers = List.copyOf(containers);
  }

  public Optional<App> app(AppId appId) {
    return apps.stream().filter(a -> a.appId().equals(appId)).findFirst();
  }

  public Optional<QueueSnapshot> queue(String path) {
    return queues.stream().filter(q -> q.path().equals(path)).findFirst();
  }

  /**
   * An application the engine knows: submitted and not finished (or rejected).
   *
   * @param ordering where its queue's ranked ordering puts it, for people ({@code null} in a FIFO or fair queue)
   * @param checkpointAdvice how often it should checkpoint ({@code null} for one that holds and asks for no GPU)
   */
  public record App(AppId appId, String queue, String user, int priority, long submitTimeMillis,
      ResourceVector usage, int containers, List<Request> requests, String ordering,
      CheckpointAdvice checkpointAdvice) {
    public App {
      requests = List.copyOf(requests);
    }

    public App(AppId appId, String queue, String user, int priority, long submitTimeMillis, ResourceVector usage,
        int containers, List<Request> requests) {
      this(appId, queue, user, priority, submitTimeMillis, usage, containers, requests, null, null);
    }
  }

  /**
   * Containers of one request still to be placed.
   *
   * @param reason the last reason the engine gave for its wait
   * @param reservation the nodes held for it (gangs only), or {@code null}
   * @param expectedStart when it is expected to start and how sure that is ({@link ExpectedStart#UNKNOWN} if not)
   */
  public record Request(String requestKey, Resources shape, int outstanding, PlacementSpec spec, String reason,
      Held reservation, ExpectedStart expectedStart) {
    public Request {
      expectedStart = expectedStart == null ? ExpectedStart.UNKNOWN : expectedStart;
    }

    public Request(String requestKey, Resources shape, int outstanding, PlacementSpec spec, String reason,
        Held reservation) {
      this(requestKey, shape, outstanding, spec, reason, reservation, ExpectedStart.UNKNOWN);
    }
  }

  /**
   * When a waiting request is expected to start (all its outstanding containers), from the drain of what runs
   * (see {@code StartEstimates}).
   *
   * @param millis the expected start; {@code Long.MAX_VALUE} when {@code confidence} is {@code UNKNOWN}
   */
  public record ExpectedStart(long millis, StartConfidence confidence) {
    public static final ExpectedStart UNKNOWN = new ExpectedStart(Long.MAX_VALUE, StartConfidence.UNKNOWN);

    public boolean known() {
      return confidence != StartConfidence.UNKNOWN;
    }
  }

  /** How sure an expected start is. */
  public enum StartConfidence {
    /** Every container it waits for declared its run time ({@code spindle.max-runtime}). */
    EXACT,
    /** Some end it waits for is a run time learned from finished work of the same queue, user or kind. */
    ESTIMATED,
    /** Some work it waits for has neither a declared nor a learned run time (or it is too far back to forecast). */
    UNKNOWN
  }

  /**
   * Nodes held for a waiting gang.
   *
   * @param projectedStartMillis when the gang is expected to fit; {@code Long.MAX_VALUE} if unknown
   */
  public record Held(String subtree, List<NodeId> nodeIds, long sinceMillis, long projectedStartMillis) {
    public Held {
      nodeIds = List.copyOf(nodeIds);
    }
  }

  /** A container the engine charges, and the GPUs (whole, or MIG instances) it holds. */
  public record Container(long allocationId, AppId appId, String requestKey, NodeId nodeId, Resources shape,
      List<GpuSlot> gpus) {
    public Container {
      gpus = List.copyOf(gpus);
    }
  }
}
