package io.spindle.launcher;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Which of a gang's containers run the job, which wait to join and which Spindle takes back, and when the job should
 * restart at another size. Container ids and an injected clock only: the ApplicationMaster allocates, starts and
 * stops containers; this says what to do next, so the rules are testable without YARN.
 *
 * <p>A rigid job is the case {@code min == max}: it starts when all its containers are there and never changes size.
 * An elastic job starts once {@code min} are there and none has arrived for {@link #SETTLE}: Spindle hands out the
 * members above {@code min} while GPUs are idle, often in the next allocations, and starting at once would cost a
 * restart seconds later. While it runs:
 * <ul>
 *   <li>containers that arrive make it {@link Change#GROW}: the workers are asked to checkpoint and the job restarts
 *       at the larger size from that checkpoint, or from the newest one after {@link #GROW_WAIT} without one (a script
 *       that never answers must not keep idle GPUs for ever);
 *   <li>a resize notice from Spindle names containers to give back: the job {@link Change#SHRINK}s the same way once
 *       the checkpoint is written, and the named containers wait, idle, for Spindle to reclaim them.
 * </ul>
 * Sizes above {@code min} come in whole {@code step}s; a container that does not make a whole step waits.
 */
public final class ElasticGang {

  /** How long an elastic gang waits after the latest arrival before its first start below its full size. */
  public static final Duration SETTLE = Duration.ofSeconds(3);
  /** How long a grow waits for the workers' checkpoint before it restarts from the newest one anyway. */
  public static final Duration GROW_WAIT = Duration.ofMinutes(2);
  /**
   * How long after Spindle closed a resize notice the gang waits for the named containers to be reclaimed before it
   * takes the notice as withdrawn: a notice closes both when Spindle reclaims at the deadline (the containers' ends
   * reach the ApplicationMaster a heartbeat later) and when it no longer needs them.
   */
  public static final Duration WITHDRAWN_AFTER = Duration.ofSeconds(30);

  /** A change of size the gang is waiting to make (a checkpoint first). */
  public enum Change { NONE, GROW, SHRINK }

  /** What a container that ended was to the gang. */
  public enum Role {
    /** It ran the current run (or was starting to). */
    MEMBER,
    /** It was allocated and waited to join the next run. */
    WAITING,
    /** Spindle had asked for it back. */
    DEPARTING,
    /** Not this gang's (a stopped gang's, or released). */
    UNKNOWN
  }

  private final int min;
  private final int max;
  private final int step;
  private final LongSupplier clockMillis;
  private final Set<String> members = new LinkedHashSet<>();
  private final Set<String> waiting = new LinkedHashSet<>();
  private final Set<String> departing = new LinkedHashSet<>();
  private boolean started;
  private long lastArrivalMillis;
  private Change change = Change.NONE;
  private long changeSinceMillis;
  private long shrinkNotice = -1;
  private final Set<String> shrinkIds = new LinkedHashSet<>();
  private long shrinkClosedMillis = -1;

  public ElasticGang(int min, int max, int step, LongSupplier clockMillis) {
    if (min < 1 || min > max || step < 1 || (max - min) % step != 0) {
      throw new IllegalArgumentException("a gang of " + min + ".." + max + " in steps of " + step);
    }
    this.min = min;
    this.max = max;
    this.step = step;
    this.clockMillis = clockMillis;
  }

  public int min() {
    return min;
  }

  public int max() {
    return max;
  }

  /** Whether one more container is wanted: those running and waiting are fewer than the most. */
  public boolean wantsMore() {
    return members.size() + waiting.size() < max;
  }

  /** A container was allocated to the gang. */
  public void arrived(String id) {
    waiting.add(id);
    lastArrivalMillis = clockMillis.getAsLong();
    if (started && change == Change.NONE && nextSize() > members.size()) {
      change = Change.GROW;
      changeSinceMillis = lastArrivalMillis;
    }
  }

  /** Before the first run: whether to start it now. */
  public boolean readyToStart() {
    int n = nextSize();
    return !started && n >= min && (n == max
        || clockMillis.getAsLong() - lastArrivalMillis >= SETTLE.toMillis());
  }

  /** Whether a run has started on this gang. */
  public boolean started() {
    return started;
  }

  /** The containers the next run may use: those running and waiting, less those Spindle takes back. */
  public List<String> candidates() {
    List<String> out = new ArrayList<>();
    members.stream().filter(c -> !departing.contains(c)).forEach(out::add);
    waiting.stream().filter(c -> !departing.contains(c)).forEach(out::add);
    return out;
  }

  /** How many of {@link #candidates()} the next run uses: whole steps above the minimum, at most max; 0 below min. */
  public int nextSize() {
    int n = Math.min(candidates().size(), max);
    return n < min ? 0 : min + (n - min) / step * step;
  }

  /** A run starts on {@code chosen}: {@link #nextSize()} of the candidates. The other candidates wait. */
  public void started(Collection<String> chosen) {
    List<String> all = candidates();
    if (chosen.size() != nextSize() || !all.containsAll(chosen)) {
      throw new IllegalArgumentException("a run of " + nextSize() + " of " + all + ", not " + chosen);
    }
    members.clear();
    members.addAll(chosen);
    waiting.clear();
    all.stream().filter(c -> !members.contains(c)).forEach(waiting::add);
    started = true;
    change = Change.NONE;
    shrinkNotice = -1;
    shrinkIds.clear();
    shrinkClosedMillis = -1;
  }

  /** The containers of the current run. */
  public Set<String> members() {
    return Set.copyOf(members);
  }

  /** The containers Spindle takes back that have not ended yet. */
  public Set<String> departing() {
    return Set.copyOf(departing);
  }

  public Change change() {
    return change;
  }

  /** The resize notice the gang waits to shrink for; -1 when none. */
  public long shrinkNotice() {
    return shrinkNotice;
  }

  /**
   * Spindle's resize notice {@code noticeId}: {@code ids} go back. Returns whether the running workers must
   * checkpoint and restart without them; false when none of them runs the job (they were waiting, or no run has
   * started), so the notice can be answered at once.
   */
  public boolean resize(long noticeId, Collection<String> ids) {
    boolean runners = false;
    for (String id : ids) {
      if (members.contains(id) || waiting.contains(id)) {
        departing.add(id);
        runners |= members.contains(id);
      }
    }
    if (runners && shrinkNotice != noticeId) {
      change = Change.SHRINK;
      changeSinceMillis = clockMillis.getAsLong();
      shrinkNotice = noticeId;
      shrinkIds.clear();
      shrinkIds.addAll(ids);
      shrinkClosedMillis = -1;
    }
    return runners;
  }

  /** Spindle closed notice {@code noticeId}: it reclaimed at the deadline, or withdrew it (see below). */
  public void noticeClosed(long noticeId) {
    if (change == Change.SHRINK && shrinkNotice == noticeId && shrinkClosedMillis < 0) {
      shrinkClosedMillis = clockMillis.getAsLong();
    }
  }

  /**
   * Whether the shrink waited for was withdrawn: its notice closed {@link #WITHDRAWN_AFTER} ago and the running
   * containers it named still run. Then nobody leaves: they stay members, and the gang no longer waits to shrink.
   */
  public boolean cancelWithdrawnShrink() {
    if (change != Change.SHRINK || shrinkClosedMillis < 0
        || clockMillis.getAsLong() - shrinkClosedMillis < WITHDRAWN_AFTER.toMillis()) {
      return false;
    }
    departing.removeAll(shrinkIds);
    change = Change.NONE;
    shrinkNotice = -1;
    shrinkIds.clear();
    shrinkClosedMillis = -1;
    if (nextSize() > members.size()) {
      change = Change.GROW;
      changeSinceMillis = clockMillis.getAsLong();
    }
    return true;
  }

  /** Whether a grow has waited {@link #GROW_WAIT} for a checkpoint. */
  public boolean growDue() {
    return change == Change.GROW && clockMillis.getAsLong() - changeSinceMillis >= GROW_WAIT.toMillis();
  }

  /** Container {@code id} ended (or was taken back); what it was. It is no longer the gang's. */
  public Role ended(String id) {
    if (departing.remove(id)) {
      members.remove(id);
      waiting.remove(id);
      return Role.DEPARTING;
    }
    if (waiting.remove(id)) {
      return Role.WAITING;
    }
    return members.contains(id) ? Role.MEMBER : Role.UNKNOWN;
  }
}
