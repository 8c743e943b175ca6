package io.spindle.yarn;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/**
 * Which YARN container is which engine allocation, both ways, and what each lost container was asked as. The engine
 * names allocations by number (notices, reclaims, restarts); YARN names containers. Thread-safe: written by the
 * scheduling thread (hand-outs), the dispatcher (completions, recovery) and IPC handlers (releases).
 */
final class ContainerBook {

  private final Map<ContainerId, Long> allocationOf = new ConcurrentHashMap<>();
  private final Map<Long, ContainerId> containerOf = new ConcurrentHashMap<>();
  /** Lost containers' asks, by allocation, until the engine says whether their gangs restart (then cleared). */
  private final Map<Long, LostAsk> lostAsks = new ConcurrentHashMap<>();
  /** Ids for recovered containers count down from -1, apart from the engine's own (1, 2, …). */
  private final AtomicLong nextRecoveredId = new AtomicLong(-1);
  /** Told of every bound container that ends (its share assignment goes with it). */
  private volatile Consumer<ContainerId> onUnbind = c -> {};

  /**
   * What a lost container was asked as, kept until the engine says whether its gang restarts.
   *
   * @param yarnAsksAgain YARN put it back into the outstanding ask itself (it was lost before its AM acquired it)
   */
  record LostAsk(SchedulerRequestKey key, Resource capability, boolean yarnAsksAgain) {}

  void bind(ContainerId container, long allocation) {
    allocationOf.put(container, allocation);
    containerOf.put(allocation, container);
  }

  /** Binds a container YARN recovered to a fresh allocation id of its own. */
  long bindRecovered(ContainerId container) {
    long allocation = nextRecoveredId.getAndDecrement();
    bind(container, allocation);
    return allocation;
  }

  void onUnbind(Consumer<ContainerId> listener) {
    onUnbind = listener;
  }

  /** Forgets a container that ended; its allocation, if the engine knew it. */
  Optional<Long> unbind(ContainerId container) {
    Long allocation = allocationOf.remove(container);
    if (allocation != null) {
      containerOf.remove(allocation);
      onUnbind.accept(container);
    }
    return Optional.ofNullable(allocation);
  }

  boolean isBound(ContainerId container) {
    return allocationOf.containsKey(container);
  }

  /** The allocation of a container, or {@code null}. */
  Long allocation(ContainerId container) {
    return allocationOf.get(container);
  }

  Optional<ContainerId> container(long allocation) {
    return Optional.ofNullable(containerOf.get(allocation));
  }

  void lost(long allocation, LostAsk ask) {
    lostAsks.put(allocation, ask);
  }

  /** The ask of a lost container, once: asking for it again uses it up. */
  Optional<LostAsk> takeLost(long allocation) {
    return Optional.ofNullable(lostAsks.remove(allocation));
  }
}
