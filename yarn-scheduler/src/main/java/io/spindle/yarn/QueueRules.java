package io.spindle.yarn;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import io.spindle.core.queue.Capacity;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueConfigException;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacitySchedulerConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.QueuePath;

/**
 * What CapacityScheduler checks at a leaf queue's door before it takes an application: the queue is RUNNING (a
 * queue is STOPPED by its own {@code state} key or a stopped ancestor's; a stopped queue drains: what runs there
 * keeps running), and it and the submitting user have fewer applications than {@code maximum-applications} allows.
 * Read with CapacityScheduler's own configuration class, so defaults and inheritance are CapacityScheduler's;
 * refusals carry CapacityScheduler's wording, which YARN users and their scripts know.
 *
 * @param state the queue's own {@code state} or STOPPED under a stopped ancestor; decides whether a refresh may
 *     delete the queue
 * @param absoluteShare the queue's guarantee as a share of the cluster (a queue given in absolute resources counts as
 *     its whole parent)
 * @param maxAmShare {@code maximum-am-resource-percent}, as CapacityScheduler reads it (a fraction, 0.1 by default)
 * @param accessibleLabels {@code accessible-node-labels}, inherited from the parent where unset ({@code *}, every
 *     label, at root): the partitions the queue's applications may ask for, which the RM checks each request against
 * @param defaultLabelExpression {@code default-node-label-expression}, inherited likewise; {@code null}: none, the
 *     default partition
 */
record QueueRules(QueueState state, int maxApplications, int maxApplicationsPerUser, Lifetimes lifetimes,
    double absoluteShare, float maxAmShare, Set<String> accessibleLabels, String defaultLabelExpression) {

  /**
   * CapacityScheduler's application lifetimes of a queue, in seconds ({@code maximum-application-lifetime},
   * {@code default-application-lifetime}): each inherited from the parent where the queue sets none (a negative
   * value); {@code maximum} 0 or less means none; {@code defaultSpecified}: some queue on the path set a default.
   */
  record Lifetimes(long maximum, long dflt, boolean defaultSpecified) {
    static final Lifetimes NONE = new Lifetimes(-1, -1, false);

    /** The lifetime an application asking {@code requested} seconds (0 or less: none) gets, as CapacityScheduler. */
    long grant(long requested) {
      if (maximum <= 0) {
        return requested <= 0 ? dflt : requested;
      }
      return requested <= 0 ? dflt : Math.min(requested, maximum);
    }

    static Lifetimes read(QueueConfig q, QueuePath path, Lifetimes parent, CapacitySchedulerConfiguration cs) {
      long ownMax = cs.getMaximumLifetimePerQueue(path);
      long ownDefault = cs.getDefaultLifetimePerQueue(path);
      if (parent == null) {
        return new Lifetimes(ownMax, ownDefault, ownDefault >= 0);
      }
      long max = ownMax >= 0 ? ownMax : parent.maximum(); // 0 here overrides a parent's maximum: none.
      boolean specified = ownDefault >= 0 || parent.defaultSpecified();
      long dflt = ownDefault >= 0 ? ownDefault : specified ? Math.min(parent.dflt(), max) : max;
      if (max > 0 && dflt > max) {
        throw new QueueConfigException(QueueConfigParser.key(q.path(), "default-application-lifetime"),
            "Default lifetime " + dflt + " can't exceed maximum lifetime " + max);
      }
      return new Lifetimes(max, dflt <= 0 ? max : dflt, specified);
    }
  }

  /** The rules of every queue of {@code tree}, by path. */
  static Map<String, QueueRules> read(QueueTree tree, CapacitySchedulerConfiguration cs) {
    Map<String, QueueRules> out = new LinkedHashMap<>();
    Map<String, Double> absolute = new LinkedHashMap<>();
    for (QueueConfig q : tree.all()) {
      QueuePath path = new QueuePath(q.path());
      QueueRules parent = q.parentPath() == null ? null : out.get(q.parentPath());
      QueueState state = parent != null && parent.state() == QueueState.STOPPED ? QueueState.STOPPED
          : cs.getState(path);
      double share = q.parentPath() == null ? 1 : absolute.get(q.parentPath()) * shareOfParent(q.capacity());
      absolute.put(q.path(), share);
      int max = cs.getMaximumApplicationsPerQueue(path);
      if (max < 0) {
        int global = cs.getGlobalMaximumApplicationsPerQueue();
        max = global > 0 ? global : (int) (cs.getMaximumSystemApplications() * share);
      }
      float ulf = cs.getUserLimitFactor(path);
      int perUser = ulf == -1 ? max
          : Math.min(max, (int) (max * (cs.getUserLimit(path) / 100.0f) * ulf));
      checkOrderingPolicy(q, path, cs);
      checkWhole(q, "max-parallel-apps", () -> cs.getMaxParallelAppsForQueue(path));
      Lifetimes lifetimes = Lifetimes.read(q, path, parent == null ? null : parent.lifetimes(), cs);
      Set<String> labels = q.labels().access(parent == null ? null : parent.accessibleLabels());
      String ownDefault = cs.getDefaultNodeLabelExpression(path);
      String defaultLabel = ownDefault != null ? ownDefault : parent == null ? null : parent.defaultLabelExpression();
      out.put(q.path(), new QueueRules(state, max, perUser, lifetimes, share,
          cs.getMaximumApplicationMasterResourcePerQueuePercent(path), labels, defaultLabel));
    }
    return out;
  }

  /** Refuses a whole-number key CapacityScheduler would fail to read at start-up (it parses it then). */
  private static void checkWhole(QueueConfig q, String suffix, java.util.function.Supplier<Integer> read) {
    try {
      read.get();
    } catch (NumberFormatException e) {
      throw new QueueConfigException(QueueConfigParser.key(q.path(), suffix), "not a whole number: "
          + e.getMessage());
    }
  }

  /**
   * Refuses an {@code ordering-policy} CapacityScheduler cannot build, by building it with CapacityScheduler's own
   * code: an application policy ({@code fifo}, {@code fair}, …, or a class) for a leaf, a queue policy
   * ({@code utilization}, {@code priority-utilization}, or a class) for a parent — and for a leaf with legacy
   * {@code auto-create-child-queue.enabled}, which CapacityScheduler makes the parent of the queues it creates.
   */
  private static void checkOrderingPolicy(QueueConfig q, QueuePath path, CapacitySchedulerConfiguration cs) {
    try {
      if (q.isLeaf() && !cs.isAutoCreateChildQueueEnabled(path)) {
        cs.getAppOrderingPolicy(path);
      } else {
        cs.getQueueOrderingPolicy(path, CapacitySchedulerConfiguration.QUEUE_UTILIZATION_ORDERING_POLICY);
      }
    } catch (RuntimeException e) {
      throw new QueueConfigException(QueueConfigParser.key(q.path(), "ordering-policy"), e.getMessage()
          + (q.isLeaf() && cs.isAutoCreateChildQueueEnabled(path) ? " (with auto-create-child-queue.enabled the "
              + "queue is a parent of auto-created queues, which takes a queue ordering policy)" : ""));
    }
  }

  /**
   * A queue given in absolute resources has no fixed fraction of the cluster; CapacityScheduler derives one from the
   * cluster's size at the time. Here it counts as the whole parent, so the system-wide limit bounds it.
   */
  private static double shareOfParent(Capacity c) {
    if (c instanceof Capacity.Percent p) {
      return p.percent() / 100;
    } else if (c instanceof Capacity.Weight w) {
      return w.percent() / 100;
    }
    return 1;
  }

  /** Why {@code app} of {@code user} may not enter the queue now, as CapacityScheduler words it; empty if it may. */
  Optional<String> refuses(String queuePath, ApplicationId app, String user,
      Collection<SchedulerApplication<SpindleAppAttempt>> applications) {
    if (state != QueueState.RUNNING) {
      return refusal("Queue " + queuePath + " is STOPPED. Cannot accept submission of application: " + app);
    }
    int inQueue = 0;
    int ofUser = 0;
    for (SchedulerApplication<SpindleAppAttempt> a : applications) {
      if (((SpindleQueue) a.getQueue()).path().equals(queuePath)) {
        inQueue++;
        if (a.getUser().equals(user)) {
          ofUser++;
        }
      }
    }
    if (inQueue >= maxApplications) {
      return refusal("Queue " + queuePath + " already has " + inQueue + " applications, cannot accept submission of "
          + "application: " + app);
    }
    if (ofUser >= maxApplicationsPerUser) {
      return refusal("Queue " + queuePath + " already has " + ofUser + " applications from user " + user
          + " cannot accept submission of application: " + app);
    }
    return Optional.empty();
  }

  /** CapacityScheduler rejects with the exception's text, class name included: the diagnostics read the same. */
  private static Optional<String> refusal(String message) {
    return Optional.of(new AccessControlException(message).toString());
  }
}
