package io.spindle.yarn;

import io.spindle.core.queue.QueueConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;

/**
 * One queue as YARN sees it: name, metrics, ACLs and the figures {@code yarn queue -status} prints. Spindle's own
 * accounting lives in the core engine; this class is the RM-facing view of one queue of the tree.
 */
final class SpindleQueue implements Queue {

  /** A view of the engine's figures for a queue, as fractions YARN's QueueInfo wants. */
  interface Figures {
    Fractions of(String path);
  }

  /**
   * A queue's figures as {@code yarn queue -status} prints them.
   *
   * @param capacity the guarantee relative to the parent's
   * @param usedCapacity current use relative to the guarantee
   * @param maximumCapacity the maximum relative to the parent's
   */
  record Fractions(float capacity, float usedCapacity, float maximumCapacity) {
    static final Fractions NONE = new Fractions(0, 0, 0);
  }

  private final QueueConfig config;
  private final SpindleQueue parent;
  private final List<SpindleQueue> children = new ArrayList<>();
  private final QueueMetrics metrics;
  private final ActiveUsersManager users;
  private final Map<QueueACL, AccessControlList> acls;
  private final Figures figures;
  private final QueueRules rules;

  SpindleQueue(QueueConfig config, SpindleQueue parent, QueueMetrics metrics, Map<QueueACL, AccessControlList> acls,
      Figures figures, QueueRules rules) {
    this.config = config;
    this.rules = rules;
    this.parent = parent;
    this.metrics = metrics;
    this.users = new ActiveUsersManager(metrics);
    this.acls = Map.copyOf(acls);
    this.figures = figures;
    if (parent != null) {
      parent.children.add(this);
    }
  }

  String path() {
    return config.path();
  }

  QueueConfig config() {
    return config;
  }

  boolean isLeaf() {
    return config.isLeaf();
  }

  QueueRules rules() {
    return rules;
  }

  @Override
  public String getQueueName() {
    return config.name();
  }

  public String getQueuePath() {
    return config.path();
  }

  @Override
  public QueueMetrics getMetrics() {
    return metrics;
  }

  @Override
  public QueueInfo getQueueInfo(boolean includeChildQueues, boolean recursive) {
    Fractions f = figures.of(config.path());
    List<QueueInfo> childInfos = new ArrayList<>();
    if (includeChildQueues) {
      for (SpindleQueue c : children) {
        childInfos.add(c.getQueueInfo(recursive, recursive));
      }
    }
    return QueueInfo.newInstance(config.name(), config.path(), f.capacity(), f.maximumCapacity(),
        f.usedCapacity(), childInfos,
        Collections.emptyList(), rules.state(), rules.accessibleLabels(), rules.defaultLabelExpression(), null,
        false, (float) config.weight(), -1);
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo(UserGroupInformation user) {
    List<QueueUserACLInfo> out = new ArrayList<>();
    List<QueueACL> allowed = new ArrayList<>();
    for (QueueACL acl : QueueACL.values()) {
      if (hasAccess(acl, user)) {
        allowed.add(acl);
      }
    }
    out.add(QueueUserACLInfo.newInstance(config.path(), allowed));
    for (SpindleQueue c : children) {
      out.addAll(c.getQueueUserAclInfo(user));
    }
    return out;
  }

  /** CapacityScheduler's rule: allowed if this queue's ACL or any ancestor's admits the user. */
  @Override
  public boolean hasAccess(QueueACL acl, UserGroupInformation user) {
    for (SpindleQueue q = this; q != null; q = q.parent) {
      AccessControlList list = q.acls.get(acl);
      if (list != null && list.isUserAllowed(user)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public AbstractUsersManager getAbstractUsersManager() {
    return users;
  }

  @Override
  public void recoverContainer(Resource clusterResource, SchedulerApplicationAttempt attempt,
      RMContainer rmContainer) {
    // Recovered containers are accounted by the engine when their node re-registers (see SpindleScheduler).
  }

  @Override
  public Set<String> getAccessibleNodeLabels() {
    return rules.accessibleLabels();
  }

  @Override
  public String getDefaultNodeLabelExpression() {
    return rules.defaultLabelExpression();
  }

  // Pending demand is the engine's to account (it knows gangs and MIG charges); YARN's pending gauges stay untouched.
  @Override
  public void incPendingResource(String nodeLabel, Resource resourceToInc) {
  }

  @Override
  public void decPendingResource(String nodeLabel, Resource resourceToDec) {
  }

  @Override
  public Priority getDefaultApplicationPriority() {
    return Priority.newInstance(0);
  }

  @Override
  public void incReservedResource(String partition, Resource reservedRes) {
  }

  @Override
  public void decReservedResource(String partition, Resource reservedRes) {
  }
}
