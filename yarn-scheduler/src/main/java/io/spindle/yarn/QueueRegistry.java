package io.spindle.yarn;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import io.spindle.core.engine.EngineStatus;
import io.spindle.core.engine.QueueSnapshot;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.queue.Capacity;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacitySchedulerConfiguration;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The queue tree as YARN sees it: one {@link SpindleQueue} per queue with its metrics and ACLs, who may submit where,
 * and the figures {@code yarn queue -status} prints, read from the engine's published status (never the live engine).
 * Replaced whole on each configuration load; readers see one tree or the next, never a mix.
 */
final class QueueRegistry {

  private static final Logger LOG = LoggerFactory.getLogger(QueueRegistry.class);

  static final String ACL_SUBMIT = "acl_submit_applications";
  static final String ACL_ADMINISTER = "acl_administer_queue";

  /** One consistent generation: the parsed tree, its YARN queues by path, and the configuration they came from. */
  private record Generation(QueueTree tree, Map<String, SpindleQueue> byPath, Configuration conf) {}

  private final Supplier<EngineStatus> published;
  private final Supplier<Priority> clusterMaxPriority;
  private volatile Generation current = new Generation(null, Map.of(), null);
  private volatile ApplicationPriorities priorities;

  QueueRegistry(Supplier<EngineStatus> published, Supplier<Priority> clusterMaxPriority) {
    this.published = published;
    this.clusterMaxPriority = clusterMaxPriority;
  }

  /** Makes {@code next} the tree YARN sees, its ACLs read from {@code c}, its rules those {@link #check} gave. */
  void install(QueueTree next, Configuration c, Map<String, QueueRules> rules) {
    warnIgnoredKeys(next);
    Map<String, SpindleQueue> byPath = new LinkedHashMap<>();
    Map<String, SpindleQueue> before = current.byPath();
    for (QueueConfig q : next.all()) {
      SpindleQueue parent = q.parentPath() == null ? null : byPath.get(q.parentPath());
      // A queue that stays keeps the metrics it has: YARN's registry is one JVM-wide map by queue name, which another
      // scheduler in the JVM may have filled since (the other ResourceManager of an HA pair in a test cluster); the
      // applications already running count into the object they were added with.
      SpindleQueue kept = before.get(q.path());
      QueueMetrics metrics = kept != null && Objects.equals(kept.config().parentPath(), q.parentPath())
          ? kept.getMetrics() : QueueMetrics.forQueue(q.path(), parent, false, c);
      Map<QueueACL, AccessControlList> acls = new HashMap<>();
      boolean root = q.parentPath() == null;
      acls.put(QueueACL.SUBMIT_APPLICATIONS, new AccessControlList(
          c.get(QueueConfigParser.key(q.path(), ACL_SUBMIT), root ? "*" : " ")));
      acls.put(QueueACL.ADMINISTER_QUEUE, new AccessControlList(
          c.get(QueueConfigParser.key(q.path(), ACL_ADMINISTER), root ? "*" : " ")));
      byPath.put(q.path(), new SpindleQueue(q, parent, metrics, acls, this::fractions, rules.get(q.path())));
    }
    current = new Generation(next, Map.copyOf(byPath), c);
  }

  /**
   * The priority rules of the current queues. Built on first use after a reload or a change of the cluster's maximum
   * priority (which YARN's admin refresh sets apart from the queues), so both are always those in force.
   */
  ApplicationPriorities priorities() {
    Generation g = current;
    Priority max = clusterMaxPriority.get();
    ApplicationPriorities p = priorities;
    if (p == null || p.tree() != g.tree() || !p.clusterMax().equals(max)) {
      p = new ApplicationPriorities(g.tree(), g.conf(), max);
      priorities = p;
    }
    return p;
  }

  /** One warning per undeclared queue, naming its keys: what CapacityScheduler ignores silently, shown. */
  private static void warnIgnoredKeys(QueueTree tree) {
    Map<String, List<QueueTree.IgnoredKey>> byQueue = new LinkedHashMap<>();
    tree.ignoredKeys().forEach(k -> byQueue.computeIfAbsent(k.queue(), q -> new ArrayList<>()).add(k));
    byQueue.forEach((queue, keys) -> LOG.warn("Ignoring {} key(s) of queue {}, which no .queues list declares{}: {}",
        keys.size(), queue, keys.get(0).nearest() == null ? "" : " (did you mean " + keys.get(0).nearest() + "?)",
        keys.stream().map(QueueTree.IgnoredKey::key).toList()));
  }

  /**
   * Refuses {@code next}, read from {@code c}, where CapacityScheduler would refuse it beyond what the queue parser
   * checks: a CapacityScheduler key whose value it cannot use, and a queue that leaves the configuration before it
   * is STOPPED (the engine checks that it is empty). Called before anything switches to {@code next}; returns the
   * queues' rules for {@link #install}.
   *
   * @throws IllegalArgumentException naming what is wrong
   */
  Map<String, QueueRules> check(QueueTree next, Configuration c) {
    Map<String, QueueRules> rules = QueueRules.read(next, new CapacitySchedulerConfiguration(c, false));
    for (SpindleQueue q : current.byPath().values()) {
      // A queue created on submission goes as CapacityScheduler removes it (the engine refuses if it is not empty).
      boolean created = current.tree() != null && current.tree().created().contains(q.path());
      if (next.get(q.path()).isEmpty() && q.rules().state() != QueueState.STOPPED && !created) {
        throw new IllegalArgumentException(q.path() + " cannot be deleted from the capacity scheduler configuration, "
            + "as the queue is not yet in stopped state. Current State : " + q.rules().state());
      }
    }
    return rules;
  }

  /**
   * The lifetime, in seconds, an application asking {@code requested} gets in {@code queueName}; an application
   * of a queue that is not a leaf keeps what it asked (it is refused at admission).
   */
  long lifetime(String queueName, long requested) {
    SpindleQueue leaf = leafNamed(queueName);
    return leaf == null ? requested : leaf.rules().lifetimes().grant(requested);
  }

  /**
   * The most the ApplicationMasters of leaf {@code leafPath}'s running applications may hold together: its
   * {@code maximum-am-resource-percent} of the larger of its guarantee in {@code cluster} and its current limit, as
   * CapacityScheduler computes it — what the leaf could hold now, its usage plus what no queue uses, at most its
   * maximum-capacity (from the last published cycle). So an idle cluster starts more AMs than the guarantee alone
   * allows, and a leaf whose maximum is its guarantee never does. None for a queue that is gone.
   */
  Resource amLimit(String leafPath, Resource cluster) {
    SpindleQueue leaf = current.byPath().get(leafPath);
    if (leaf == null) {
      return Resources.none();
    }
    Resource base = Resources.multiply(cluster, leaf.rules().absoluteShare());
    EngineStatus status = published.get();
    QueueSnapshot s = status.queue(leafPath).orElse(null);
    QueueSnapshot root = status.queue(QueueTree.ROOT).orElse(null);
    if (s != null && root != null) {
      ResourceVector idle = root.maximum().minus(root.usage());
      ResourceVector now = s.usage().plus(new ResourceVector(Math.max(0, idle.memoryMb()), Math.max(0, idle.vcores()),
          0)).min(s.maximum());
      base = Resources.componentwiseMax(base, Resource.newInstance(now.memoryMb(), (int) now.vcores()));
    }
    return Resources.multiply(base, Math.max(0, leaf.rules().maxAmShare()));
  }

  /** The queue's maximum application lifetime in seconds; 0 or less: none. */
  long maximumLifetime(String queueName) {
    SpindleQueue leaf = leafNamed(queueName);
    return leaf == null ? -1 : leaf.rules().lifetimes().maximum();
  }

  private SpindleQueue leafNamed(String queueName) {
    Generation g = current;
    return g.tree() == null ? null : g.tree().leaf(queueName).map(q -> g.byPath().get(q.path())).orElse(null);
  }

  /** The tree in force. */
  QueueTree tree() {
    return current.tree();
  }

  /** The configuration the tree in force was loaded from (before any leaf was created on submission). */
  Configuration conf() {
    return current.conf();
  }

  /** The current configuration's keys of undeclared queues (ignored; logged at each load). */
  List<QueueTree.IgnoredKey> ignoredKeys() {
    QueueTree t = current.tree();
    return t == null ? List.of() : t.ignoredKeys();
  }

  int size() {
    return current.byPath().size();
  }

  SpindleQueue root() {
    return current.byPath().get(QueueTree.ROOT);
  }

  /** The leaf queue an application names, or why it cannot go there (the queue is unknown or a parent). */
  Admission leaf(ApplicationId appId, String queueName, String user) {
    Generation g = current;
    Optional<QueueConfig> leaf = g.tree().leaf(queueName);
    if (leaf.isEmpty()) {
      return new Admission.Refused("Spindle: application " + appId + " submitted by user " + user + ": "
          + g.tree().whyNotALeaf(queueName).orElseThrow());
    }
    return new Admission.Admitted(g.byPath().get(leaf.get().path()));
  }

  /** Why {@code user} may not submit to {@code queue}: neither its submit nor its administer ACL admits them. */
  static Optional<String> refusesSubmission(SpindleQueue queue, ApplicationId appId, String user) {
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(user);
    if (queue.hasAccess(QueueACL.SUBMIT_APPLICATIONS, ugi) || queue.hasAccess(QueueACL.ADMINISTER_QUEUE, ugi)) {
      return Optional.empty();
    }
    return Optional.of("User " + user + " does not have permission to submit " + appId + " to queue "
        + queue.path());
  }

  /** Where an application may go: its leaf queue, or why not (the diagnostics YARN shows). */
  sealed interface Admission {
    record Admitted(SpindleQueue queue) implements Admission {}

    record Refused(String reason) implements Admission {}
  }

  /** By full path, or by short name as YARN's CLI gives it (the first queue of that name). */
  SpindleQueue find(String nameOrPath) {
    Map<String, SpindleQueue> q = current.byPath();
    SpindleQueue byPath = q.get(nameOrPath);
    if (byPath != null) {
      return byPath;
    }
    for (SpindleQueue candidate : q.values()) {
      if (candidate.getQueueName().equals(nameOrPath)) {
        return candidate;
      }
    }
    return null;
  }

  QueueInfo info(String queueName, boolean includeChildQueues, boolean recursive) throws IOException {
    SpindleQueue q = find(queueName);
    if (q == null) {
      throw new IOException("Unknown queue: " + queueName);
    }
    return q.getQueueInfo(includeChildQueues, recursive);
  }

  List<QueueUserACLInfo> aclInfo(UserGroupInformation user) {
    return root().getQueueUserAclInfo(user);
  }

  boolean checkAccess(UserGroupInformation user, QueueACL acl, String queueName) {
    SpindleQueue q = find(queueName);
    return q != null && q.hasAccess(acl, user);
  }

  /** The current attempts of the applications in the queue or below it; {@code null} for an unknown queue (YARN's). */
  List<ApplicationAttemptId> appsIn(String queueName,
      Collection<SchedulerApplication<SpindleAppAttempt>> applications) {
    SpindleQueue q = find(queueName);
    if (q == null) {
      return null;
    }
    List<ApplicationAttemptId> out = new ArrayList<>();
    for (SchedulerApplication<SpindleAppAttempt> app : applications) {
      String path = ((SpindleQueue) app.getQueue()).path();
      if ((path.equals(q.path()) || path.startsWith(q.path() + ".")) && app.getCurrentAppAttempt() != null) {
        out.add(app.getCurrentAppAttempt().getApplicationAttemptId());
      }
    }
    return out;
  }

  /**
   * Before any node has registered (or when the engine has not published yet) the shares the configuration gives, as
   * CapacityScheduler shows them; a share given in absolute resources has no fraction without a cluster.
   */
  private SpindleQueue.Fractions configured(String path) {
    QueueConfig q = current.tree() == null ? null : current.tree().get(path).orElse(null);
    if (q == null) {
      return SpindleQueue.Fractions.NONE;
    }
    return new SpindleQueue.Fractions(fraction(q.capacity(), 0), 0, fraction(q.maximumCapacity(), 1));
  }

  private static float fraction(Capacity c, float absolute) {
    if (c instanceof Capacity.Percent p) {
      return (float) (p.percent() / 100);
    }
    return c instanceof Capacity.Weight w ? (float) (w.percent() / 100) : absolute;
  }

  private SpindleQueue.Fractions fractions(String path) {
    EngineStatus status = published.get();
    QueueSnapshot s = status.queue(path).orElse(null);
    QueueSnapshot parent = status.queue(path.contains(".") ? path.substring(0, path.lastIndexOf('.')) : path)
        .orElse(null);
    QueueSnapshot root = status.queue(QueueTree.ROOT).orElse(null);
    if (s == null || parent == null || root == null || root.guarantee().equals(ResourceVector.ZERO)) {
      return configured(path);
    }
    ResourceVector cluster = root.guarantee();
    double parentGuarantee = Math.max(1e-9, parent.guarantee().dominantShare(cluster));
    double parentMax = Math.max(1e-9, parent.maximum().dominantShare(cluster));
    double guarantee = s.guarantee().dominantShare(cluster);
    return new SpindleQueue.Fractions((float) (guarantee / parentGuarantee),
        (float) (guarantee > 0 ? s.usage().dominantShare(cluster) / guarantee : 0),
        (float) (s.maximum().dominantShare(cluster) / parentMax));
  }
}
