package io.spindle.yarn;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/**
 * What one application has asked for, as last told to the engine: lets {@code allocate()} forward only changes,
 * tells the AM container's ask apart from worker asks (the AM never joins a gang), and marks which worker request
 * forms the gang the application's tags declare.
 */
final class AppAsks {

  /** One request key's ask as forwarded: YARN's key, the per-container resource and the outstanding count. */
  record Ask(SchedulerRequestKey key, Resource capability, int count) {}

  private final SpindleTags tags;
  private final boolean unmanagedAm;
  private final Map<String, Ask> forwarded = new HashMap<>();
  private final Set<String> amKeys = new HashSet<>();
  private boolean attemptAsked;
  private String gangKey;
  private boolean gangStarted;
  /** The last of its containers that exited with a failure status, in words; null if none did. */
  private volatile String lastFailedExit;
  /** Restarts of the gang by the application itself, in words, oldest first; at most {@link #RESTARTS_KEPT}. */
  private final java.util.Deque<String> restarts = new java.util.ArrayDeque<>();
  private int restartCount;
  static final int RESTARTS_KEPT = 5;
  /** Why the adapter holds the application's ask back from the engine (a gang not fully asked for yet), or null. */
  private volatile String heldBack;

  AppAsks(SpindleTags tags, boolean unmanagedAm) {
    this.tags = tags;
    this.unmanagedAm = unmanagedAm;
  }

  static String keyName(SchedulerRequestKey key) {
    return "p" + key.getPriority().getPriority() + "-a" + key.getAllocationRequestId();
  }

  SpindleTags tags() {
    return tags;
  }

  /**
   * For a managed AM, the attempt's first {@code allocate()} comes from the ResourceManager itself and carries only
   * the AM container's ask; every later one comes from the AM.
   */
  synchronized boolean expectsAmAsk(SpindleAppAttempt attempt) {
    boolean first = !unmanagedAm && !attemptAsked;
    attemptAsked = true;
    return first;
  }

  synchronized void markAm(String key) {
    amKeys.add(key);
  }

  /**
   * Whether {@code key} is the AM container's ask. Only until that container is handed out: an AM may ask its workers
   * under the same priority and request id as YARN asked its AM container (Spark's YarnAllocator asks executors at
   * priority 0, the AM's), and those asks are workers'.
   */
  synchronized boolean isAm(String key) {
    return amKeys.contains(key);
  }

  /**
   * Whether this worker request, now asking {@code count} containers, is the application's gang: the first worker
   * request, until the gang has started. With {@code spindle.gang=executors} its size is the count of that request,
   * whatever it is (Spark asks its initial {@code spark.executor.instances} in one request); with
   * {@code spindle.gang.size=N} it is N, and once every member was handed out, an ask for all N again under the same
   * request is a new run of the gang: a launcher that stops a failed gang and asks for it anew (spindle-run) gets
   * it whole again, not member by member.
   */
  synchronized boolean takesGang(String key, int count) {
    if (!tags.gang()) {
      return false;
    }
    if (gangKey == null) {
      gangKey = key;
    }
    if (!gangKey.equals(key)) {
      return false;
    }
    Ask told = forwarded.get(key);
    if (gangStarted && tags.gangSize() > 0 && count == tags.gangSize() && told != null && told.count() == 0) {
      gangStarted = false;
      restartCount++;
      restarts.addLast("Its ApplicationMaster asked for its whole gang of " + count + " again (restart "
          + restartCount + (lastFailedExit == null ? "" : ", after " + lastFailedExit) + ").");
      if (restarts.size() > RESTARTS_KEPT) {
        restarts.removeFirst();
      }
      lastFailedExit = null;
    }
    return !gangStarted;
  }

  /**
   * One of the application's containers exited by itself with a failure status: the likely reason its ApplicationMaster
   * restarts the gang, which Spindle cannot otherwise know.
   */
  void failedExit(String container, int exitStatus, String diagnostics) {
    String first = diagnostics == null ? "" : diagnostics.strip().lines().findFirst().orElse("");
    lastFailedExit = "container " + container + " exited with status " + exitStatus
        + (first.isEmpty() ? "" : " (" + (first.length() > 200 ? first.substring(0, 200) + "..." : first) + ")");
  }

  /** The gang's restarts by its application that Spindle saw, as sentences for {@code why}. */
  synchronized List<String> restarts() {
    return List.copyOf(restarts);
  }

  /** Records the ask; true when it differs from what the engine was last told. */
  synchronized boolean changed(String name, SchedulerRequestKey key, Resource capability, int count) {
    Ask before = forwarded.get(name);
    Ask now = new Ask(key, capability, count);
    forwarded.put(name, now);
    return before == null || before.count() != count || !before.capability().equals(capability);
  }

  /**
   * The requests the engine was told of with containers outstanding that YARN no longer lists: YARN drops a request
   * key from an attempt once an AM's ask for it goes to 0, so the withdrawal never shows as a count of 0. Each is
   * recorded as withdrawn; returns their names.
   */
  synchronized List<String> withdrawnUnless(Set<String> listed) {
    List<String> gone = new ArrayList<>();
    forwarded.forEach((name, ask) -> {
      if (ask.count() > 0 && !listed.contains(name)) {
        gone.add(name);
      }
    });
    for (String name : gone) {
      Ask a = forwarded.get(name);
      forwarded.put(name, new Ask(a.key(), a.capability(), 0));
    }
    return gone;
  }

  synchronized Ask ask(String name) {
    return forwarded.get(name);
  }

  /** One container of the request was handed out: YARN's outstanding count went down by one, so does ours. */
  synchronized void allocated(String name) {
    amKeys.remove(name); // the AM gets one container; what is asked under its key from now on is workers'
    Ask a = forwarded.get(name);
    if (a != null) {
      forwarded.put(name, new Ask(a.key(), a.capability(), Math.max(0, a.count() - 1)));
    }
    if (name.equals(gangKey)) {
      gangStarted = true;
    }
  }

  /**
   * The engine re-queued a preempted container of this request itself, and YARN's outstanding ask holds it again:
   * what the engine was told grows by one, so the AM's own re-ask of it is no change; a gang request is a gang again.
   */
  synchronized void requeued(String name, SchedulerRequestKey key, Resource capability, boolean gangRunsOn) {
    Ask a = forwarded.get(name);
    forwarded.put(name, a == null ? new Ask(key, capability, 1) : new Ask(a.key(), a.capability(), a.count() + 1));
    if (name.equals(gangKey) && !gangRunsOn) {
      gangStarted = false;
    }
  }

  /**
   * Whether this request is an elastic gang's that has started: what it asks from now on is what the gang grows by,
   * sent to the engine as the gang's, not as single containers.
   */
  synchronized boolean growsGang(String key) {
    return tags.elastic() && gangStarted && key.equals(gangKey);
  }

  /** The attempt ended: every outstanding request is withdrawn; returns the keys to cancel in the engine. */
  synchronized List<String> cancelAll() {
    List<String> keys = new ArrayList<>();
    forwarded.forEach((name, ask) -> {
      if (ask.count() > 0) {
        keys.add(name);
      }
    });
    forwarded.clear();
    return keys;
  }

  /** The ask is not told to the engine yet, for this reason, which {@code why} shows. */
  void holdBack(String why) {
    heldBack = why;
  }

  /** The ask reached the engine (or a container was handed out): nothing is held back any more. */
  void noneHeldBack() {
    heldBack = null;
  }

  Optional<String> heldBack() {
    return Optional.ofNullable(heldBack);
  }

  synchronized void newAttempt() {
    attemptAsked = false;
    amKeys.clear();
  }
}
