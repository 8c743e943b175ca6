package io.spindle.yarn;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueConfigException;
import io.spindle.core.queue.QueueTree;
import org.apache.hadoop.security.Groups;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.placement.ApplicationPlacementContext;
import org.apache.hadoop.yarn.server.resourcemanager.placement.PlacementRule;
import org.apache.hadoop.yarn.server.resourcemanager.placement.VariableContext;
import org.apache.hadoop.yarn.server.resourcemanager.placement.csmappingrule.MappingRule;
import org.apache.hadoop.yarn.server.resourcemanager.placement.csmappingrule.MappingRuleResult;
import org.apache.hadoop.yarn.server.resourcemanager.placement.csmappingrule.MappingRuleResultType;
import org.apache.hadoop.yarn.server.resourcemanager.placement.csmappingrule.MappingRuleValidationContext;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacitySchedulerConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CapacityScheduler's queue mappings ({@code yarn.scheduler.capacity.queue-mappings}: {@code u:alice:research},
 * {@code g:ml:ml}, {@code u:%user:root.users.%user}, {@code u:%user:%primary_group}, and the JSON mapping rules), as
 * the ResourceManager's placement rule under Spindle. CapacityScheduler's own rule class works only inside
 * CapacityScheduler (it reads CapacityScheduler's queue objects); this one parses and evaluates the rules with
 * Hadoop's own mapping-rule classes, so the syntax, the variables and the fallbacks are CapacityScheduler's, and
 * checks their targets against Spindle's queue tree the way CapacityScheduler checks them against its queues.
 *
 * <p>As in CapacityScheduler the rules decide only for an application submitted to {@code default} (or to no
 * queue), unless {@code queue-mappings-override.enable} lets them override what the user named. A rule whose target
 * does not exist falls back as the rule says (by default to the next rule); a target under a queue that creates
 * queues ({@code auto-create-child-queue.enabled}, {@code auto-queue-creation-v2.enabled}) is created on submission
 * (see {@link AppLifecycle}).
 */
final class QueuePlacement extends PlacementRule {

  private static final Logger LOG = LoggerFactory.getLogger(QueuePlacement.class);
  private static final Set<String> IMMUTABLE =
      Set.of("%user", "%primary_group", "%secondary_group", "%application", "%specified");
  private static final String GROUPS = "groups";

  private final List<MappingRule> rules;
  private final boolean override;
  private final Supplier<QueueTree> tree;
  private final Groups groups;

  private QueuePlacement(List<MappingRule> rules, boolean override, Supplier<QueueTree> tree, Groups groups) {
    this.rules = List.copyOf(rules);
    this.override = override;
    this.tree = tree;
    this.groups = groups;
  }

  /**
   * The placement rule of {@code cs}, checked against {@code next} (the tree it comes with) as CapacityScheduler
   * checks it at start-up and on refresh; empty when the configuration has no mappings.
   *
   * @param tree the tree in force when an application is placed
   * @throws QueueConfigException naming the mapping key when a rule cannot be read or can never place anything
   */
  static Optional<QueuePlacement> read(CapacitySchedulerConfiguration cs, QueueTree next, Supplier<QueueTree> tree) {
    List<MappingRule> rules;
    try {
      rules = cs.getMappingRules();
    } catch (IOException | RuntimeException e) {
      throw new QueueConfigException(mappingKey(cs), String.valueOf(e.getMessage()));
    }
    TreeValidation validation = new TreeValidation(next);
    for (MappingRule rule : rules) {
      try {
        rule.validate(validation);
      } catch (YarnException e) {
        throw new QueueConfigException(mappingKey(cs), "rule '" + rule + "': " + e.getMessage());
      }
    }
    if (rules.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new QueuePlacement(rules, cs.getOverrideWithQueueMappings(), tree,
        Groups.getUserToGroupsMappingService(cs)));
  }

  private static String mappingKey(CapacitySchedulerConfiguration cs) {
    return CapacitySchedulerConfiguration.MAPPING_RULE_FORMAT_JSON.equals(
        cs.get(CapacitySchedulerConfiguration.MAPPING_RULE_FORMAT)) ? CapacitySchedulerConfiguration.MAPPING_RULE_JSON
        : CapacitySchedulerConfiguration.QUEUE_MAPPING;
  }

  int size() {
    return rules.size();
  }

  @Override
  public boolean initialize(ResourceScheduler scheduler) {
    return true;
  }

  @Override
  public ApplicationPlacementContext getPlacementForApp(ApplicationSubmissionContext asc, String user)
      throws YarnException {
    String asked = asc.getQueue();
    if (asked != null && !asked.equals(YarnConfiguration.DEFAULT_QUEUE_NAME)
        && !asked.equals(YarnConfiguration.DEFAULT_QUEUE_FULL_NAME) && !override) {
      return null; // The user named a queue and the mappings may not override it.
    }
    QueueTree t = tree.get();
    VariableContext variables = variables(asc, user, t);
    for (MappingRule rule : rules) {
      MappingRuleResult result = rule.evaluate(variables);
      if (result.getResult() == MappingRuleResultType.PLACE) {
        try {
          result.updateNormalizedQueue(normalize(t, result.getQueue(), result.isCreateAllowed()));
        } catch (YarnException e) {
          LOG.info("Cannot place {} in queue '{}' returned by mapping rule {}: {}", asc.getApplicationId(),
              result.getQueue(), rule, e.getMessage());
          result = rule.getFallback();
        }
      }
      switch (result.getResult()) {
        case PLACE:
          LOG.debug("Application {} placed in {} by rule {}", asc.getApplicationId(), result.getNormalizedQueue(), rule);
          return context(result.getNormalizedQueue());
        case PLACE_TO_DEFAULT:
          try {
            return context(normalize(t, variables.replacePathVariables("%default"), false));
          } catch (YarnException e) {
            LOG.info("Rejecting {}: the fallback of mapping rule {} names {}: {}", asc.getApplicationId(), rule,
                "%default", e.getMessage());
            throw rejected();
          }
        case REJECT:
          LOG.info("Rejecting {}: the fallback of mapping rule {} is REJECT", asc.getApplicationId(), rule);
          throw rejected();
        default:
          break; // SKIP: the next rule.
      }
    }
    return null;
  }

  /** CapacityScheduler's words; the details stay in the RM's log, as there (they are the admin's configuration). */
  private static YarnException rejected() {
    return new YarnException("Application submission have been rejected by a mapping rule. Please see the logs for "
        + "details");
  }

  private VariableContext variables(ApplicationSubmissionContext asc, String user, QueueTree t) {
    VariableContext v = new VariableContext();
    String cleanUser = cleanName(user);
    v.put("%user", cleanUser);
    if (!cleanUser.equals(user)) {
      v.putOriginal("%user", user);
    }
    v.put("%specified", asc.getQueue());
    v.put("%application", asc.getApplicationName());
    v.put("%default", YarnConfiguration.DEFAULT_QUEUE_FULL_NAME);
    v.put("%primary_group", "");
    v.put("%secondary_group", "");
    try {
      Set<String> all = groups.getGroupsSet(user);
      if (!all.isEmpty()) {
        v.putExtraDataset(GROUPS, all);
        Iterator<String> it = all.iterator();
        v.put("%primary_group", cleanName(it.next()));
        while (it.hasNext()) { // The first secondary group that names a queue, as CapacityScheduler's rule.
          String g = cleanName(it.next());
          if (!(t.lookup(g) instanceof QueueTree.Lookup.Unknown)) {
            v.put("%secondary_group", g);
            break;
          }
        }
      }
    } catch (IOException e) {
      LOG.warn("No groups for user {}: {}", user, e.getMessage());
    }
    v.setImmutables(IMMUTABLE);
    return v;
  }

  /** A user or group name as a queue name: CapacityScheduler writes its dots as {@code _dot_}. */
  private static String cleanName(String name) {
    return name.contains(".") ? name.replace(".", "_dot_") : name;
  }

  private static ApplicationPlacementContext context(String path) {
    int dot = path.lastIndexOf('.');
    return dot < 0 ? new ApplicationPlacementContext(path)
        : new ApplicationPlacementContext(path.substring(dot + 1), path.substring(0, dot));
  }

  /**
   * The full path of the leaf {@code queue} (a short name, a path with a parent given by short name or in full)
   * names, or why it names none; a leaf that does not exist yet under a queue that creates them is its path.
   */
  static String normalize(QueueTree t, String queue, boolean allowCreate) throws YarnException {
    int dot = queue == null ? -1 : queue.lastIndexOf('.');
    if (queue == null || queue.isEmpty()) {
      throw new YarnException("Mapping rule did not specify a target queue.");
    }
    if (dot < 0) {
      QueueTree.Lookup l = t.lookup(queue);
      if (l instanceof QueueTree.Lookup.Leaf leaf) {
        return leaf.queue().path();
      }
      throw new YarnException(l instanceof QueueTree.Lookup.Ambiguous ? "Queue '" + queue + "' specified in mapping "
          + "rule is ambiguous" : l instanceof QueueTree.Lookup.Parent ? "Mapping rule returned a non-leaf queue '"
          + queue + "', cannot place application in it." : "Queue '" + queue + "' specified in mapping rule does not "
          + "exist.");
    }
    String parentName = queue.substring(0, dot);
    String leaf = queue.substring(dot + 1);
    QueueTree.Lookup p = t.lookup(parentName);
    if (p instanceof QueueTree.Lookup.Unknown && parentName.startsWith(QueueTree.ROOT + ".")
        && t.createsBelow(queue)) {
      // Parents missing below a flexible queue are created with the leaf (QueueTree.creation).
      if (!allowCreate) {
        throw new YarnException("Queue '" + queue + "' does not exist and the mapping rule does not create queues.");
      }
      return queue;
    }
    if (!(p instanceof QueueTree.Lookup.Parent) && !(p instanceof QueueTree.Lookup.Leaf)) {
      throw new YarnException("Mapping rule specified a parent queue '" + parentName + "', but it "
          + (p instanceof QueueTree.Lookup.Ambiguous ? "is ambiguous." : "does not exist."));
    }
    QueueConfig parent = p instanceof QueueTree.Lookup.Parent pp ? pp.queue() : ((QueueTree.Lookup.Leaf) p).queue();
    String path = parent.path() + "." + leaf;
    QueueTree.Lookup target = t.lookup(path);
    if (target instanceof QueueTree.Lookup.Leaf) {
      return path;
    }
    if (target instanceof QueueTree.Lookup.Parent) {
      throw new YarnException("Mapping rule returned a non-leaf queue '" + path + "', cannot place application in it.");
    }
    if (t.autoCreation(parent.path()).isEmpty()) {
      throw new YarnException("Mapping rule specified a parent queue '" + parentName + "', but it is not a managed "
          + "parent queue, and no queue exists with name '" + leaf + "' under it.");
    }
    if (!allowCreate) {
      throw new YarnException("Queue '" + path + "' does not exist and the mapping rule does not create queues.");
    }
    return path;
  }

  /** CapacityScheduler's start-up check of a rule's target, against Spindle's tree. */
  private static final class TreeValidation implements MappingRuleValidationContext {
    private final QueueTree tree;
    private final Set<String> variables = new HashSet<>();

    TreeValidation(QueueTree tree) {
      this.tree = tree;
      variables.addAll(IMMUTABLE);
      variables.add("%default");
    }

    @Override
    public boolean validateQueuePath(String queuePath) throws YarnException {
      if (queuePath == null || queuePath.isEmpty()) {
        throw new YarnException("Queue path is empty.");
      }
      if (isPathStatic(queuePath)) {
        normalize(tree, queuePath, true);
        return true;
      }
      // A path with variables: only its static head can be checked, which must be a queue that can hold queues.
      List<String> head = new ArrayList<>();
      for (String part : queuePath.split("\\.")) {
        if (!isPathStatic(part)) {
          break;
        }
        head.add(part);
      }
      if (head.isEmpty()) {
        return true;
      }
      QueueTree.Lookup l = tree.lookup(String.join(".", head));
      if (l instanceof QueueTree.Lookup.Leaf leaf && tree.autoCreation(leaf.queue().path()).isEmpty()) {
        throw new YarnException("Queue path '" + queuePath + "' is invalid because '" + leaf.queue().path()
            + "' is a leaf queue, which can have no other queues under it.");
      }
      if (l instanceof QueueTree.Lookup.Ambiguous) {
        throw new YarnException("No eligible parent found on path '" + queuePath + "'.");
      }
      if (l instanceof QueueTree.Lookup.Unknown && !(head.size() > 1
          && tree.lookup(String.join(".", head.subList(0, head.size() - 1))) instanceof QueueTree.Lookup.Parent p
          && tree.autoCreation(p.queue().path()).isPresent())) {
        // As CapacityScheduler: a head that does not exist is valid under a parent that creates queues, which
        // creates it as a parent on submission (flexible creation; a legacy managed parent refuses it then).
        throw new YarnException("No eligible parent found on path '" + queuePath + "'.");
      }
      return true;
    }

    @Override
    public boolean isPathStatic(String queuePath) throws YarnException {
      for (String part : queuePath.split("\\.", -1)) {
        if (part.isEmpty()) {
          throw new YarnException("Path segment cannot be empty '" + queuePath + "'.");
        }
        if (variables.contains(part)) {
          return false;
        }
      }
      return true;
    }

    @Override
    public void addVariable(String variable) throws YarnException {
      if (IMMUTABLE.contains(variable)) {
        throw new YarnException("Variable '" + variable + "' is immutable cannot add to the modified variable list.");
      }
      variables.add(variable);
    }

    @Override
    public void addImmutableVariable(String variable) {
      variables.add(variable);
    }

    @Override
    public Set<String> getVariables() {
      return Set.copyOf(variables);
    }
  }
}
