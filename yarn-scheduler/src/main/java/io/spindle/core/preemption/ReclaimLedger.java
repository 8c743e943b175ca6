package io.spindle.core.preemption;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import java.util.function.ToLongFunction;

/**
 * The reclaims in flight: each accepted {@link Plan} with one {@link CheckpointHandshake} per victim, until the
 * victims' containers have all ended.
 *
 * <p>While a reclaim is active, containers of its victims that end are <em>held</em>: still charged to their queue
 * and still occupying their node in the engine's books, until every victim of the plan has ended. Then the plan is
 * complete and all its capacity returns at once, in one cycle, in which the beneficiary is placed first. Releasing
 * victims one by one would let other requests take the first freed GPUs while the gang the plan was made for still
 * does not fit — and then more would have to be preempted for it.
 *
 * <p>Iteration orders are insertion orders, so the same history gives the same answers.
 */
public final class ReclaimLedger {

  /** One plan being carried out. */
  public static final class InFlight {
    private final long id;
    private final Plan plan;
    private final List<CheckpointHandshake> handshakes;
    private final Set<Long> held = new LinkedHashSet<>();
    private boolean withdrawn;

    InFlight(long id, Plan plan, List<CheckpointHandshake> handshakes) {
      this.id = id;
      this.plan = plan;
      this.handshakes = List.copyOf(handshakes);
    }

    public long id() {
      return id;
    }

    public Need need() {
      return plan.need();
    }

    public List<Candidate> victims() {
      return plan.victims();
    }

    public List<CheckpointHandshake> handshakes() {
      return handshakes;
    }

    /** Containers that ended and are kept charged until the plan completes. */
    public Set<Long> held() {
      return Collections.unmodifiableSet(held);
    }

    public boolean withdrawn() {
      return withdrawn;
    }

    /** Every victim's containers have ended (or were released otherwise). */
    public boolean complete() {
      for (CheckpointHandshake h : handshakes) {
        if (h.state() != CheckpointHandshake.State.WITHDRAWN && !h.allEnded()) {
          return false;
        }
      }
      return true;
    }

    /** Whether some victim's reclaim has started, after which the plan can no longer be withdrawn whole. */
    public boolean reclaimStarted() {
      for (CheckpointHandshake h : handshakes) {
        if (h.wasReclaimed()) {
          return true;
        }
      }
      return false;
    }
  }

  private final Map<Long, InFlight> plans = new LinkedHashMap<>();
  private final Map<Long, CheckpointHandshake> byNotice = new LinkedHashMap<>();
  private final Map<Long, CheckpointHandshake> byAllocation = new LinkedHashMap<>();
  private final Map<Long, InFlight> planOfNotice = new LinkedHashMap<>();
  private long nextNoticeId = 1;
  private long nextPlanId = 1;

  /**
   * Starts a plan: one notice per victim, due {@code graceMillis} from now, extensions bounded by the victim's queue.
   *
   * @param maxExtensions per leaf queue path: extensions allowed on one notice to an application of that queue
   * @param maxExtensionMillis per leaf queue path: the longest one extension may be
   * @param reason why each victim was chosen, for people
   */
  public InFlight open(Plan plan, long nowMillis, long graceMillis, ToIntFunction<String> maxExtensions,
      ToLongFunction<String> maxExtensionMillis, Function<Candidate, String> reason) {
    List<CheckpointHandshake> handshakes = new ArrayList<>();
    for (Candidate v : plan.victims()) {
      handshakes.add(new CheckpointHandshake(nextNoticeId++, v.unitId(), v.appId(), v.requestKey(),
          v.allocationIds(), nowMillis, graceMillis, maxExtensions.applyAsInt(v.queue()),
          maxExtensionMillis.applyAsLong(v.queue()), reason.apply(v)));
    }
    InFlight p = new InFlight(nextPlanId++, plan, handshakes);
    plans.put(p.id, p);
    for (CheckpointHandshake h : handshakes) {
      byNotice.put(h.noticeId(), h);
      planOfNotice.put(h.noticeId(), p);
      for (long id : h.allocationIds()) {
        byAllocation.put(id, h);
      }
    }
    return p;
  }

  /**
   * Puts a plan back as it stood before a failover of the scheduler: its handshakes as they were
   * ({@link CheckpointHandshake#resume}), the containers it holds, whether it was withdrawn. Its notice ids are
   * kept, and none is ever issued again. Refused if one of them is in the ledger already.
   */
  public InFlight resume(Plan plan, List<CheckpointHandshake> handshakes, Collection<Long> held, boolean withdrawn) {
    for (CheckpointHandshake h : handshakes) {
      if (byNotice.containsKey(h.noticeId())) {
        throw new IllegalArgumentException("notice " + h.noticeId() + " is in the ledger already");
      }
    }
    InFlight p = new InFlight(nextPlanId++, plan, handshakes);
    p.withdrawn = withdrawn;
    p.held.addAll(held);
    plans.put(p.id, p);
    for (CheckpointHandshake h : handshakes) {
      byNotice.put(h.noticeId(), h);
      planOfNotice.put(h.noticeId(), p);
      for (long id : h.allocationIds()) {
        byAllocation.put(id, h);
      }
      nextNoticeId = Math.max(nextNoticeId, h.noticeId() + 1);
    }
    return p;
  }

  /** The id the next notice will get. Applications key their answers by notice id: one is never issued twice. */
  public long nextNoticeId() {
    return nextNoticeId;
  }

  /** Issues no notice id below {@code next} from now on: the ids an earlier leader issued stay its own. */
  public void skipNoticeIdsBelow(long next) {
    nextNoticeId = Math.max(nextNoticeId, next);
  }

  /** The handshake of a live notice, if it is still in the ledger. */
  public Optional<CheckpointHandshake> notice(long noticeId) {
    return Optional.ofNullable(byNotice.get(noticeId));
  }

  /** The plan a live notice belongs to. */
  public InFlight planOf(long noticeId) {
    return planOfNotice.get(noticeId);
  }

  /**
   * A container ended. Returns {@code true} if the ledger holds it: it belongs to a victim of an active plan, so
   * the engine keeps it charged until the plan completes. {@code false}: the engine releases it now.
   */
  public boolean containerEnded(long allocationId) {
    CheckpointHandshake h = byAllocation.get(allocationId);
    if (h == null || !h.containerEnded(allocationId)) {
      return false;
    }
    InFlight p = planOfNotice.get(h.noticeId());
    if (p.withdrawn || h.state() == CheckpointHandshake.State.WITHDRAWN) {
      return false;
    }
    p.held.add(allocationId);
    return true;
  }

  /** A victim's container was released by other means (its node or its application went): nothing to hold. */
  public void containerGone(long allocationId) {
    CheckpointHandshake h = byAllocation.get(allocationId);
    if (h != null) {
      h.containerEnded(allocationId);
    }
  }

  /**
   * Withdraws a plan whose beneficiary no longer needs it. Victims not yet reclaimed are withdrawn (returned, so
   * their notices can be cancelled); victims already being reclaimed go on, but their capacity is no longer held.
   * Returns the withdrawn handshakes; the plan's held containers are to be released now ({@link InFlight#held}).
   */
  public List<CheckpointHandshake> withdraw(InFlight p) {
    List<CheckpointHandshake> cancelled = new ArrayList<>();
    p.withdrawn = true;
    for (CheckpointHandshake h : p.handshakes) {
      if (h.withdraw()) {
        cancelled.add(h);
      }
    }
    return cancelled;
  }

  /**
   * Takes a finished plan (complete, or withdrawn with nothing left to wait for) out of the ledger; {@code false}
   * if it was already out.
   */
  public boolean remove(InFlight p) {
    if (plans.remove(p.id) == null) {
      return false;
    }
    for (CheckpointHandshake h : p.handshakes) {
      byNotice.remove(h.noticeId());
      planOfNotice.remove(h.noticeId());
      for (long id : h.allocationIds()) {
        byAllocation.remove(id, h);
      }
    }
    return true;
  }

  /** Whether nothing of a withdrawn plan is left to wait for. */
  public static boolean settled(InFlight p) {
    for (CheckpointHandshake h : p.handshakes) {
      if (h.state() == CheckpointHandshake.State.RECLAIMING) {
        return false;
      }
    }
    return true;
  }

  /** Plans in the order they were made. */
  public List<InFlight> plans() {
    return new ArrayList<>(plans.values());
  }

  /** Running units that are victims of a plan in the ledger: never chosen again (no double preemption). */
  public Set<Long> victimUnits() {
    Set<Long> out = new LinkedHashSet<>();
    for (InFlight p : plans.values()) {
      for (CheckpointHandshake h : p.handshakes) {
        if (h.state() != CheckpointHandshake.State.WITHDRAWN) {
          out.add(h.unitId());
        }
      }
    }
    return out;
  }

  /** The earliest deadline among notices not yet answered DONE nor reclaimed, if any: when a cycle is due. */
  public OptionalLong nextDeadlineMillis() {
    long next = Long.MAX_VALUE;
    for (CheckpointHandshake h : byNotice.values()) {
      if (h.state() == CheckpointHandshake.State.NOTICED) {
        next = Math.min(next, h.deadlineMillis());
      }
    }
    return next == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(next);
  }

  public boolean isEmpty() {
    return plans.isEmpty();
  }
}
