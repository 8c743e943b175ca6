package io.spindle.core.engine;

import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.AppId;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.RequestRef;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.preemption.CheckpointHandshake;
import io.spindle.core.preemption.Need;
import io.spindle.core.reliability.FailureObservations;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * What a standby scheduler needs, beyond what YARN's own recovery tells it, to take over and decide as the old
 * leader would have: {@link Engine#durableState} on the leader, {@link Engine#restore} on the new one.
 *
 * <p>Kept here, because YARN does not know it: which running containers run as one unit (a gang preempted whole,
 * with its original start time and placement spec); reservations and their age, and when a gang whose reservation
 * timed out may reserve again; the reclaims in flight with their checkpoint handshakes (notice ids, deadlines on the
 * engine clock, extensions granted, DONE received, containers ended and held); checkpoint reports and resume-from
 * locations; how long requests and queues have starved; the run time containers declared; the next notice id.
 *
 * <p>Rebuilt from YARN instead, not kept: nodes, applications, running containers and what they are charged, and the
 * outstanding asks (application masters send them again). There is no usage history to keep: fair shares are
 * computed from current usage alone, nothing decays.
 *
 * <p>Containers are named by the driver's stable names (YARN container ids): allocation ids are the engine's and are
 * not the same on the new leader. Values only, validated on construction: any instance is consistent in itself.
 *
 * @param nextNoticeId the id the next checkpoint notice gets; applications key answers by notice id, so a new
 *     leader never issues one below it
 * @param nextUnitId the id the next unit gets: unit ids increase with start order across leaders
 * @param units every unit that preemption knows of: what runs as one piece
 * @param reservations nodes held for waiting gangs, in the order they were made
 * @param reservationBackoffs gangs whose reservation timed out, and until when they may not reserve again
 * @param reclaims the reclaim plans in flight, in the order they were made
 * @param checkpoints each application's last checkpoint report
 * @param resumeFrom where requests re-queued after preemption resume from
 * @param starvation how long requests and queues have starved
 * @param declaredEnds when running containers that declared a run time will have ended
 * @param attained what each application has run (GPU service and wall time), as of the save: the ranked orderings
 *     and the starvation bound go on from it
 * @param learnedRuntimes the run times {@code shortest-first} learned from finished applications
 * @param cordons the nodes admins took new work off, with why (also nodes that have not registered again yet)
 * @param failures the GPU-hours the cluster's GPUs have been in service and the GPU failures among them, which the
 *     checkpoint interval advised to applications is computed from
 * @param gpuFaults GPUs with recent failures, a quarantine or an admin's cordon ({@link GpuFaults})
 * @param usageHistory the decayed usage of queues and users ({@link UsageHistory}), each as settled at its last rate
 *     change with that rate: the new leader weighs idle capacity as the old one did
 */
public record DurableState(long nextNoticeId, long nextUnitId, List<UnitState> units,
    List<ReservationState> reservations,
    List<ReservationBackoff> reservationBackoffs, List<ReclaimState> reclaims, List<CheckpointState> checkpoints,
    List<ResumeState> resumeFrom, StarvationState starvation, List<DeclaredEnd> declaredEnds,
    List<AttainedState> attained, List<LearnedRuntime> learnedRuntimes, List<CordonState> cordons,
    FailureObservations.Saved failures, List<GpuFaultState> gpuFaults, List<UsageState> usageHistory) {

  /** A state without usage history. */
  public DurableState(long nextNoticeId, long nextUnitId, List<UnitState> units, List<ReservationState> reservations,
      List<ReservationBackoff> reservationBackoffs, List<ReclaimState> reclaims, List<CheckpointState> checkpoints,
      List<ResumeState> resumeFrom, StarvationState starvation, List<DeclaredEnd> declaredEnds,
      List<AttainedState> attained, List<LearnedRuntime> learnedRuntimes, List<CordonState> cordons,
      FailureObservations.Saved failures, List<GpuFaultState> gpuFaults) {
    this(nextNoticeId, nextUnitId, units, reservations, reservationBackoffs, reclaims, checkpoints, resumeFrom,
        starvation, declaredEnds, attained, learnedRuntimes, cordons, failures, gpuFaults, List.of());
  }

  /** A state without GPU faults. */
  public DurableState(long nextNoticeId, long nextUnitId, List<UnitState> units, List<ReservationState> reservations,
      List<ReservationBackoff> reservationBackoffs, List<ReclaimState> reclaims, List<CheckpointState> checkpoints,
      List<ResumeState> resumeFrom, StarvationState starvation, List<DeclaredEnd> declaredEnds,
      List<AttainedState> attained, List<LearnedRuntime> learnedRuntimes, List<CordonState> cordons,
      FailureObservations.Saved failures) {
    this(nextNoticeId, nextUnitId, units, reservations, reservationBackoffs, reclaims, checkpoints, resumeFrom,
        starvation, declaredEnds, attained, learnedRuntimes, cordons, failures, List.of());
  }

  /** A state without failure observations or GPU faults. */
  public DurableState(long nextNoticeId, long nextUnitId, List<UnitState> units, List<ReservationState> reservations,
      List<ReservationBackoff> reservationBackoffs, List<ReclaimState> reclaims, List<CheckpointState> checkpoints,
      List<ResumeState> resumeFrom, StarvationState starvation, List<DeclaredEnd> declaredEnds,
      List<AttainedState> attained, List<LearnedRuntime> learnedRuntimes, List<CordonState> cordons) {
    this(nextNoticeId, nextUnitId, units, reservations, reservationBackoffs, reclaims, checkpoints, resumeFrom,
        starvation, declaredEnds, attained, learnedRuntimes, cordons, FailureObservations.Saved.NONE);
  }

  /** A state without cordoned nodes. */
  public DurableState(long nextNoticeId, long nextUnitId, List<UnitState> units, List<ReservationState> reservations,
      List<ReservationBackoff> reservationBackoffs, List<ReclaimState> reclaims, List<CheckpointState> checkpoints,
      List<ResumeState> resumeFrom, StarvationState starvation, List<DeclaredEnd> declaredEnds,
      List<AttainedState> attained, List<LearnedRuntime> learnedRuntimes) {
    this(nextNoticeId, nextUnitId, units, reservations, reservationBackoffs, reclaims, checkpoints, resumeFrom,
        starvation, declaredEnds, attained, learnedRuntimes, List.of());
  }

  /** A state without attained service or learned run times (a scheduler whose queues order FIFO keeps none). */
  public DurableState(long nextNoticeId, long nextUnitId, List<UnitState> units, List<ReservationState> reservations,
      List<ReservationBackoff> reservationBackoffs, List<ReclaimState> reclaims, List<CheckpointState> checkpoints,
      List<ResumeState> resumeFrom, StarvationState starvation, List<DeclaredEnd> declaredEnds) {
    this(nextNoticeId, nextUnitId, units, reservations, reservationBackoffs, reclaims, checkpoints, resumeFrom,
        starvation, declaredEnds, List.of(), List.of());
  }

  /** Nothing in flight: what a scheduler that never ran would save. */
  public static final DurableState EMPTY = new DurableState(1, 1, List.of(), List.of(), List.of(), List.of(), List.of(),
      List.of(), new StarvationState(List.of(), List.of()), List.of());

  /**
   * The applications whose outstanding requests this state refers to (reservations and their back-offs, reclaims,
   * starvation clocks). {@link Engine#restore} matches those against the asks of the cycle after it, so a driver
   * should let these applications ask again before restoring.
   */
  public Set<AppId> requestingApps() {
    Set<AppId> apps = new java.util.TreeSet<>();
    reservations.forEach(r -> apps.add(r.appId()));
    reservationBackoffs.forEach(b -> apps.add(b.appId()));
    reclaims.forEach(r -> apps.add(r.need().appId()));
    starvation.requests().forEach(w -> apps.add(w.appId()));
    return apps;
  }

  public DurableState {
    if (nextNoticeId < 1) {
      throw new InvalidInputException("nextNoticeId", nextNoticeId, "must be at least 1");
    }
    units = copy("units", units);
    reservations = copy("reservations", reservations);
    reservationBackoffs = copy("reservationBackoffs", reservationBackoffs);
    reclaims = copy("reclaims", reclaims);
    checkpoints = copy("checkpoints", checkpoints);
    resumeFrom = copy("resumeFrom", resumeFrom);
    require("starvation", starvation);
    declaredEnds = copy("declaredEnds", declaredEnds);
    attained = copy("attained", attained);
    learnedRuntimes = copy("learnedRuntimes", learnedRuntimes);
    cordons = copy("cordons", cordons);
    gpuFaults = copy("gpuFaults", gpuFaults);
    usageHistory = copy("usageHistory", usageHistory);
    require("failures", failures);

    Map<Long, UnitState> unitsById = new HashMap<>();
    Set<String> containers = new HashSet<>();
    for (UnitState u : units) {
      if (unitsById.put(u.unitId(), u) != null) {
        throw new InvalidInputException("unitId", u.unitId(), "two units with the same id");
      }
      if (u.unitId() >= nextUnitId) {
        throw new InvalidInputException("unitId", u.unitId(), "not below nextUnitId " + nextUnitId);
      }
      for (String c : u.containers()) {
        if (!containers.add(c)) {
          throw new InvalidInputException("container", c, "in two units");
        }
      }
    }
    unique("reservation", reservations.stream().map(r -> new RequestRef(r.appId(), r.requestKey())).toList());
    Set<NodeId> reservedNodes = new HashSet<>();
    for (ReservationState r : reservations) {
      for (NodeId node : r.nodeIds()) {
        if (!reservedNodes.add(node)) {
          throw new InvalidInputException("reserved node", node, "held by two reservations");
        }
      }
    }
    unique("reservation backoff", reservationBackoffs.stream().map(b -> new RequestRef(b.appId(),
        b.requestKey())).toList());
    Set<Long> notices = new HashSet<>();
    Set<Long> liveVictims = new HashSet<>();
    for (ReclaimState r : reclaims) {
      for (NoticeState n : r.notices()) {
        if (!notices.add(n.noticeId())) {
          throw new InvalidInputException("noticeId", n.noticeId(), "in two notices");
        }
        if (n.noticeId() >= nextNoticeId) {
          throw new InvalidInputException("noticeId", n.noticeId(), "not below nextNoticeId " + nextNoticeId);
        }
        if (n.state() == CheckpointHandshake.State.WITHDRAWN) {
          continue; // Its victim was let go; the unit may have ended or become another notice's victim since.
        }
        if (!liveVictims.add(n.unitId())) {
          throw new InvalidInputException("unitId", n.unitId(), "the victim of two notices in force");
        }
        UnitState u = unitsById.get(n.unitId());
        if (u == null || !u.appId().equals(n.appId()) || !u.requestKey().equals(n.requestKey())) {
          throw new InvalidInputException("unitId", n.unitId(), "notice " + n.noticeId() + " is for a unit of "
              + n.appId() + "/" + n.requestKey() + " that is not among the units");
        }
        for (NoticeContainer c : n.containers()) {
          if (!c.ended() && !u.containers().contains(c.name())) {
            throw new InvalidInputException("container", c.name(), "named running by notice " + n.noticeId()
                + " but not a container of its unit " + n.unitId());
          }
        }
      }
    }
    unique("checkpoint report", checkpoints.stream().map(CheckpointState::appId).toList());
    unique("resume location", resumeFrom.stream().map(r -> new RequestRef(r.appId(), r.requestKey())).toList());
    unique("declared end", declaredEnds.stream().map(DeclaredEnd::container).toList());
    unique("attained service", attained.stream().map(AttainedState::appId).toList());
    unique("usage history", usageHistory.stream().map(u -> u.queue() + "\u0000" + u.user()).toList());
  }

  /**
   * One meter of usage history: a queue's ({@code user} empty) decayed borrowed usage, or a user's decayed usage in
   * leaf {@code queue}, as settled at {@code asOfMillis} (engine clock): memory MB-seconds, vcore-seconds and
   * GPU-unit-seconds (840 units a GPU); from then on it accrues at {@code rate} and decays.
   */
  public record UsageState(String queue, String user, double memoryMbSeconds, double vcoreSeconds,
      double gpuUnitSeconds, ResourceVector rate, long asOfMillis) {
    public UsageState {
      require("queue", queue);
      require("user", user);
      require("rate", rate);
      if (!(memoryMbSeconds >= 0 && vcoreSeconds >= 0 && gpuUnitSeconds >= 0)
          || Double.isInfinite(memoryMbSeconds + vcoreSeconds + gpuUnitSeconds)) {
        throw new InvalidInputException("usage history", queue, "negative or not finite");
      }
      if (rate.memoryMb() < 0 || rate.vcores() < 0 || rate.gpuUnits() < 0) {
        throw new InvalidInputException("usage history", queue, "negative rate");
      }
    }
  }

  /**
   * What runs as one piece for preemption: a gang's members, preempted and re-queued whole, or one container that
   * is not in a gang.
   *
   * @param unitId the engine's id of the unit; ids increase with start order (younger units are preempted first
   *     among equals), so a new leader keeps them
   * @param size how many containers the unit started with: a preempted gang is asked for again whole
   * @param containers its containers still running, by name; empty for a victim whose containers have all ended
   *     while its reclaim completes
   */
  public record UnitState(long unitId, AppId appId, String requestKey, Resources shape, PlacementSpec spec,
      long startMillis, int size, List<String> containers) {
    public UnitState {
      positive("unitId", unitId);
      require("appId", appId);
      require("requestKey", requestKey);
      require("shape", shape);
      require("spec", spec);
      positive("size", size);
      containers = copy("containers", containers);
      if (containers.size() > size) {
        throw new InvalidInputException("containers", containers.size(), "more than the unit's size " + size);
      }
      unique("container of unit " + unitId, containers);
    }
  }

  /**
   * Nodes held for a waiting gang. They only drain; the reservation times out {@code createdMillis} plus the
   * timeout, whichever leader runs then.
   *
   * @param gangSize how many containers the gang asked for when the nodes were reserved
   */
  public record ReservationState(AppId appId, String requestKey, String subtree, List<NodeId> nodeIds,
      long createdMillis, int gangSize) {
    public ReservationState {
      require("appId", appId);
      require("requestKey", requestKey);
      require("subtree", subtree);
      nodeIds = copy("nodeIds", nodeIds);
      if (nodeIds.isEmpty()) {
        throw new InvalidInputException("nodeIds", nodeIds, "a reservation holds at least one node");
      }
      unique("reserved node", nodeIds);
      positive("gangSize", gangSize);
    }
  }

  /** A gang whose reservation timed out reserves no nodes again before {@code noReservationBeforeMillis}. */
  public record ReservationBackoff(AppId appId, String requestKey, long noReservationBeforeMillis) {
    public ReservationBackoff {
      require("appId", appId);
      require("requestKey", requestKey);
    }
  }

  /**
   * One reclaim plan in flight: the request it frees capacity for, and one notice per victim.
   *
   * @param withdrawn the request no longer needs it; only victims already being reclaimed are waited for
   */
  public record ReclaimState(Need need, boolean withdrawn, List<NoticeState> notices) {
    public ReclaimState {
      require("need", need);
      require("need.appId", need.appId());
      require("need.requestKey", need.requestKey());
      require("need.queue", need.queue());
      require("need.charge", need.charge());
      notices = copy("notices", notices); // None when free capacity was enough: it completes at the next cycle.
    }
  }

  /**
   * The checkpoint handshake with one victim, as the application was last told it (deadline, extensions) and as it
   * answered.
   *
   * @param containers every container the notice named that is still running or still held: a victim's container
   *     that ended while its reclaim is under way stays charged until every victim of the plan has ended
   * @param deadlineMillis on the engine clock; extensions granted are in it
   * @param state {@code RECLAIM_DUE}: DONE was received; {@code RECLAIMING}: the containers were ordered killed
   * @param reclaimReason why the reclaim happened, once it did
   */
  public record NoticeState(long noticeId, long unitId, AppId appId, String requestKey,
      List<NoticeContainer> containers, long noticedAtMillis, long deadlineMillis, int extensionsGranted,
      int maxExtensions, long maxExtensionMillis, String reason, String checkpointLocation,
      CheckpointHandshake.State state, String reclaimReason) {
    public NoticeState {
      positive("noticeId", noticeId);
      positive("unitId", unitId);
      require("appId", appId);
      require("requestKey", requestKey);
      containers = copy("containers", containers);
      unique("container of notice " + noticeId,
          containers.stream().filter(c -> !c.ended()).map(NoticeContainer::name).toList());
      require("reason", reason);
      require("state", state);
      if (deadlineMillis < noticedAtMillis) {
        throw new InvalidInputException("deadlineMillis", deadlineMillis,
            "before the notice was sent (" + noticedAtMillis + ")");
      }
      if (maxExtensions < 0 || extensionsGranted < 0 || extensionsGranted > maxExtensions) {
        throw new InvalidInputException("extensionsGranted", extensionsGranted,
            "must be between 0 and maxExtensions " + maxExtensions);
      }
      if (maxExtensionMillis < 0) {
        throw new InvalidInputException("maxExtensionMillis", maxExtensionMillis, "must not be negative");
      }
      boolean reclaiming = state == CheckpointHandshake.State.RECLAIMING;
      if (state != CheckpointHandshake.State.ENDED && reclaiming != (reclaimReason != null)) {
        throw new InvalidInputException("reclaimReason", reclaimReason, "in state " + state
            + " a notice " + (reclaiming ? "needs" : "has no") + " reclaim reason");
      }
    }
  }

  /**
   * A container named by a notice. Where and what it is is kept too: one that ended (or does not come back after the
   * failover) is held charged on its node until its reclaim completes, as on the old leader.
   *
   * @param name the driver's name; may be {@code null} for a container that ended
   * @param endsAtMillis when it declared it will have ended; {@code Long.MAX_VALUE} if it declared nothing
   */
  public record NoticeContainer(String name, NodeId nodeId, Resources shape, long endsAtMillis, boolean ended) {
    public NoticeContainer {
      if (!ended) {
        require("name", name);
      }
      require("nodeId", nodeId);
      require("shape", shape);
    }
  }

  /**
   * The application's last checkpoint report: work before {@code atMillis} is not lost by preemption;
   * {@code writeMillis}, how long its checkpoints take to write, if it said.
   */
  public record CheckpointState(AppId appId, long atMillis, String location, OptionalLong writeMillis) {
    public CheckpointState {
      require("appId", appId);
      require("writeMillis", writeMillis);
      if (writeMillis.isPresent() && writeMillis.getAsLong() < 0) {
        throw new InvalidInputException("writeMillis", writeMillis.getAsLong(), "must not be negative");
      }
    }

    /** A report that did not say how long the write took. */
    public CheckpointState(AppId appId, long atMillis, String location) {
      this(appId, atMillis, location, OptionalLong.empty());
    }
  }

  /** Where a request re-queued after preemption should resume from. */
  public record ResumeState(AppId appId, String requestKey, String location) {
    public ResumeState {
      require("appId", appId);
      require("requestKey", requestKey);
      require("location", location);
    }
  }

  /** How long requests have waited for room, and leaf queues been below their fair share, without a break. */
  public record StarvationState(List<WaitingSince> requests, List<BelowFairShareSince> queues) {
    public StarvationState {
      requests = copy("requests", requests);
      queues = copy("queues", queues);
      unique("starving request", requests.stream().map(w -> new RequestRef(w.appId(), w.requestKey())).toList());
      unique("starving queue", queues.stream().map(BelowFairShareSince::queue).toList());
    }
  }

  public record WaitingSince(AppId appId, String requestKey, long sinceMillis) {
    public WaitingSince {
      require("appId", appId);
      require("requestKey", requestKey);
    }
  }

  /** @param queue the leaf queue's full path */
  public record BelowFairShareSince(String queue, long sinceMillis) {
    public BelowFairShareSince {
      require("queue", queue);
    }
  }

  /**
   * A running container that declared its run time: it may be backfilled past a reservation's projected start no
   * later than this, and a reservation on its node is projected to start no earlier. YARN does not keep it.
   */
  public record DeclaredEnd(String container, long endsAtMillis) {
    public DeclaredEnd {
      require("container", container);
    }
  }

  /**
   * What an application of a ranked leaf had run at {@code asOfMillis} (the last change of what it holds, on the
   * engine clock): GPU-unit milliseconds (840 units a GPU) and wall milliseconds. From then on it runs at the rate of
   * what it holds. {@code submittedMillis}: when it was submitted, from which the starvation bound counts its wait;
   * {@code declaredMillis}: the shortest run time its requests declared ({@code 0}: none), which placed requests are
   * not asked for again to tell.
   */
  public record AttainedState(AppId appId, long gpuUnitMillis, long ranMillis, long asOfMillis, long submittedMillis,
      long declaredMillis) {
    public AttainedState {
      require("appId", appId);
      if (gpuUnitMillis < 0 || ranMillis < 0) {
        throw new InvalidInputException("attained", appId, "negative service");
      }
    }
  }

  /**
   * Run times learned for one user and kind ({@code kind} {@code null}: the user's own), oldest first.
   */
  public record LearnedRuntime(String user, String kind, List<Long> runMillis) {
    public LearnedRuntime {
      require("user", user);
      runMillis = copy("runMillis", runMillis);
      for (long r : runMillis) {
        if (r <= 0) {
          throw new InvalidInputException("runMillis", r, "a learned run time is positive");
        }
      }
    }
  }

  private static <T> List<T> copy(String field, List<T> list) {
    require(field, list);
    for (T item : list) {
      require(field + " item", item);
    }
    return List.copyOf(list);
  }

  private static <T> T require(String field, T value) {
    if (value == null) {
      throw new InvalidInputException(field, null, "missing");
    }
    return value;
  }

  private static void positive(String field, long value) {
    if (value < 1) {
      throw new InvalidInputException(field, value, "must be at least 1");
    }
  }

  private static <T> void unique(String what, List<T> keys) {
    Set<T> seen = new HashSet<>();
    for (T k : keys) {
      if (!seen.add(k)) {
        throw new InvalidInputException(what, k, "appears twice");
      }
    }
  }

  /** A node an admin took new work off, and why. */
  public record CordonState(NodeId nodeId, String reason) {
    public CordonState {
      require("nodeId", nodeId);
      require("reason", reason);
    }
  }

  /**
   * One GPU's last reported health, its failures within the quarantine window, its quarantine and its admin cordon.
   *
   * @param health what its node last reported (the evidence is not kept: the node reports it again to a new leader,
   *     and a report of the same state is then no new failure)
   * @param failureMillis when it failed, oldest first
   * @param quarantinedUntilMillis when its quarantine ends; {@code 0}: none
   * @param cordonReason why an admin took it out of service, or {@code null}
   */
  public record GpuFaultState(NodeId nodeId, int gpuIndex, GpuHealth.State health, List<Long> failureMillis,
      long quarantinedUntilMillis, String cordonReason) {
    public GpuFaultState {
      require("nodeId", nodeId);
      require("health", health);
      failureMillis = List.copyOf(failureMillis);
    }
  }

  /** This state with {@code faults} as its GPU faults. */
  public DurableState withGpuFaults(List<GpuFaultState> faults) {
    return new DurableState(nextNoticeId, nextUnitId, units, reservations, reservationBackoffs, reclaims, checkpoints,
        resumeFrom, starvation, declaredEnds, attained, learnedRuntimes, cordons, failures, faults, usageHistory);
  }

  /** This state with {@code usage} as its usage history. */
  public DurableState withUsageHistory(List<UsageState> usage) {
    return new DurableState(nextNoticeId, nextUnitId, units, reservations, reservationBackoffs, reclaims, checkpoints,
        resumeFrom, starvation, declaredEnds, attained, learnedRuntimes, cordons, failures, gpuFaults, usage);
  }
}
