package io.spindle.core.preemption;

import io.spindle.core.model.AppId;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The checkpoint handshake with one victim (a gang or a single container), on the engine's clock:
 *
 * <pre>
 *   NOTICED --DONE--------------------------> RECLAIM_DUE --reclaim()--> RECLAIMING --all containers ended--> ENDED
 *      |  \--EXTEND (granted: deadline moves; refused: it holds)--> NOTICED
 *      |--clock reaches the deadline ---------------------------------> (due) --reclaim()--> RECLAIMING
 *      |--withdraw() (the beneficiary no longer needs it) ------------> WITHDRAWN
 *      \--every container ended on its own ----------------------------> ENDED (nothing to reclaim)
 * </pre>
 *
 * A handshake never goes back: once RECLAIMING, the containers are being killed; answers after that are ignored.
 * The deadline only moves later, by granted extensions, each at most {@code maxExtensionMillis}, at most
 * {@code maxExtensions} of them; so the longest a victim can hold out is
 * {@code grace + maxExtensions * maxExtensionMillis}.
 */
public final class CheckpointHandshake {

  public enum State { NOTICED, RECLAIM_DUE, RECLAIMING, WITHDRAWN, ENDED }

  /** What an answer did. */
  public enum Outcome { DONE, GRANTED, REFUSED, IGNORED }

  private final long noticeId;
  private final long unitId;
  private final AppId appId;
  private final String requestKey;
  private final List<Long> allocationIds;
  private final Set<Long> running;
  private final long noticedAtMillis;
  private final int maxExtensions;
  private final long maxExtensionMillis;
  private final String reason;
  private long deadlineMillis;
  private int extensionsUsed;
  private String checkpointLocation;
  private State state = State.NOTICED;
  /** Why the reclaim happened, once it did with containers still running; {@code null} before. */
  private String reclaimReason;

  /**
   * Everything a handshake is, by value, to carry it across a failover of the scheduler: {@link #saved()} on the old
   * leader, {@link #resume} on the new one (with the containers under the ids they have there).
   *
   * @param allocationIds every container the notice names
   * @param running those of them that have not ended
   * @param reclaimReason why the reclaim happened, once it did; {@code null} before
   */
  public record Saved(long noticeId, long unitId, AppId appId, String requestKey, List<Long> allocationIds,
      List<Long> running, long noticedAtMillis, long deadlineMillis, int extensionsGranted, int maxExtensions,
      long maxExtensionMillis, String reason, String checkpointLocation, State state, String reclaimReason) {

    public Saved {
      allocationIds = List.copyOf(allocationIds);
      running = List.copyOf(running);
      Objects.requireNonNull(state, "state");
      if (!allocationIds.containsAll(running)) {
        throw new IllegalArgumentException("notice " + noticeId + ": running containers " + running
            + " are not all among its containers " + allocationIds);
      }
      if (extensionsGranted < 0 || extensionsGranted > Math.max(0, maxExtensions) || maxExtensionMillis < 0) {
        throw new IllegalArgumentException("notice " + noticeId + ": " + extensionsGranted + " extensions granted of "
            + maxExtensions + " allowed (at most " + maxExtensionMillis + " ms each)");
      }
      if (deadlineMillis < noticedAtMillis) {
        throw new IllegalArgumentException("notice " + noticeId + ": deadline " + deadlineMillis
            + " ms before the notice (" + noticedAtMillis + " ms)");
      }
      if ((state == State.RECLAIMING) != (reclaimReason != null) && state != State.ENDED) {
        throw new IllegalArgumentException("notice " + noticeId + " in state " + state
            + (reclaimReason == null ? " without" : " with") + " a reclaim reason");
      }
    }
  }

  /** @param reason why the victim was chosen, for people; kept for every issue of the notice */
  public CheckpointHandshake(long noticeId, long unitId, AppId appId, String requestKey, List<Long> allocationIds,
      long nowMillis, long graceMillis, int maxExtensions, long maxExtensionMillis, String reason) {
    this.noticeId = noticeId;
    this.unitId = unitId;
    this.appId = appId;
    this.requestKey = requestKey;
    this.allocationIds = List.copyOf(allocationIds);
    this.running = new LinkedHashSet<>(allocationIds);
    this.noticedAtMillis = nowMillis;
    this.deadlineMillis = nowMillis + graceMillis;
    this.maxExtensions = maxExtensions;
    this.maxExtensionMillis = maxExtensionMillis;
    this.reason = reason;
  }

  /**
   * The handshake as it stood when saved. Containers that ended since do no longer run: a handshake whose victim has
   * no container left ends (as {@link #containerEnded} would have ended it), unless it was withdrawn.
   */
  public static CheckpointHandshake resume(Saved s) {
    CheckpointHandshake h = new CheckpointHandshake(s.noticeId(), s.unitId(), s.appId(), s.requestKey(),
        s.allocationIds(), s.noticedAtMillis(), s.deadlineMillis() - s.noticedAtMillis(), s.maxExtensions(),
        s.maxExtensionMillis(), s.reason());
    h.running.retainAll(s.running());
    h.deadlineMillis = s.deadlineMillis();
    h.extensionsUsed = s.extensionsGranted();
    h.checkpointLocation = s.checkpointLocation();
    h.reclaimReason = s.reclaimReason();
    h.state = h.running.isEmpty() && s.state() != State.WITHDRAWN ? State.ENDED : s.state();
    return h;
  }

  /** This handshake by value; see {@link Saved}. */
  public Saved saved() {
    return new Saved(noticeId, unitId, appId, requestKey, allocationIds, List.copyOf(running), noticedAtMillis,
        deadlineMillis, extensionsUsed, maxExtensions, maxExtensionMillis, reason, checkpointLocation, state,
        reclaimReason);
  }

  /**
   * Applies the application's answer at {@code nowMillis}. An extension of {@code requestedMillis} (0 or less: the
   * most allowed) moves the deadline by at most {@code maxExtensionMillis}, while extensions are left.
   */
  public Outcome answer(CheckpointAnswer answer, long requestedMillis, String location, long nowMillis) {
    if (state != State.NOTICED && !(state == State.RECLAIM_DUE && answer == CheckpointAnswer.DONE)) {
      return Outcome.IGNORED;
    }
    if (location != null && !location.isBlank()) {
      checkpointLocation = location;
    }
    if (answer == CheckpointAnswer.DONE) {
      state = State.RECLAIM_DUE;
      return Outcome.DONE;
    }
    if (nowMillis >= deadlineMillis || extensionsUsed >= maxExtensions || maxExtensionMillis == 0) {
      // Too late, or none left: the deadline holds.
      return Outcome.REFUSED;
    }
    long granted = requestedMillis <= 0 ? maxExtensionMillis : Math.min(requestedMillis, maxExtensionMillis);
    extensionsUsed++;
    deadlineMillis += granted;
    return Outcome.GRANTED;
  }

  /** Whether the victim should be reclaimed now: it said DONE, or its deadline has come. */
  public boolean dueAt(long nowMillis) {
    return state == State.RECLAIM_DUE || (state == State.NOTICED && nowMillis >= deadlineMillis);
  }

  /** The beneficiary no longer needs the victim; only possible before the reclaim started. */
  public boolean withdraw() {
    if (state == State.NOTICED || state == State.RECLAIM_DUE) {
      state = State.WITHDRAWN;
      return true;
    }
    return false;
  }

  /** One of the victim's containers ended (killed, completed, its node lost). True if it was one still running. */
  public boolean containerEnded(long allocationId) {
    boolean was = running.remove(allocationId);
    if (running.isEmpty() && state != State.WITHDRAWN) {
      state = State.ENDED;
    }
    return was;
  }

  /** Every container of the victim has ended. */
  public boolean allEnded() {
    return running.isEmpty();
  }

  /** How the reason of a reclaim at the deadline (no DONE answer) begins; see {@link #reclaimedAtDeadline}. */
  private static final String DEADLINE_PASSED = "the checkpoint deadline";

  /**
   * Whether a {@code Decision.Preempt} with this reason reclaims a victim that never answered DONE (its deadline
   * passed), rather than one that did: for metrics, which count the two apart.
   */
  public static boolean reclaimedAtDeadline(String preemptReason) {
    return preemptReason != null && preemptReason.startsWith(DEADLINE_PASSED);
  }

  /**
   * Starts the reclaim of a due handshake: the containers still running are to be killed. Returns why, for the
   * Preempt decision; {@code null} when every container had already ended on its own and nothing is reclaimed.
   */
  public String reclaim() {
    if (state != State.NOTICED && state != State.RECLAIM_DUE) {
      throw new IllegalStateException("notice " + noticeId + " cannot be reclaimed in state " + state);
    }
    if (running.isEmpty()) {
      state = State.ENDED;
      return null;
    }
    reclaimReason = state == State.RECLAIM_DUE ? "the application reported its checkpoint done"
        : DEADLINE_PASSED + " (" + deadlineMillis + " ms) passed without a DONE answer" + (extensionsUsed == 0 ? ""
            : ", after " + extensionsUsed + (extensionsUsed == 1 ? " extension" : " extensions"));
    state = State.RECLAIMING;
    return reclaimReason;
  }

  /** Why the victim was reclaimed, once it was; {@code null} before, or if it never was. */
  public String reclaimReason() {
    return reclaimReason;
  }

  /** Whether the victim was preempted (as opposed to ending on its own or being withdrawn first). */
  public boolean wasReclaimed() {
    return reclaimReason != null;
  }

  public long noticeId() {
    return noticeId;
  }

  public long unitId() {
    return unitId;
  }

  public AppId appId() {
    return appId;
  }

  public String requestKey() {
    return requestKey;
  }

  /** Every container the notice named. */
  public List<Long> allocationIds() {
    return allocationIds;
  }

  /** The named containers that have not ended yet, in notice order. */
  public List<Long> runningAllocationIds() {
    return List.copyOf(running);
  }

  public long noticedAtMillis() {
    return noticedAtMillis;
  }

  public long deadlineMillis() {
    return deadlineMillis;
  }

  public int extensionsLeft() {
    return Math.max(0, maxExtensions - extensionsUsed);
  }

  public int extensionsGranted() {
    return extensionsUsed;
  }

  public int maxExtensions() {
    return maxExtensions;
  }

  public long maxExtensionMillis() {
    return maxExtensionMillis;
  }

  public String reason() {
    return reason;
  }

  /** Where the application said its checkpoint is, or {@code null}. */
  public String checkpointLocation() {
    return checkpointLocation;
  }

  public State state() {
    return state;
  }
}
