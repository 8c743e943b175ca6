package io.spindle.yarn;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;

/**
 * The containers each application has been asked to give back, which every {@code allocate()} answer carries as
 * YARN's {@code StrictPreemptionContract} until the containers are gone. Written by the scheduling thread, read by
 * the AM's IPC handler: a concurrent map of immutable sets.
 */
final class PreemptionNotices {

  private final Map<ApplicationId, Set<ContainerId>> byApp = new ConcurrentHashMap<>();

  /** Adds {@code containers} to the application's contract; returns those not in it before. */
  Set<ContainerId> announce(ApplicationId app, Set<ContainerId> containers) {
    Set<ContainerId> fresh = new HashSet<>(containers);
    byApp.merge(app, Set.copyOf(containers), (a, b) -> {
      fresh.removeAll(a);
      Set<ContainerId> both = new HashSet<>(a);
      both.addAll(b);
      return Set.copyOf(both);
    });
    return fresh;
  }

  /** The strict contract for {@code app}'s next allocate answer; {@code null} (YARN's "none") when nothing is asked. */
  Set<ContainerId> contract(ApplicationId app) {
    return byApp.get(app);
  }

  /** A container that ended (reclaimed, finished, lost) is no longer part of any contract. */
  void ended(ContainerId container) {
    ApplicationId app = container.getApplicationAttemptId().getApplicationId();
    byApp.computeIfPresent(app, (k, set) -> {
      if (!set.contains(container)) {
        return set;
      }
      Set<ContainerId> rest = new HashSet<>(set);
      rest.remove(container);
      return rest.isEmpty() ? null : Set.copyOf(rest);
    });
  }

  void forget(ApplicationId app) {
    byApp.remove(app);
  }
}
