package io.spindle.yarn;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacitySchedulerConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.QueuePath;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * Which accepted applications run, as CapacityScheduler activates them. An application beyond a limit is accepted but
 * does not run — none of its asks reaches the engine, its ApplicationMaster's included — until room frees; then the
 * longest waiting that fits starts. The limits:
 * <ul>
 *   <li>{@code max-parallel-apps}: how many applications of a queue (counting the queues below it) and of a user may
 *       run at once ({@code yarn.scheduler.capacity.<queue>.max-parallel-apps},
 *       {@code yarn.scheduler.capacity.max-parallel-apps}, {@code yarn.scheduler.capacity.user.<name>.max-parallel-apps},
 *       {@code yarn.scheduler.capacity.user.max-parallel-apps}; unset: no limit);
 *   <li>{@code maximum-am-resource-percent}: the ApplicationMasters of a leaf's running applications together hold at
 *       most that share of the larger of the leaf's guarantee and its current limit ({@link QueueRegistry#amLimit}),
 *       compared with CapacityScheduler's configured resource calculator (memory alone by default); as in CapacityScheduler the first application of a
 *       leaf always runs, so a small queue is never blocked for good, and an unmanaged AM counts nothing; and each
 *       user's AMs in the leaf hold at most that user's share of it ({@link #userAmLimit}).
 * </ul>
 * Read with CapacityScheduler's own configuration class, so defaults and inheritance are its own. Called on the RM's
 * dispatcher thread and from {@code allocate}; synchronized.
 */
final class AppActivation {

  private record Member(String leafPath, String user, Resource am) {}

  /** One user in one leaf. */
  private record LeafUser(String leafPath, String user) {}

  private final Function<String, Resource> amLimit;
  private final Supplier<Resource> cluster;
  private final Map<String, Resource> amUsed = new HashMap<>();
  private final Map<LeafUser, Resource> userAmUsed = new HashMap<>();

  /**
   * @param amLimit the AM resource limit of a leaf by path, now
   * @param cluster the cluster's resources now, against which the calculator compares
   */
  AppActivation(Function<String, Resource> amLimit, Supplier<Resource> cluster) {
    this.amLimit = amLimit;
    this.cluster = cluster;
  }

  private final Map<String, Integer> runningByQueue = new HashMap<>();
  private final Map<String, Integer> runningByUser = new HashMap<>();
  private final Map<ApplicationId, Member> running = new HashMap<>();
  private final Map<ApplicationId, Member> waiting = new LinkedHashMap<>();
  private CapacitySchedulerConfiguration limits = new CapacitySchedulerConfiguration(new Configuration(false), false);
  private ResourceCalculator calculator = limits.getResourceCalculator();

  /**
   * New limits (a configuration load). Returns the waiting applications that may run now, in the order they came.
   */
  synchronized List<ApplicationId> configure(Configuration c) {
    limits = new CapacitySchedulerConfiguration(c, false);
    calculator = limits.getResourceCalculator();
    return startWhatFits();
  }

  /**
   * An application was accepted: it runs at once if every limit on its path and its user's has room; a recovered one
   * always does (it ran before the restart). Returns whether it runs.
   *
   * @param am what its ApplicationMaster's container asks; none for an unmanaged AM
   */
  synchronized boolean admit(ApplicationId app, String leafPath, String user, Resource am, boolean recovering) {
    Member m = new Member(leafPath, user, am == null ? Resources.none() : am);
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
    amUsed.computeIfPresent(m.leafPath(), (q, used) -> Resources.subtract(used, m.am()));
    userAmUsed.computeIfPresent(new LeafUser(m.leafPath(), m.user()), (q, used) -> Resources.subtract(used, m.am()));
    return startWhatFits();
  }

  /** The cluster changed size (a node came, went or was resized): AM limits moved. Returns who may run now. */
  synchronized List<ApplicationId> clusterChanged() {
    return waiting.isEmpty() ? List.of() : startWhatFits();
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
    amUsed.merge(m.leafPath(), m.am(), Resources::add);
    userAmUsed.merge(new LeafUser(m.leafPath(), m.user()), m.am(), Resources::add);
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
    return amLimitExceeded(m);
  }

  /** CapacityScheduler's activation check of the AM limit, in its words (its application diagnostics). */
  private Optional<String> amLimitExceeded(Member m) {
    if (runningByQueue.getOrDefault(m.leafPath(), 0) == 0 || Resources.none().equals(m.am())) {
      return Optional.empty(); // The first application of a leaf always runs; an unmanaged AM takes no container.
    }
    Resource used = amUsed.getOrDefault(m.leafPath(), Resources.none());
    Resource limit = amLimit.apply(m.leafPath());
    Resource userUsed = userAmUsed.getOrDefault(new LeafUser(m.leafPath(), m.user()), Resources.none());
    Resource userLimit = userAmLimit(m, limit);
    if (!Resources.lessThanOrEqual(calculator, cluster.get(), Resources.add(used, m.am()), limit)) {
      return Optional.of("Queue's AM resource limit exceeded. Details : AM Resource Request = " + m.am()
          + "; Queue Resource Limit for AM = " + limit + "; Queue AM Resource Usage = " + used + "; queue "
          + m.leafPath() + " (maximum-am-resource-percent); this one starts when an application there ends");
    }
    if (!Resources.lessThanOrEqual(calculator, cluster.get(), Resources.add(userUsed, m.am()), userLimit)) {
      return Optional.of("User's AM resource limit exceeded. Details : AM Resource Request = " + m.am()
          + "; User AM Resource Limit of the queue = " + userLimit + "; User AM Resource Used = " + userUsed
          + "; user " + m.user() + " in queue " + m.leafPath() + " (maximum-am-resource-percent with "
          + "minimum-user-limit-percent and user-limit-factor); this one starts when one of their applications ends");
    }
    return Optional.empty();
  }

  /**
   * CapacityScheduler's per-user share of a leaf's AM limit: the leaf's AM limit times the larger of
   * {@code minimum-user-limit-percent} and 1/(users with applications in the leaf), times {@code user-limit-factor},
   * at most the leaf's AM limit ({@code user-limit-factor} -1: the leaf's AM limit).
   */
  private Resource userAmLimit(Member m, Resource queueLimit) {
    QueuePath path = new QueuePath(m.leafPath());
    float factor = limits.getUserLimitFactor(path);
    if (factor == -1) {
      return queueLimit;
    }
    Set<String> users = new HashSet<>();
    users.add(m.user());
    for (Map<ApplicationId, Member> members : List.of(running, waiting)) {
      members.values().stream().filter(x -> x.leafPath().equals(m.leafPath())).forEach(x -> users.add(x.user()));
    }
    double share = Math.max(limits.getUserLimit(path) / 100.0, 1.0 / users.size());
    return Resources.componentwiseMin(Resources.multiply(queueLimit, share * factor), queueLimit);
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
