package io.spindle.yarn;

import io.spindle.core.engine.EngineStatus;
import io.spindle.core.engine.QueueSnapshot;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
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
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;

/**
 * The queue tree as YARN sees it: one {@link SpindleQueue} per queue with its metrics and ACLs, who may submit where,
 * and the figures {@code yarn queue -status} prints, read from the engine's published status (never the live engine).
 * Replaced whole on each configuration load; readers see one tree or the next, never a mix.
 */
final class QueueRegistry {

  static final String ACL_SUBMIT = "acl_submit_applications";
  static final String ACL_ADMINISTER = "acl_administer_queue";

  /** One consistent generation: the parsed tree and its YARN queues by path. */
  private record Generation(QueueTree tree, Map<String, SpindleQueue> byPath) {}

  private final Supplier<EngineStatus> published;
  private volatile Generation current = new Generation(null, Map.of());

  QueueRegistry(Supplier<EngineStatus> published) {
    this.published = published;
  }

  /** Makes {@code next} the tree YARN sees, its ACLs read from {@code c}. */
  void install(QueueTree next, Configuration c) {
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
      byPath.put(q.path(), new SpindleQueue(q, parent, metrics, acls, this::fractions));
    }
    current = new Generation(next, Map.copyOf(byPath));
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
      return new Admission.Refused(g.tree().get(queueName).isPresent()
          ? "Spindle: queue '" + queueName + "' is a parent queue; submit to a leaf queue: " + leafNames(g.tree())
          : "Spindle: application " + appId + " submitted by user " + user + " to unknown queue '" + queueName
              + "'; leaf queues: " + leafNames(g.tree()));
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

  private static List<String> leafNames(QueueTree t) {
    return t.leaves().stream().map(QueueConfig::path).toList();
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

  private SpindleQueue.Fractions fractions(String path) {
    EngineStatus status = published.get();
    QueueSnapshot s = status.queue(path).orElse(null);
    QueueSnapshot parent = status.queue(path.contains(".") ? path.substring(0, path.lastIndexOf('.')) : path)
        .orElse(null);
    QueueSnapshot root = status.queue(QueueTree.ROOT).orElse(null);
    if (s == null || parent == null || root == null) {
      return SpindleQueue.Fractions.NONE;
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
