package io.spindle.yarn;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueTree;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.AppPriorityACLGroup;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacitySchedulerConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.QueuePath;
import org.apache.hadoop.yarn.server.resourcemanager.security.AppPriorityACLsManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Application priorities as CapacityScheduler gives them: the priority asked for, else the user's default from the
 * queue's {@code acl_application_max_priority}, else the queue's {@code default-application-priority}; capped at
 * {@code yarn.cluster.max-application-priority}; refused when the queue's priority ACL does not let the user ask for
 * it. The keys are read by CapacityScheduler's own configuration class and checked by YARN's own ACL manager, so a
 * file means here what it means there. One instance per queue configuration; replaced whole on reload.
 */
final class ApplicationPriorities {

  private static final Logger LOG = LoggerFactory.getLogger(ApplicationPriorities.class);

  private final QueueTree tree;
  private final Priority clusterMax;
  private final AppPriorityACLsManager acls;
  private final Map<String, Priority> queueDefaults = new HashMap<>();

  ApplicationPriorities(QueueTree tree, Configuration conf, Priority clusterMax) {
    this.tree = tree;
    this.clusterMax = clusterMax;
    this.acls = new AppPriorityACLsManager(conf);
    CapacitySchedulerConfiguration cs = new CapacitySchedulerConfiguration(conf, false);
    for (QueueConfig leaf : tree.leaves()) {
      QueuePath path = new QueuePath(leaf.path());
      Integer dflt = cs.getDefaultApplicationPriorityConfPerQueue(path);
      queueDefaults.put(leaf.path(), Priority.newInstance(dflt == null ? 0 : dflt));
      List<AppPriorityACLGroup> groups = cs.getPriorityAcls(path, clusterMax);
      if (!groups.isEmpty()) {
        acls.addPrioirityACLs(groups, leaf.path());
      }
    }
  }

  QueueTree tree() {
    return tree;
  }

  Priority clusterMax() {
    return clusterMax;
  }

  /**
   * The priority an application of {@code user} in {@code queueName} (a leaf by name or path) runs at, asked for
   * {@code requested} ({@code null}: none asked). An unknown queue gives the defaults: the submission is refused
   * later, with the queue's own message.
   */
  Priority check(Priority requested, UserGroupInformation user, String queueName, ApplicationId app)
      throws YarnException {
    String queue = tree.leaf(queueName).map(QueueConfig::path).orElse(queueName);
    Priority p = requested;
    if (p == null) {
      p = Optional.ofNullable(acls.getDefaultPriority(queue, user))
          .orElseGet(() -> queueDefaults.getOrDefault(queue, Priority.newInstance(0)));
      LOG.info("Application '{}' is submitted without priority hence considering default queue/cluster priority: {}",
          app, p.getPriority());
    }
    if (p.getPriority() > clusterMax.getPriority()) {
      p = Priority.newInstance(clusterMax.getPriority());
    }
    if (!acls.checkAccess(user, queue, p)) {
      throw new YarnException(new AccessControlException("User " + user + " does not have permission to "
          + "submit/update " + app + " for " + p));
    }
    return p;
  }
}
