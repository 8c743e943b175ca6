package io.spindle.core.engine;

import io.spindle.core.model.AppId;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.model.ResourceVector;
import java.util.List;

/** What the engine decided. Drivers apply decisions; the engine never acts on the outside world itself. */
public sealed interface Decision {

  /** Start one container of {@code shape} for the application's request {@code requestKey} on {@code nodeId}. */
  record Allocate(long allocationId, AppId appId, String requestKey, NodeId nodeId, Resources shape,
      List<GpuSlot> gpus, ResourceVector charge) implements Decision {
    public Allocate {
      gpus = List.copyOf(gpus);
    }
  }

  /**
   * The application ({@code requestKey == null}) or one of its requests cannot be served, ever, as asked: an unknown
   * queue, an unknown MIG profile, a container larger than any node or than the queue's maximum.
   */
  record Reject(AppId appId, String requestKey, String reason) implements Decision {}

  /**
   * Nodes are held for a gang that does not fit yet: nothing else starts there (but backfill that ends before
   * {@code projectedStartMillis}) until the gang does, or the reservation times out.
   */
  record Reserve(AppId appId, String requestKey, String subtree, List<NodeId> nodeIds, long projectedStartMillis)
      implements Decision {
    public Reserve {
      nodeIds = List.copyOf(nodeIds);
    }
  }

  /** A request still waits, and why. Emitted when the reason changes, not every cycle. */
  record Wait(AppId appId, String requestKey, String reason) implements Decision {}

  /**
   * Re-partition a MIG GPU to {@code layout}. Every instance a container holds is in {@code layout}, and the node
   * must leave it alone: it destroys only the unused instances {@code layout} lacks and creates the missing ones,
   * which MIG allows beside running work. The node applies it and reports the result
   * ({@link EngineEvent.MigLayoutReported}); the new instances count from then, and not before
   * {@code availableAtMillis}. Never the layout the GPU already has.
   */
  record ReconfigureMig(NodeId nodeId, int gpuIndex, MigLayout layout, long availableAtMillis) implements Decision {}

  /**
   * Ask the application to checkpoint the victim's containers before {@code deadlineMillis} (engine clock): the
   * first step of a reclaim. The application answers with {@link EngineEvent.CheckpointAnswered} quoting
   * {@code noticeId}: DONE (reclaimed at once), EXTEND (granted while {@code extensionsGranted < maxExtensions}), or
   * nothing (reclaimed at the deadline). Issued again under the same {@code noticeId} when an extension is granted
   * (a later deadline, one more granted) or refused (the same deadline, {@code refusal} says why); the latest one
   * stands. The fields match the client's {@code CheckpointNotice} record one for one.
   *
   * @param requestKey the request the victim's containers were started for (a gang is one request)
   * @param allocationIds the victim's containers still running: a whole gang, or one container not in a gang
   * @param maxExtensions the most extensions the victim's queue grants on one notice
   * @param maxExtensionMillis the most one extension adds
   * @param refusal {@code null}, or why the extension this issue answers was refused
   * @param forAppId the application the capacity is reclaimed for (with {@code forRequestKey}, its request)
   * @param reason why the victim was chosen, for people; the same on every issue of the notice
   * @param targetSize 0 when the victim stops whole; above 0 for a <em>resize</em> notice: the containers are members
   *     an elastic gang grew by, and the gang runs on with this many members once they are gone
   */
  record RequestCheckpoint(long noticeId, AppId appId, String requestKey, List<Long> allocationIds,
      long deadlineMillis, int extensionsGranted, int maxExtensions, long maxExtensionMillis, String refusal,
      AppId forAppId, String forRequestKey, String reason, int targetSize) implements Decision {
    public RequestCheckpoint {
      allocationIds = List.copyOf(allocationIds);
    }

    /** A notice that stops its victim whole. */
    public RequestCheckpoint(long noticeId, AppId appId, String requestKey, List<Long> allocationIds,
        long deadlineMillis, int extensionsGranted, int maxExtensions, long maxExtensionMillis, String refusal,
        AppId forAppId, String forRequestKey, String reason) {
      this(noticeId, appId, requestKey, allocationIds, deadlineMillis, extensionsGranted, maxExtensions,
          maxExtensionMillis, refusal, forAppId, forRequestKey, reason, 0);
    }

    public boolean isResize() {
      return targetSize > 0;
    }

    public int extensionsLeft() {
      return Math.max(0, maxExtensions - extensionsGranted);
    }
  }

  /**
   * A checkpoint notice is withdrawn before its reclaim: the request it was for started or went away. The
   * application keeps its containers.
   */
  record CancelCheckpoint(long noticeId, AppId appId, List<Long> allocationIds, String reason)
      implements Decision {
    public CancelCheckpoint {
      allocationIds = List.copyOf(allocationIds);
    }
  }

  /**
   * A gang lost members to the cluster ({@code lostAllocationIds}: their node left, they expired unlaunched): stop
   * the survivors ({@code allocationIds}; YARN: killed, as preempted, so they do not count as the application's
   * failures). The engine keeps charging each survivor until the driver reports it ended. The gang is re-queued
   * whole under {@code requestKey}; the driver asks for it again on the application's behalf, the lost members
   * included, as it does after a preemption.
   */
  record RestartGang(AppId appId, String requestKey, List<Long> allocationIds, List<Long> lostAllocationIds,
      String reason) implements Decision {
    public RestartGang {
      allocationIds = List.copyOf(allocationIds);
      lostAllocationIds = List.copyOf(lostAllocationIds);
    }
  }

  /**
   * Stop these containers: the GPU they run on left service ({@code reason} says which and why). Unlike a reclaim,
   * nothing is re-queued on the application's behalf: the application decides, as it does for a container its node
   * lost (YARN: exit status ABORTED, so it does not count as the application's failure). The engine keeps charging
   * them until the driver reports each ended.
   */
  record StopContainers(AppId appId, List<Long> allocationIds, String reason) implements Decision {
    public StopContainers {
      allocationIds = List.copyOf(allocationIds);
    }
  }

  /**
   * Reclaim: kill these containers (YARN: with status PREEMPTED). The engine keeps charging them until the driver
   * reports each {@link EngineEvent.ContainerFinished}, and hands their capacity on only when every victim of the same
   * reclaim has ended, placing the request the reclaim was for first. The victim's request is then re-queued under
   * {@code requestKey} — a gang whole — to be placed again later; {@code checkpointLocation} (the application's own
   * reference from its DONE answer or last {@link EngineEvent.CheckpointReported}, or {@code null}) is what it
   * should resume from. With {@code targetSize} above 0 the containers are an elastic gang's members above its
   * minimum: the gang runs on with that many members, and the members reclaimed are asked for again as growth, not
   * as a new gang.
   */
  record Preempt(long noticeId, AppId appId, String requestKey, List<Long> allocationIds, String checkpointLocation,
      String reason, int targetSize) implements Decision {
    public Preempt {
      allocationIds = List.copyOf(allocationIds);
    }

    /** The kill of a victim that stops whole. */
    public Preempt(long noticeId, AppId appId, String requestKey, List<Long> allocationIds, String checkpointLocation,
        String reason) {
      this(noticeId, appId, requestKey, allocationIds, checkpointLocation, reason, 0);
    }

    public boolean isResize() {
      return targetSize > 0;
    }
  }

  /**
   * An elastic gang changed size: it grew into idle capacity by {@code allocationIds} (announced by the
   * {@link Allocate}s just before), or shrank by them after a resize notice's reclaim or their loss. Drivers and the
   * journal see every grow and shrink; nothing is to be done for it beyond what the other decisions say.
   */
  record Resize(AppId appId, String requestKey, int fromSize, int toSize, List<Long> allocationIds, String reason)
      implements Decision {
    public Resize {
      allocationIds = List.copyOf(allocationIds);
    }

    public boolean grew() {
      return toSize > fromSize;
    }
  }
}
