package io.spindle.yarn;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacitySchedulerConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.QueuePath;

/**
 * CapacityScheduler's {@code max-parallel-apps}: how many applications of a queue (counting the queues below it) and
 * of a user may run at once. An application beyond a limit is accepted but does not run — none of its asks reaches
 * the engine, its ApplicationMaster's included — until one ends; then the longest waiting that fits starts. Limits
 * are read with CapacityScheduler's own configuration class ({@code yarn.scheduler.capacity.<queue>.max-parallel-apps},
 * {@code yarn.scheduler.capacity.max-parallel-apps}, {@code yarn.scheduler.capacity.user.<name>.max-parallel-apps},
 * {@code yarn.scheduler.capacity.user.max-parallel-apps}); unset means no limit. Called on the RM's dispatcher
 * thread and from {@code allocate}; synchronized.
 */
final class ParallelApps {

  private record Member(String leafPath, String user) {}

  private final Map<String, Integer> runningByQueue = new HashMap<>();
  private final Map<String, Integer> runningByUser = new HashMap<>();
  private final Map<ApplicationId, Member> running = new HashMap<>();
  private final Map<ApplicationId, Member> waiting = new LinkedHashMap<>();
  private CapacitySchedulerConfiguration limits = new CapacitySchedulerConfiguration(new Configuration(false), false);

  /**
   * New limits (a configuration load). Returns the waiting applications that may run now, in the order they came.
   */
  synchronized List<ApplicationId> configure(Configuration c) {
    limits = new CapacitySchedulerConfiguration(c, false);
    return startWhatFits();
  }

  /**
   * An application was accepted: it runs at once if every limit on its path and its user's has room; a recovered one
   * always does (it ran before the restart). Returns whether it runs.
   */
  synchronized boolean admit(ApplicationId app, String leafPath, String user, boolean recovering) {
    Member m = new Member(leafPath, user);
    if (recovering || fits(m)) {
      start(app, m);
      return true;
    }
    waiting.put(app, m);
    return false;
  }

  synchronized boolean runs(ApplicationId app) {
    return !waiting.containsKey(app);
  }

  /** Why the application does not run yet, in words; empty when it runs. */
  synchronized Optional<String> whyWaiting(ApplicationId app) {
    Member m = waiting.get(app);
    if (m == null) {
      return Optional.empty();
    }
    return Optional.of(fullLimit(m).orElse("applications submitted before it wait for the same limit"));
  }

  /** The application ended. Returns those that may run now, in the order they came. */
  synchronized List<ApplicationId> ended(ApplicationId app) {
    waiting.remove(app);
    Member m = running.remove(app);
    if (m == null) {
      return List.of();
    }
    for (String q : pathOf(m.leafPath())) {
      runningByQueue.merge(q, -1, Integer::sum);
    }
    runningByUser.merge(m.user(), -1, Integer::sum);
    return startWhatFits();
  }

  /**
   * Starts, in the order they came, the waiting applications whose limits have room: a queue's room goes to its
   * longest waiting application, while another user's application is not kept back by one that waits for its
   * user's limit (CapacityScheduler's running-application enforcer does the same).
   */
  private List<ApplicationId> startWhatFits() {
    List<ApplicationId> started = new ArrayList<>();
    for (Iterator<Map.Entry<ApplicationId, Member>> it = waiting.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<ApplicationId, Member> e = it.next();
      if (!fits(e.getValue())) {
        continue;
      }
      it.remove();
      start(e.getKey(), e.getValue());
      started.add(e.getKey());
    }
    return started;
  }

  private void start(ApplicationId app, Member m) {
    running.put(app, m);
    for (String q : pathOf(m.leafPath())) {
      runningByQueue.merge(q, 1, Integer::sum);
    }
    runningByUser.merge(m.user(), 1, Integer::sum);
  }

  private boolean fits(Member m) {
    return fullLimit(m).isEmpty();
  }

  /** The first limit on the member's path or of its user that has no room, in words; empty if all have room. */
  private Optional<String> fullLimit(Member m) {
    for (String q : pathOf(m.leafPath())) {
      Integer max = limits.getMaxParallelAppsForQueue(new QueuePath(q));
      if (max != null && runningByQueue.getOrDefault(q, 0) >= max) {
        return Optional.of("queue " + q + " runs its max-parallel-apps (" + max + ") applications; this one starts "
            + "when one of them ends");
      }
    }
    Integer max = limits.getMaxParallelAppsForUser(m.user());
    if (max != null && runningByUser.getOrDefault(m.user(), 0) >= max) {
      return Optional.of("user " + m.user() + " runs their max-parallel-apps (" + max + ") applications; this one "
          + "starts when one of them ends");
    }
    return Optional.empty();
  }

  /** The leaf and every queue above it. */
  private static List<String> pathOf(String leafPath) {
    List<String> out = new ArrayList<>();
    for (String p = leafPath; p != null; p = p.contains(".") ? p.substring(0, p.lastIndexOf('.')) : null) {
      out.add(p);
    }
    return out;
  }
}
