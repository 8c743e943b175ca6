package io.spindle.core.preemption;

import io.spindle.core.model.RequestRef;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How long requests have waited for room, and how long leaf queues have been below their fair share, as seen at
 * the end of each cycle. A request or queue missing from one observation starts again from zero: starvation must
 * be continuous, so a queue that dips below its share for a moment now and then never preempts.
 */
public final class StarvationClock {

  private final Map<RequestRef, Long> waitingSince = new LinkedHashMap<>();
  private final Map<String, Long> belowSince = new LinkedHashMap<>();

  /**
   * @param waitingRequests requests that waited for room this cycle
   * @param belowFairShare leaf queues strictly below their fair share with such a request
   * @return whether a request or queue started or stopped starving
   */
  public boolean observe(long nowMillis, Collection<RequestRef> waitingRequests, Collection<String> belowFairShare) {
    boolean changed = refresh(waitingSince, waitingRequests, nowMillis);
    return refresh(belowSince, belowFairShare, nowMillis) || changed;
  }

  private static <K> boolean refresh(Map<K, Long> since, Collection<K> present, long nowMillis) {
    boolean changed = since.keySet().retainAll(new java.util.HashSet<>(present));
    for (K key : present) {
      changed |= since.putIfAbsent(key, nowMillis) == null;
    }
    return changed;
  }

  /** Since when each request has waited without a break, oldest first. */
  public Map<RequestRef, Long> waitingSince() {
    return Collections.unmodifiableMap(waitingSince);
  }

  /** Since when each leaf queue has been below its fair share without a break. */
  public Map<String, Long> belowSince() {
    return Collections.unmodifiableMap(belowSince);
  }

  /**
   * Carries on what an earlier leader observed, so that a failover does not restart the starvation delay. An entry
   * whose request or queue is not starving at the next {@link #observe} is dropped then, as any other would be.
   */
  public void resume(Map<RequestRef, Long> waitingSinceByRequest, Map<String, Long> belowSinceByQueue) {
    waitingSince.putAll(waitingSinceByRequest);
    belowSince.putAll(belowSinceByQueue);
  }

  /** How long the request has waited without a break; 0 if it did not wait this cycle. */
  public long waitedMillis(RequestRef request, long nowMillis) {
    Long since = waitingSince.get(request);
    return since == null ? 0 : nowMillis - since;
  }

  /** How long the queue has been below its fair share without a break; 0 if it is not. */
  public long belowMillis(String queue, long nowMillis) {
    Long since = belowSince.get(queue);
    return since == null ? 0 : nowMillis - since;
  }
}
