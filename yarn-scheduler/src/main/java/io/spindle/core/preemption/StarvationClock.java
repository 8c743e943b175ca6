package io.spindle.core.preemption;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How long requests have waited for room, and how long leaf queues have been below their fair share, as seen at
 * the end of each cycle. A request or queue missing from one observation starts again from zero: starvation must
 * be continuous, so a queue that dips below its share for a moment now and then never preempts.
 */
public final class StarvationClock {

  private final Map<String, Long> waitingSince = new LinkedHashMap<>();
  private final Map<String, Long> belowSince = new LinkedHashMap<>();

  /**
   * @param waitingRequests requests (by owner key) that waited for room this cycle
   * @param belowFairShare leaf queues strictly below their fair share with such a request
   */
  public void observe(long nowMillis, Collection<String> waitingRequests, Collection<String> belowFairShare) {
    refresh(waitingSince, waitingRequests, nowMillis);
    refresh(belowSince, belowFairShare, nowMillis);
  }

  private static void refresh(Map<String, Long> since, Collection<String> present, long nowMillis) {
    since.keySet().retainAll(new java.util.HashSet<>(present));
    for (String key : present) {
      since.putIfAbsent(key, nowMillis);
    }
  }

  /** How long the request has waited without a break; 0 if it did not wait this cycle. */
  public long waitedMillis(String request, long nowMillis) {
    Long since = waitingSince.get(request);
    return since == null ? 0 : nowMillis - since;
  }

  /** How long the queue has been below its fair share without a break; 0 if it is not. */
  public long belowMillis(String queue, long nowMillis) {
    Long since = belowSince.get(queue);
    return since == null ? 0 : nowMillis - since;
  }

  /** Forgets a request (it was withdrawn, or replaced by a re-queued one that starts its wait afresh). */
  public void forget(String request) {
    waitingSince.remove(request);
  }
}
